// What a person sees before deciding: for a file write, a unified diff of the current content
// against the new one with the sha256 of the current content (the approval binds to it); for a
// shell command, the parsed command with its cwd; otherwise the arguments, pretty-printed.

import { createHash } from 'node:crypto';

import type { RiskAssessment, SimpleCommand } from '@finger/shell-risk';

import type { ResolvedPaths } from '../sandbox/path-sandbox.js';
import type { Preview } from './evaluation.js';
import { unifiedDiff } from './unified-diff.js';

/** Reads a file's current bytes; null when it does not exist. Throws for other failures. */
export type ReadFile = (path: string) => Uint8Array | null;

/** Above this size (either side) the diff is not computed; the hash still is. */
export const MAX_DIFF_BYTES = 1024 * 1024;
const MAX_ARGS_PREVIEW = 64 * 1024;
/** Of those, the characters taken from the end of a longer preview. */
const ARGS_TAIL = 8 * 1024;
const DELETE_VERB = /(?:^|[._-])(?:delete|remove|rm|unlink|rmdir)(?:[._-]|$)/i;

function isBinary(b: Uint8Array): boolean {
  const n = Math.min(b.length, 8192);
  for (let i = 0; i < n; i++) if (b[i] === 0) return true;
  return false;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function shellWord(w: string): string {
  if (/^[A-Za-z0-9_./=:@%+,~-]+$/.test(w)) return w;
  // a line break inside a word would start a line of its own in the preview: $'…' shows it escaped
  if (/[\n\r]/.test(w))
    return `$'${w.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

/** Most characters of `stdin` shown: the head and the tail (where a payload hides after padding). */
const STDIN_HEAD = 2000;
const STDIN_TAIL = 1000;

/** `text` as indented lines under a heading: no line of it can pass for one of the preview's own. */
function block(text: string): string[] {
  const shown =
    text.length > STDIN_HEAD + STDIN_TAIL
      ? `${text.slice(0, STDIN_HEAD)}\n… [${text.length - STDIN_HEAD - STDIN_TAIL} characters not shown] …\n${text.slice(-STDIN_TAIL)}`
      : text;
  return shown.split(/\r\n|\r|\n/).map((l) => `  | ${l}`);
}

function segmentLine(seg: SimpleCommand, i: number): string {
  const words = seg.argv.map(shellWord).join(' ');
  const redirs = seg.redirects.map((r) => ` ${r.op} ${shellWord(r.target)}`).join('');
  const via = seg.via.length > 0 ? `   [via ${seg.via.join(' › ')}]` : '';
  return `  ${i + 1}. ${words}${redirs}${via}`;
}

/** The parsed command with its cwd (the APPROVE preview of an exec). */
export function commandPreview(
  args: Record<string, unknown>,
  assessment: RiskAssessment,
  cwd: string | undefined,
): Preview {
  const shown =
    typeof args.command === 'string'
      ? args.command
      : Array.isArray(args.argv)
        ? (args.argv as string[]).map(shellWord).join(' ')
        : '';
  // a command of several lines shows each under the first, marked: none can pass for a preview line
  const [first = '', ...rest] = shown.split(/\r\n|\r|\n/);
  const lines = [`$ ${first}`, ...rest.map((l) => `> ${l}`)];
  if (typeof args.env === 'object' && args.env !== null)
    for (const [k, v] of Object.entries(args.env as Record<string, unknown>))
      lines.push(`env: ${k}=${typeof v === 'string' ? shellWord(v) : JSON.stringify(v)}`);
  if (typeof args.stdin === 'string' && args.stdin !== '')
    lines.push(`stdin (${Buffer.byteLength(args.stdin)} bytes):`, ...block(args.stdin));
  lines.push(`cwd: ${cwd ?? '(the first workspace root)'}`, 'runs:');
  assessment.model.segments.forEach((s, i) => lines.push(segmentLine(s, i)));
  if (assessment.model.unparseable !== undefined) lines.push(`NOT FULLY PARSED: ${assessment.model.unparseable}`);
  lines.push(`risk: ${assessment.level}${assessment.reasons.length > 0 ? ` — ${assessment.reasons.join('; ')}` : ''}`);
  const p: Preview = { kind: 'command', text: lines.join('\n') };
  if (cwd !== undefined) p.cwd = cwd;
  return p;
}

/** Pretty-printed arguments (cut past 64 KiB, saying so). */
export function argsPreview(args: unknown): Preview {
  let text: string;
  try {
    text = JSON.stringify(args, null, 2) ?? 'undefined';
  } catch {
    text = String(args);
  }
  // past the bound the head and the tail are shown: what padding pushes to the end stays in view
  if (text.length > MAX_ARGS_PREVIEW) {
    const head = MAX_ARGS_PREVIEW - ARGS_TAIL;
    text = `${text.slice(0, head)}\n… [preview cut: ${text.length - MAX_ARGS_PREVIEW} characters not shown] …\n${text.slice(-ARGS_TAIL)}`;
  }
  return { kind: 'args', text };
}

function newContent(args: Record<string, unknown>, before: string | null): { bytes?: Uint8Array; note?: string } {
  if (typeof args.content === 'string') {
    const bytes = args.encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
    return { bytes };
  }
  if (Array.isArray(args.edits)) {
    if (before === null) return { note: 'the file does not exist: the edits cannot apply' };
    let text = before;
    const notes: string[] = [];
    args.edits.forEach((e: unknown, i) => {
      const { search, replace, count } = (e ?? {}) as { search?: unknown; replace?: unknown; count?: unknown };
      if (typeof search !== 'string' || typeof replace !== 'string' || search === '') return;
      const times = typeof count === 'number' && count > 0 ? count : 1;
      let done = 0;
      let from = 0;
      while (done < times) {
        const at = text.indexOf(search, from);
        if (at < 0) break;
        text = text.slice(0, at) + replace + text.slice(at + search.length);
        from = at + replace.length;
        done++;
      }
      if (done < times) notes.push(`edit ${i + 1}: found ${done} of ${times} occurrence(s) of its search text`);
    });
    return { bytes: Buffer.from(text, 'utf8'), ...(notes.length > 0 ? { note: notes.join('; ') } : {}) };
  }
  return {};
}

/**
 * The diff preview of a file write, patch or delete, or null when the call is not one. Reads the
 * current content with `readFile` (the engine's one read) and records its sha256 (null: the file
 * does not exist; absent: it could not be read).
 */
export function writePreview(
  tool_id: string,
  args: Record<string, unknown>,
  paths: ResolvedPaths,
  readFile: ReadFile,
): Preview | null {
  if (typeof args.path !== 'string') return null;
  const name = tool_id.slice(tool_id.lastIndexOf('.') + 1);
  const isDelete = DELETE_VERB.test(name);
  if (!isDelete && typeof args.content !== 'string' && !Array.isArray(args.edits) && typeof args.diff !== 'string')
    return null;
  const target = paths.list.find((p) => p.arg === 'path')?.path ?? args.path;
  const preview: Preview = { kind: 'diff', text: '', path: target };
  let before: Uint8Array | null;
  try {
    before = readFile(target);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    preview.text =
      code === 'EISDIR'
        ? `${isDelete ? 'delete' : 'write'} directory ${target}${args.recursive === true ? ' (recursive)' : ''}`
        : `current content of ${target} cannot be read: ${(e as Error).message}`;
    return preview;
  }
  preview.file_sha256 = before === null ? null : createHash('sha256').update(before).digest('hex');
  const beforeText = before === null ? null : decoder.decode(before);
  if (typeof args.diff === 'string' && !Array.isArray(args.edits)) {
    preview.text = args.diff.startsWith('---') ? args.diff : `--- ${target}\n+++ ${target}\n${args.diff}`;
    return preview;
  }
  const after = isDelete ? { bytes: undefined } : newContent(args, beforeText);
  if (!isDelete && after.bytes === undefined) {
    preview.text = after.note ?? 'new content unknown';
    return preview;
  }
  const afterBytes = after.bytes ?? null;
  const big = (before?.length ?? 0) > MAX_DIFF_BYTES || (afterBytes?.length ?? 0) > MAX_DIFF_BYTES;
  const binary = (before !== null && isBinary(before)) || (afterBytes !== null && isBinary(afterBytes));
  if (big || binary) {
    const size = (b: Uint8Array | null) => (b === null ? 'no file' : `${b.length} bytes`);
    preview.text = `--- ${target}\n+++ ${target}\n(${binary ? 'binary' : 'large'} content: ${size(before)} → ${size(afterBytes)}; diff not shown)\n`;
  } else {
    const d = unifiedDiff(beforeText, afterBytes === null ? null : decoder.decode(afterBytes), target);
    preview.text = d === '' ? `(no change to ${target})\n` : d;
  }
  if (after.note !== undefined) preview.text += `note: ${after.note}\n`;
  return preview;
}

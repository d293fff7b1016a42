import path from 'node:path';

import { isFingerError } from '@finger/protocol';

import { ApiError, CliError, DaemonNotRunningError, type ErrorBody } from './errors.js';
import { EXIT, type ExitCode, exitCodeFor } from './exit-codes.js';
import type { Output } from './output.js';

/** What the failing command knows that makes its error clearer. */
export interface ErrorContext {
  /** The text sent to `/v1/input`, for the caret under a `/hub` syntax error. */
  input?: string;
  /** FINGER_HOME in effect, for the token hint. */
  home?: string;
  /** The admin token file the CLI read, for the token hint (else `<home>/token`). */
  tokenFile?: string;
}

/**
 * Shows `text` (one line, cut to `width` around `position`) with a caret under `position`,
 * followed by `label`. Returns the two lines, unindented.
 */
export function caretLines(text: string, position: number, label: string, width = 100): [string, string] {
  const flat = text.replace(/[\r\n\t]/g, ' ');
  const pos = Math.min(Math.max(0, Math.floor(position)), flat.length);
  let start = 0;
  let shown = flat;
  if (flat.length > width) {
    start = Math.max(0, Math.min(pos - Math.floor(width / 2), flat.length - width));
    shown = (start > 0 ? '…' : '') + flat.slice(start, start + width) + (start + width < flat.length ? '…' : '');
  }
  const col = pos - start + (start > 0 ? 1 : 0);
  return [shown, `${' '.repeat(col)}^${label ? ` ${label}` : ''}`];
}

function scalar(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Generic `details`: one `key: value` line per field, nested values as compact JSON. */
export function detailLines(details: unknown): string[] {
  if (details === undefined || details === null) return [];
  if (typeof details !== 'object') return [`details: ${scalar(details)}`];
  if (Array.isArray(details)) return details.map((d) => `- ${scalar(d)}`);
  return Object.entries(details as Record<string, unknown>).map(([k, v]) => {
    if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null))
      return `${k}: ${v.map(scalar).join(', ')}`;
    return `${k}: ${scalar(v)}`;
  });
}

function issueLines(details: unknown): string[] | undefined {
  const issues = (details as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.map(
    (i: { path?: unknown; message?: unknown }) => `${String(i.path ?? '$')}: ${String(i.message ?? '')}`,
  );
}

function hubSyntaxLines(details: unknown, input: string | undefined): string[] | undefined {
  const d = details as { position?: unknown; expected?: unknown } | null;
  if (input === undefined || typeof d?.position !== 'number') return undefined;
  const label = typeof d.expected === 'string' ? `expected ${d.expected}` : '';
  return caretLines(input, d.position, label);
}

/** The body printed under `--json` and the lines printed for people, for any thrown value. */
function describe(err: unknown): { body: ErrorBody; exit: ExitCode; notes: string[] } {
  if (err instanceof DaemonNotRunningError) {
    return {
      body: { code: err.code, message: err.message, details: { url: err.url } },
      exit: EXIT.NOT_RUNNING,
      notes: [],
    };
  }
  if (err instanceof ApiError || err instanceof CliError) {
    const body: ErrorBody = { code: err.code, message: err.message };
    if (err.details !== undefined) body.details = err.details;
    const exit = err instanceof CliError ? err.exitCode : exitCodeFor(err.code);
    return { body, exit, notes: err instanceof CliError ? err.notes : [] };
  }
  if (isFingerError(err)) {
    // thrown by what a command runs in this process (`module serve`: its arguments, the manifest,
    // the NATS connection): its own code and exit class, as if the daemon had answered it
    const body: ErrorBody = { code: err.code, message: err.message };
    if (err.details !== undefined) body.details = err.details;
    return { body, exit: exitCodeFor(err.code), notes: [] };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { body: { code: 'E_INTERNAL', message }, exit: EXIT.GENERIC, notes: [] };
}

/**
 * Prints an error and returns the exit code of its class. People get `error E_CODE: message` on
 * stderr with helpful details indented below (a caret under a bad `/hub` position, one line per
 * manifest or argument issue); with `--json` the `{"error":{…}}` object also goes to stdout.
 */
export function reportError(out: Output, err: unknown, ctx: ErrorContext = {}): ExitCode {
  const { body, exit, notes } = describe(err);
  if (out.json) out.printJson({ error: body });
  const c = out.ce;
  if (body.code === 'E_DAEMON_NOT_RUNNING') {
    out.errLine(`${c.red('error:')} ${body.message}`);
    return exit;
  }
  out.errLine(`${c.red(`error ${body.code}:`)} ${body.message}`);
  let lines: string[];
  if (body.code === 'E_BAD_HUB_SYNTAX') lines = hubSyntaxLines(body.details, ctx.input) ?? detailLines(body.details);
  else if (body.code === 'E_INVALID_MANIFEST' || body.code === 'E_INVALID_ARGS')
    lines = issueLines(body.details) ?? detailLines(body.details);
  else lines = detailLines(body.details);
  if (body.code === 'E_UNAUTHENTICATED') {
    const file = ctx.tokenFile ?? (ctx.home ? path.join(ctx.home, 'token') : 'FINGER_HOME/token');
    lines.push(c.dim(`hint: the CLI sends FINGER_TOKEN, or else the token in ${file}`));
  }
  for (const l of [...lines, ...notes]) out.errLine(`  ${l}`);
  return exit;
}

// The shape of a held call: what a standing approval covers ("always") and what the adaptation
// escalates after rejections — never a whole tool. Pure: the facts (the RiskAssessor's command
// model, real paths, the caller's real roots) are resolved by shape-facts.ts before they get here.
//
// - shell: each segment's program and subcommand as the RiskAssessor parsed them (`npm test`,
//   `git commit`, `npx` + `tsc`), optionally an argument pattern; a command is covered only when
//   every one of its segments is.
// - file tools (`fs.*`): real paths or directory globs (`<dir>/**`) inside the caller's roots.
// - web (`web.*`): scheme + host (with its port).
// - other tools (MCP…): the tool and JSON-pointer patterns over its arguments (at least one).

import { createHash } from 'node:crypto';

import { FingerError } from '@finger/protocol';
import type { CommandModel, SimpleCommand } from '@finger/shell-risk';
import { isStandardProgramPath, SUBCOMMAND_PROGRAMS, subcommandWords } from '@finger/shell-risk';

import { compileValueGlob } from '../value-glob.js';
import { compileWildcardWords, matchWildcardWords } from '../wildcard-words.js';

/** One command of a shell shape: a program with its subcommand words, optionally an argument pattern. */
export interface ShellCommandShape {
  /** The program's name (basename), as the RiskAssessor parsed it. */
  program: string;
  /** Its subcommand words (`["test"]` for `npm test`; `["run", "lint"]` for `npm run lint`). */
  subcommand: string[];
  /** Glob words for the arguments after the subcommand (`*` any run of words); absent: any arguments. */
  args?: string[];
  /** Whether the segment may write files through a redirection (`> out.txt`). Default false. */
  writes?: boolean;
}

/** What a standing approval covers. Unions carry `kind`. */
export type CallShape =
  | { kind: 'shell'; tool: string; commands: ShellCommandShape[] }
  | { kind: 'path'; tool: string; paths: string[] }
  | { kind: 'url'; tool: string; scheme: string; host: string }
  | { kind: 'args'; tool: string; pointers: Record<string, string> };

/** One path argument of a call, resolved to its real path (null: it cannot be resolved). */
export interface ShapePath {
  /** The argument's name (`path`, `cwd`, …). */
  arg: string;
  path: string | null;
}

/** The facts a shape is made from and matched against (resolved by shape-facts.ts). */
export interface ShapeFacts {
  tool_id: string;
  args: unknown;
  /** The command model of a shell tool's command; absent for other tools. */
  command?: CommandModel;
  /** Every path argument, real paths. */
  paths?: ShapePath[];
  /** The caller's workspace roots, real paths. */
  roots: readonly string[];
}

/** A class of calls the adaptation counts and escalates: one program + subcommand, one directory, one host. */
export interface ShapeClass {
  /** `<tool>` (a whole tool, as before shapes) or `<tool>@<12 hex>`: the adaptation rule id's suffix. */
  key: string;
  tool: string;
  /** What a person reads: `shell.exec: git push`. */
  label: string;
  /** The policy rule `match` that escalates it; absent: the whole tool. */
  match?: Record<string, string | string[]>;
}

const WORD = /^[A-Za-z0-9_][A-Za-z0-9._+@-]*$/;
/** Script runners whose `run` subcommand names a script: `npm run lint` is not `npm run build`. */
const SCRIPT_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const RUN_WORDS = new Set(['run', 'run-script']);
/** Interpreters: their first operand (the script) is part of the shape, and inline code is never covered. */
const INTERPRETERS = /^(?:sh|bash|dash|zsh|ksh|fish|python[0-9.]*|node|deno|ruby|perl|php|lua|Rscript)$/;
const INLINE_CODE = new Set(['-c', '-e', '--eval', '-r', '-E', '--command', '-p', '--print']);

function isFsTool(tool: string): boolean {
  return tool.startsWith('fs.');
}

/** The web tools (`web.*`): their shape is the origin. Another tool with a `url` argument is shaped by all its arguments. */
function isWebTool(tool: string): boolean {
  return tool.startsWith('web.');
}

function urlOf(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const u = (args as Record<string, unknown>).url;
  return typeof u === 'string' ? u : undefined;
}

/** The shape command of one segment, or null when no shape can cover it (unknown program, inline code). */
function segmentShape(seg: SimpleCommand): ShellCommandShape | null {
  if (seg.argv.length === 0 || seg.unknown_program || seg.program === '' || seg.local_binary) return null;
  if (!isStandardProgramPath(seg.path) || !WORD.test(seg.program)) return null;
  const sub = subcommandWords(seg).map((i) => seg.argv[i] as string);
  if (
    SCRIPT_RUNNERS.has(seg.program) &&
    sub.length === 1 &&
    RUN_WORDS.has(sub[0] as string) &&
    seg.argv[seg.argv.indexOf(sub[0] as string) + 1] !== undefined
  ) {
    const script = seg.argv[seg.argv.indexOf(sub[0] as string) + 1] as string;
    if (WORD.test(script)) sub.push(script);
  }
  const shape: ShellCommandShape = { program: seg.program, subcommand: sub };
  if (INTERPRETERS.test(seg.program)) {
    if (seg.argv.slice(1).some((w) => INLINE_CODE.has(w))) return null;
    // the script is the shape: `python x.py` is not `python y.py`
    shape.args = seg.argv.slice(1).map(escapeGlob);
  } else if (sub.length === 0 && (SUBCOMMAND_PROGRAMS.has(seg.program) || seg.program === 'git')) {
    // no subcommand (`git --version`): exactly these words, never every subcommand of the program
    shape.args = seg.argv.slice(1).map(escapeGlob);
  }
  if (seg.redirects.some((r) => r.is_write)) shape.writes = true;
  return shape;
}

function escapeGlob(w: string): string {
  return w.replace(/[*?[\]]/g, '?');
}

/** The shape the person is offered for a held call; null when none can be made (then `always` approves once). */
export function deriveShape(f: ShapeFacts): CallShape | null {
  if (f.command !== undefined) {
    const m = f.command;
    if (m.unparseable !== undefined || m.segments.length === 0) return null;
    const commands: ShellCommandShape[] = [];
    const seen = new Set<string>();
    for (const seg of m.segments) {
      const s = segmentShape(seg);
      if (s === null) return null;
      const k = JSON.stringify(s);
      if (!seen.has(k)) {
        seen.add(k);
        commands.push(s);
      }
    }
    return { kind: 'shell', tool: f.tool_id, commands };
  }
  if (isFsTool(f.tool_id)) {
    const paths = f.paths ?? [];
    if (paths.length === 0 || paths.some((p) => p.path === null || !insideRoots(p.path, f.roots))) return null;
    const out = new Set<string>();
    for (const p of paths) {
      const dir = parentOf(p.path as string);
      // a file directly in a root: the file itself (a whole root is never offered)
      out.add(f.roots.includes(dir) || !insideRoots(dir, f.roots) ? (p.path as string) : `${dir}/**`);
    }
    return { kind: 'path', tool: f.tool_id, paths: [...out].sort() };
  }
  if (isWebTool(f.tool_id)) {
    const o = origin(urlOf(f.args));
    return o === null ? null : { kind: 'url', tool: f.tool_id, ...o };
  }
  if (typeof f.args !== 'object' || f.args === null || Array.isArray(f.args)) return null;
  const pointers: Record<string, string> = {};
  for (const [k, v] of Object.entries(f.args as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (typeof v === 'string') pointers[pointerOf(k)] = escapeValue(v);
    else if (typeof v === 'number' || typeof v === 'boolean') pointers[pointerOf(k)] = String(v);
    else if (v === null) pointers[pointerOf(k)] = 'null';
  }
  return Object.keys(pointers).length === 0 ? null : { kind: 'args', tool: f.tool_id, pointers };
}

function escapeValue(v: string): string {
  return v.replace(/[\\*?[]/g, (c) => `\\${c}`);
}

function pointerOf(key: string): string {
  return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** The value at a JSON pointer (RFC 6901), or undefined. */
function at(args: unknown, pointer: string): unknown {
  if (pointer === '') return args;
  if (!pointer.startsWith('/')) return undefined;
  let v: unknown = args;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof v !== 'object' || v === null || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function origin(url: string | undefined): { scheme: string; host: string } | null {
  if (url === undefined) return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.host === '' || u.username !== '' || u.password !== '')
    return null;
  return { scheme: u.protocol.slice(0, -1), host: u.host.toLowerCase() };
}

function parentOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

function insideRoots(p: string, roots: readonly string[]): boolean {
  return roots.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : `${r}/`));
}

/** A path glob: `*` one component's characters, `**` any depth; without glob characters an exact path. */
function pathMatcher(glob: string): (p: string) => boolean {
  if (glob.endsWith('/**') && !/[*?[]/.test(glob.slice(0, -3))) {
    const dir = glob.slice(0, -3);
    return (p) => p.startsWith(`${dir}/`);
  }
  if (!/[*?[]/.test(glob)) return (p) => p === glob;
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|\\[\]/]/g, '\\$&');
  }
  const rx = new RegExp(`${re}$`, 's');
  return (p) => rx.test(p);
}

function commandCovers(c: ShellCommandShape, seg: SimpleCommand): boolean {
  const s = segmentShape(seg);
  if (s === null || s.program !== c.program) return false;
  if (s.writes === true && c.writes !== true) return false;
  if (c.subcommand.length > s.subcommand.length) return false;
  for (let i = 0; i < c.subcommand.length; i++) if (s.subcommand[i] !== c.subcommand[i]) return false;
  // a shape with fewer subcommand words than the call's covers it only when nothing narrows it
  if (c.subcommand.length < s.subcommand.length && c.args !== undefined) return false;
  if (c.args === undefined) return true;
  const last = subcommandEnd(seg, s.subcommand);
  return matchWildcardWords(compileWildcardWords(c.args), seg.argv, last);
}

/** The index in argv after the subcommand words (1 when there are none). */
function subcommandEnd(seg: SimpleCommand, sub: readonly string[]): number {
  let i = 1;
  for (const w of sub) {
    const k = seg.argv.indexOf(w, i);
    if (k < 0) return i;
    i = k + 1;
  }
  return i;
}

/**
 * Whether `shape` covers the call: same tool, and — shell: every segment covered by one of the
 * shape's commands (an unparseable command never); file tools: every path argument resolved,
 * inside the caller's roots and matched by one of the shape's globs; web: the same scheme and
 * host; other tools: every pointer's value matched.
 */
export function matchShape(shape: CallShape, f: ShapeFacts): boolean {
  if (shape.tool !== f.tool_id) return false;
  switch (shape.kind) {
    case 'shell': {
      const m = f.command;
      if (m === undefined || m.unparseable !== undefined || m.segments.length === 0) return false;
      if (m.flags.invisible_unicode || m.flags.too_long || m.flags.path_change) return false;
      return m.segments.every((seg) => shape.commands.some((c) => commandCovers(c, seg)));
    }
    case 'path': {
      const paths = f.paths ?? [];
      if (paths.length === 0) return false;
      const globs = shape.paths.map(pathMatcher);
      return paths.every(
        (p) => p.path !== null && insideRoots(p.path, f.roots) && globs.some((g) => g(p.path as string)),
      );
    }
    case 'url': {
      const o = origin(urlOf(f.args));
      return o !== null && o.scheme === shape.scheme && o.host === shape.host;
    }
    case 'args': {
      const entries = Object.entries(shape.pointers);
      if (entries.length === 0) return false;
      return entries.every(([ptr, glob]) => {
        const v = at(f.args, ptr);
        const text =
          typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : null;
        return text !== null && compileValueGlob(glob)(text);
      });
    }
  }
}

/**
 * Whether `answer` is `proposed` or narrower (what a person may send with `always`): shell — each
 * command is a proposed one with the same program, the same or more subcommand words, an argument
 * pattern where the proposed had none (or the same), no write the proposed did not allow; paths —
 * each a proposed path, or below a proposed `<dir>/**`; web — the same origin; other tools — every
 * proposed pointer with the same pattern, plus any more.
 */
export function narrows(answer: CallShape, proposed: CallShape): boolean {
  if (answer.kind !== proposed.kind || answer.tool !== proposed.tool) return false;
  switch (answer.kind) {
    case 'shell': {
      const p = proposed as Extract<CallShape, { kind: 'shell' }>;
      return (
        answer.commands.length > 0 &&
        answer.commands.every((c) =>
          p.commands.some(
            (q) =>
              q.program === c.program &&
              q.subcommand.every((w, i) => c.subcommand[i] === w) &&
              (q.args === undefined || JSON.stringify(q.args) === JSON.stringify(c.args)) &&
              (c.writes !== true || q.writes === true),
          ),
        )
      );
    }
    case 'path': {
      const p = proposed as Extract<CallShape, { kind: 'path' }>;
      return (
        answer.paths.length > 0 &&
        answer.paths.every(
          (g) =>
            !g.split('/').includes('..') &&
            p.paths.some(
              (q) => q === g || (q.endsWith('/**') && g.startsWith(q.slice(0, -2)) && g.length > q.length - 2),
            ),
        )
      );
    }
    case 'url': {
      const p = proposed as Extract<CallShape, { kind: 'url' }>;
      return answer.scheme === p.scheme && answer.host === p.host;
    }
    case 'args': {
      const p = proposed as Extract<CallShape, { kind: 'args' }>;
      return Object.entries(p.pointers).every(([k, v]) => answer.pointers[k] === v);
    }
  }
}

/** One line a person reads: `shell.exec: npm test, git commit`, `fs.write: /w/src/**`. */
export function describeShape(shape: CallShape): string {
  switch (shape.kind) {
    case 'shell':
      return `${shape.tool}: ${shape.commands
        .map(
          (c) =>
            [c.program, ...c.subcommand, ...(c.args ?? [])].join(' ') +
            (c.args === undefined ? ' …' : '') +
            (c.writes === true ? ' (with > redirections)' : ''),
        )
        .join(', ')}`;
    case 'path':
      return `${shape.tool}: ${shape.paths.join(', ')}`;
    case 'url':
      return `${shape.tool}: ${shape.scheme}://${shape.host}`;
    case 'args':
      return `${shape.tool}: ${Object.entries(shape.pointers)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`;
  }
}

function keyOf(tool: string, what: string): string {
  return `${tool}@${createHash('sha256').update(what).digest('hex').slice(0, 12)}`;
}

/**
 * The classes the adaptation counts a held call in: shell — each program + subcommand it runs
 * (wrappers only when nothing else runs); file tools — the directory of each path; web — the
 * origin; anything else — the whole tool (key = the tool id, as before shapes).
 */
export function shapeClasses(f: ShapeFacts): ShapeClass[] {
  const shape = deriveShape(f);
  const whole: ShapeClass[] = [{ key: f.tool_id, tool: f.tool_id, label: f.tool_id }];
  if (shape === null) return f.command !== undefined ? [] : whole;
  switch (shape.kind) {
    case 'shell': {
      const segs = f.command!.segments;
      const inner = segs.filter((s) => !s.wrapper);
      const out = new Map<string, ShapeClass>();
      for (const seg of inner.length > 0 ? inner : segs) {
        const s = segmentShape(seg);
        if (s === null) continue;
        const words = [s.program, ...s.subcommand];
        const text = words.join(' ');
        out.set(text, {
          key: keyOf(f.tool_id, `cmd:${text}`),
          tool: f.tool_id,
          label: `${f.tool_id}: ${text}`,
          match: { command: `${text} *` },
        });
      }
      return [...out.values()];
    }
    case 'path': {
      const out = new Map<string, ShapeClass>();
      for (const p of f.paths ?? []) {
        const dir = parentOf(p.path as string);
        const key = keyOf(f.tool_id, `dir:${p.arg}:${dir}`);
        out.set(key, { key, tool: f.tool_id, label: `${f.tool_id}: ${dir}/`, match: { [p.arg]: dir } });
      }
      return [...out.values()];
    }
    case 'url': {
      const o = `${shape.scheme}://${shape.host}`;
      return [
        {
          key: keyOf(f.tool_id, `url:${o}`),
          tool: f.tool_id,
          label: `${f.tool_id}: ${o}`,
          match: { url: [o, `${o}/*`, `${o}?*`, `${o}#*`] },
        },
      ];
    }
    case 'args':
      return whole;
  }
}

function invalid(path: string, message: string): FingerError {
  return new FingerError('E_INVALID_ARGS', `invalid shape: ${path} ${message}`, {
    issues: [{ path, message }],
  });
}

const isStrings = (v: unknown, max = 64): v is string[] =>
  Array.isArray(v) && v.length <= max && v.every((w) => typeof w === 'string' && w.length > 0 && w.length <= 512);

/** Checks a shape sent over the wire (E_INVALID_ARGS with `details.issues`), and returns it. */
export function parseShape(v: unknown, path = '$.shape'): CallShape {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(path, 'must be an object');
  const s = v as Record<string, unknown>;
  if (typeof s.tool !== 'string' || s.tool === '') throw invalid(`${path}.tool`, 'must be a tool id');
  switch (s.kind) {
    case 'shell': {
      const cmds = s.commands;
      if (!Array.isArray(cmds) || cmds.length === 0 || cmds.length > 64)
        throw invalid(`${path}.commands`, 'must be 1–64 commands');
      const commands = cmds.map((c: unknown, i): ShellCommandShape => {
        const p = `${path}.commands[${i}]`;
        if (typeof c !== 'object' || c === null) throw invalid(p, 'must be an object');
        const o = c as Record<string, unknown>;
        if (typeof o.program !== 'string' || !WORD.test(o.program))
          throw invalid(`${p}.program`, 'must be a program name');
        if (!isStrings(o.subcommand ?? [])) throw invalid(`${p}.subcommand`, 'must be words');
        if (o.args !== undefined && !isStrings(o.args)) throw invalid(`${p}.args`, 'must be glob words');
        if (o.writes !== undefined && typeof o.writes !== 'boolean') throw invalid(`${p}.writes`, 'must be a boolean');
        const out: ShellCommandShape = { program: o.program, subcommand: [...((o.subcommand as string[]) ?? [])] };
        if (o.args !== undefined) out.args = [...(o.args as string[])];
        if (o.writes === true) out.writes = true;
        return out;
      });
      return { kind: 'shell', tool: s.tool, commands };
    }
    case 'path':
      if (!isStrings(s.paths) || s.paths.length === 0 || !s.paths.every((p) => p.startsWith('/')))
        throw invalid(`${path}.paths`, 'must be absolute paths or globs');
      return { kind: 'path', tool: s.tool, paths: [...s.paths] };
    case 'url':
      if (typeof s.scheme !== 'string' || !/^https?$/.test(s.scheme))
        throw invalid(`${path}.scheme`, 'must be http or https');
      if (typeof s.host !== 'string' || s.host === '' || /[/@\s]/.test(s.host))
        throw invalid(`${path}.host`, 'must be a host');
      return { kind: 'url', tool: s.tool, scheme: s.scheme, host: s.host.toLowerCase() };
    case 'args': {
      const p = s.pointers;
      if (typeof p !== 'object' || p === null || Array.isArray(p) || Object.keys(p).length === 0)
        throw invalid(`${path}.pointers`, 'must name at least one JSON pointer');
      for (const [k, g] of Object.entries(p)) {
        if (!k.startsWith('/') || typeof g !== 'string')
          throw invalid(`${path}.pointers`, 'must map JSON pointers to globs');
      }
      return { kind: 'args', tool: s.tool, pointers: { ...(p as Record<string, string>) } };
    }
    default:
      throw invalid(`${path}.kind`, 'must be shell, path, url or args');
  }
}

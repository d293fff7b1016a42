// The path words of a command, for the PathSandbox to hold against the read roots as it holds
// `fs.read`'s `path` (docs/policy.md, "Shell words and the read roots"): every operand and
// `<` redirection of every segment that runs a program, every `@file` / `name=@file` / `=path`
// part, and every value of an option that names a file to read (file-reading-options.ts), each
// joined to the directories its segment runs in (after `cd`). Words of programs that take no
// files (`echo`, `printf`, `kill`, `sleep`…), subcommand words, URLs, `host:path` and run-time
// values are no path words. The roots are per policy and principal, so the check is the
// sandbox's (per call), while this list is part of the cached assessment.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import type { Directories } from '../knowledge/places/cwd-paths.js';
import { isRelativePart, pathParts } from '../knowledge/places/path-parts.js';
import { fileReadingValues } from '../options/file-reading-options.js';
import { subcommandWords } from '../options/subcommand-words.js';

/** At most this many path words per command; past it the list ends with {@link TOO_MANY_WORDS}. */
export const MAX_READ_WORDS = 64;
/** The last entry of a list cut at {@link MAX_READ_WORDS}: the sandbox holds the call. */
export const TOO_MANY_WORDS = '\0too many path words';

/** Programs whose operands are no files. */
const NO_FILES = new Set([
  'echo',
  'printf',
  'kill',
  'pkill',
  'pgrep',
  'killall',
  'sleep',
  'seq',
  'expr',
  'true',
  'false',
  ':',
  'export',
  'declare',
  'typeset',
  'local',
  'readonly',
  'unset',
  'set',
  'shift',
  'exit',
  'return',
  'wait',
  'jobs',
  'type',
  'which',
  'whereis',
  'hash',
  'alias',
  'unalias',
  'history',
  'date',
  'let',
  'read',
  'getopts',
  'trap',
  'umask',
  'ulimit',
  'id',
  'groups',
  'whoami',
  'uname',
  'hostname',
  'nproc',
  'numfmt',
  'basename',
  'dirname',
]);
const NOT_A_FILE = /^\/dev\/(?:null|zero|stdin|stdout|stderr|tty|fd\/\d+|random|urandom)$/;

/** Whether a part is a path worth holding against the roots. */
function isPathWord(part: string): boolean {
  if (part.length > 4096 || part.includes('\n') || NOT_A_FILE.test(part)) return false;
  if (part.startsWith('/') || part === '~' || part.startsWith('~/')) return true;
  if (!isRelativePart(part)) return false;
  const colon = part.indexOf(':');
  return colon < 0 || (part.indexOf('/') >= 0 && part.indexOf('/') < colon);
}

/** The path parts of one segment's words, as written. */
function segmentParts(seg: SimpleCommand): string[] {
  const out: string[] = [];
  const verbs = subcommandWords(seg);
  const values = new Set(fileReadingValues(seg.program, seg.argv));
  for (let k = 1; k < seg.argv.length; k++) {
    if (seg.dynamic.includes(k) || verbs.includes(k)) continue;
    const w = seg.argv[k]!;
    if (w.startsWith('-')) {
      // an option: only the file it names (`-f../list`, `--files-from=x`, `--dir=/etc`)
      for (const v of values) if (w.endsWith(v) && v !== w) out.push(v);
      const eq = w.indexOf('=');
      if (eq > 0 && /^[/~.]/.test(w.slice(eq + 1))) out.push(w.slice(eq + 1));
      continue;
    }
    for (const p of pathParts(w)) if (isPathWord(p)) out.push(p);
  }
  for (const r of seg.redirects)
    if (!r.is_write && !r.dynamic && (r.op === '<' || r.op === '<>') && isPathWord(r.target)) out.push(r.target);
  return out;
}

/**
 * The paths a command names (see the file comment): absolute, `~/…`, or — when the command's
 * starting directory is not known to the assessor — relative to it; deduplicated.
 */
export function readWords(model: CommandModel, directories: (i: number) => Directories): string[] {
  const out = new Set<string>();
  for (let i = 0; i < model.segments.length; i++) {
    const seg = model.segments[i]!;
    if (seg.wrapper || seg.unknown_program || NO_FILES.has(seg.program)) continue;
    const dirs = directories(i);
    for (const part of segmentParts(seg)) {
      if (part.startsWith('/') || part.startsWith('~')) out.add(part);
      else if (!dirs.unknown) for (const d of dirs.list) out.add(d === '' ? part : `${d}/${part}`);
      if (out.size > MAX_READ_WORDS) return [...[...out].slice(0, MAX_READ_WORDS), TOO_MANY_WORDS];
    }
  }
  return [...out];
}

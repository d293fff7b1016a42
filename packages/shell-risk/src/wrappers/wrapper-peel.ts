// One level of a wrapper that runs the rest of its own argv (`nice -n 5 CMD…`, `env K=v CMD…`,
// `timeout 5 CMD…`, `xargs -I{} CMD…`, `flock /tmp/l CMD…`): where the wrapped command starts,
// read in place (an index into the words, no copy). A chain of such wrappers longer than
// MAX_WRAPPERS is not peeled level by level — each level would copy and judge the whole rest
// of the line again, quadratic in its length — but in one linear pass (wrappers.ts).

import type { Assignment } from '../command-model.js';
import { SHELLS } from '../knowledge/programs/programs.js';
import { type ParsedArgs, parseOption } from '../options/option-parser.js';
import { type CommandSpec, lookup } from '../options/option-spec.js';
import {
  ARGV_WRAPPERS,
  BWRAP_VALUES,
  ENV_OPTIONS,
  G_PREFIXED,
  LD_SO,
  MORE_ARGV_WRAPPERS,
  NODE_RUNNER,
  NPX_LIKE,
  QEMU_VALUE,
  SUBCOMMAND_WRAPPERS,
  TIME_OPTIONS,
  TIMEOUT_OPTIONS,
  type WrapperSpec,
  XARGS_OPTIONS,
} from '../options/wrapper-options.js';
import type { Expansion, Word } from './expansion.js';

/**
 * Wrappers in a row (`nice nice … ls`, `sudo env timeout 5 …`) peeled one level at a time; a
 * longer chain is judged in one pass, its first wrapper as a command of its own (never safe).
 */
export const MAX_WRAPPERS = 16;

/** One level of a wrapper that runs the rest of its argv. */
export interface Peel {
  /** index in the words of the wrapped command's first word */
  next: number;
  /** `NAME=value` words after the options (env, sudo) */
  assignments: Assignment[];
  /** what the wrapper itself adds (`time -o FILE` as the redirect it amounts to) */
  extra: Expansion[];
  /** xargs' replace string (`-I {}`): the words holding it get run-time values */
  replace?: string;
  /** xargs: more arguments are appended at run time */
  unknownTail?: boolean;
}

export const emptyArgs = (): ParsedArgs => ({ options: new Map(), positionals: [], positionalIndex: [] });

/** Reads the option word words[i] (not `--`) under `spec` into `out`; returns the index after it and its value. */
export function readOption(spec: CommandSpec, words: readonly Word[], i: number, out: ParsedArgs): number {
  const a = (words[i] as Word).text;
  const b = words[i + 1]?.text;
  return i + parseOption(spec, b === undefined ? [a] : [a, b], 0, out);
}

/**
 * Skips the options of a wrapper starting at words[from]; returns the index of the first
 * non-option word (the wrapped command), the `NAME=value` assignments found after the options,
 * and the options read.
 */
export function skipOptions(
  words: readonly Word[],
  from: number,
  spec: WrapperSpec,
): { index: number; assignments: Assignment[]; options: ParsedArgs } {
  const assignments: Assignment[] = [];
  const options = emptyArgs();
  let i = from;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (w.startsWith('-') && w.length > 1) {
      if (spec.numeric === true && /^-\d+$/.test(w)) i++;
      else i = readOption(spec, words, i, options);
      continue;
    }
    if (spec.assignments === true && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      const eq = w.indexOf('=');
      assignments.push({ name: w.slice(0, eq), value: w.slice(eq + 1), dynamic: (words[i] as Word).dynamic });
      i++;
      continue;
    }
    break;
  }
  return { index: Math.min(i, words.length), assignments, options };
}

/** A word as shell text that reads back as the same single word. */
export function shellQuote(text: string): string {
  return /^[\w./~+,:@%=-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** `: > FILE` for each file a wrapper's options write: the redirect it amounts to, judged by the same rules. */
function writtenBy(via: string, files: readonly string[], append = false): Expansion[] {
  return files
    .filter((f) => f !== '' && f !== '-')
    .map((f) => ({ kind: 'script', via, text: `: ${append ? '>>' : '>'} ${shellQuote(f)}`, dynamic: false }));
}

function specPeel(spec: WrapperSpec, words: readonly Word[], at: number): Peel | null {
  const { index, assignments, options } = skipOptions(words, at + 1, spec);
  if (spec.noCommand?.some((o) => options.options.has(o)) === true) return null;
  const next = index + (spec.operands ?? 0);
  if (next >= words.length) return null;
  const files = (spec.outputs ?? []).flatMap((o) => options.options.get(o) ?? []);
  const peel: Peel = { next, assignments, extra: writtenBy(`${(words[at] as Word).text} -o`, files) };
  if (spec.unknownTail === true) peel.unknownTail = true;
  return peel;
}

/** env: options and `NAME=value` words; `-S` (a string split into words) is not a plain peel. */
function envPeel(words: readonly Word[], at: number): Peel | null {
  const assignments: Assignment[] = [];
  const opts = emptyArgs();
  let i = at + 1;
  while (i < words.length) {
    const word = words[i] as Word;
    const w = word.text;
    if (w === '--') {
      i++;
      break;
    }
    if (w === '-') {
      i++;
      continue;
    }
    if (w.startsWith('-')) {
      i = readOption(ENV_OPTIONS, words, i, opts);
      if (opts.options.has('split-string')) return null;
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      const eq = w.indexOf('=');
      assignments.push({ name: w.slice(0, eq), value: w.slice(eq + 1), dynamic: word.dynamic });
      i++;
      continue;
    }
    break;
  }
  return i < words.length ? { next: i, assignments, extra: [] } : null;
}

/** GNU time; `-o FILE` (`-a`: appending) is handed on as the redirect it amounts to (`: > FILE`). */
function timePeel(words: readonly Word[], at: number): Peel | null {
  const { index, options } = skipOptions(words, at + 1, TIME_OPTIONS);
  if (index >= words.length) return null;
  const extra = writtenBy('time -o', options.options.get('output') ?? [], options.options.has('append'));
  return { next: index, assignments: [], extra };
}

/** `command [-p] CMD…` (with -v / -V it only prints what CMD is). */
function commandPeel(words: readonly Word[], at: number): Peel | null {
  let i = at + 1;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    if (w.includes('v') || w.includes('V')) return null;
  }
  return i < words.length ? { next: i, assignments: [], extra: [] } : null;
}

/** xargs with a command (without one it runs echo: not a plain peel). */
function xargsPeel(words: readonly Word[], at: number): Peel | null {
  const opts = emptyArgs();
  let i = at + 1;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    i = readOption(XARGS_OPTIONS, words, i, opts);
  }
  if (i >= words.length) return null;
  // -I R, or -i[R] / --replace[=R] (default `{}`): the last one wins
  const replaceI = opts.options.get('I')?.at(-1);
  const replacei = opts.options.get('i')?.at(-1);
  const replace = replacei !== undefined ? replacei || '{}' : replaceI;
  const peel: Peel = { next: i, assignments: [], extra: [], unknownTail: true };
  if (replace !== undefined) peel.replace = replace;
  return peel;
}

/** `busybox APPLET …` / `toybox APPLET …` (a shell applet is not a plain peel: it runs a string or stdin). */
function multicallPeel(words: readonly Word[], at: number): Peel | null {
  const applet = words[at + 1];
  if (applet === undefined || applet.dynamic || applet.text === '' || applet.text.startsWith('-')) return null;
  if (SHELLS.has(applet.text) && applet.text !== 'busybox') return null;
  return { next: at + 1, assignments: [], extra: [] };
}

/** flock FILE CMD… (`flock FILE -c STRING` runs a string: not a plain peel). */
function flockPeel(words: readonly Word[], at: number): Peel | null {
  const p = specPeel(ARGV_WRAPPERS.flock as WrapperSpec, words, at);
  if (p === null) return null;
  const w = (words[p.next] as Word).text;
  return w === '-c' || w === '--command' || w.startsWith('--command=') ? null : p;
}

/** `uv run …`, `npm exec -- …`, `aws-vault exec PROFILE -- …`, `ip netns exec NS …`: global options, the subcommand, its options and operands. */
function subcommandPeel(program: string, words: readonly Word[], at: number): Peel | null | undefined {
  const entry = lookup(SUBCOMMAND_WRAPPERS, program);
  if (entry === undefined) return undefined;
  const scratch = emptyArgs();
  let i = at + 1;
  while (i < words.length && (words[i] as Word).text.startsWith('-') && (words[i] as Word).text !== '--')
    i = readOption(entry.spec, words, i, scratch);
  const sub = entry.subs
    .map((s) => s.split(' '))
    .find((parts) => parts.every((p, k) => words[i + k]?.text === p && words[i + k]?.dynamic !== true));
  if (sub === undefined) return null;
  const first = skipOptions(words, i + sub.length, { ...entry.spec, operands: 0 });
  if (entry.stringOption !== undefined && first.options.options.has(entry.stringOption)) return null;
  const { index } = skipOptions(words, first.index + (entry.spec.operands ?? 0), { ...entry.spec, operands: 0 });
  return index < words.length ? { next: index, assignments: [], extra: [] } : null;
}

/** `npx [options] [--] PKG args…`: the package's program, as a command of its own (`-c STRING` runs a string). */
function npxPeel(words: readonly Word[], at: number): Peel | null {
  const { index, options } = skipOptions(words, at + 1, NODE_RUNNER);
  if (options.options.has('call') || index >= words.length) return null;
  return { next: index, assignments: [], extra: [] };
}

/** qemu user mode (`qemu-x86_64 [options] PROGRAM args…`); its options are single-dash words. */
function qemuPeel(words: readonly Word[], at: number): Peel | null {
  let i = at + 1;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    if (w === '-h' || w === '-help' || w === '-version') return null;
    i += QEMU_VALUE.has(w) ? 2 : 1;
  }
  return i < words.length ? { next: i, assignments: [], extra: [] } : null;
}

/** bwrap: options taking 0 to 3 values, then the command (`--` may end the options). */
function bwrapPeel(words: readonly Word[], at: number): Peel | null {
  let i = at + 1;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('--')) break;
    if (w === '--help' || w === '--version') return null;
    i += 1 + (BWRAP_VALUES[w] ?? 0);
  }
  return i < words.length ? { next: i, assignments: [], extra: [] } : null;
}

const QEMU_USER = /^qemu-(?!system-|img$|io$|nbd$|storage-daemon$|pr-helper$|ga$|edid$|keymap$)[a-z0-9_]+(?:-static)?$/;
const LOADER = /^(?:ld-linux[\w.-]*\.so\.\d+|ld\.so|ld64\.so\.\d+|ld-musl-[\w.-]+\.so\.1)$/;

/** Runners, loaders and renamed wrappers (`gnice`, `coreutils --coreutils-prog=nice`), or null. */
function runnerPeel(program: string, words: readonly Word[], at: number): Peel | null {
  const sub = subcommandPeel(program, words, at);
  if (sub !== undefined) return sub;
  if (NPX_LIKE.has(program)) return npxPeel(words, at);
  if (program === 'bwrap') return bwrapPeel(words, at);
  if (QEMU_USER.test(program)) return qemuPeel(words, at);
  if (LOADER.test(program)) return specPeel(LD_SO, words, at);
  if (program.startsWith('g') && G_PREFIXED.has(program.slice(1)) && isArgvWrapper(program.slice(1)))
    return peelAt(program.slice(1), words, at);
  if (program === 'coreutils') {
    const m = /^--coreutils-prog=(.+)$/.exec(words[at + 1]?.text ?? '');
    if (m !== null && words[at + 1]?.dynamic !== true && isArgvWrapper(m[1] as string))
      return peelAt(m[1] as string, words, at + 1);
  }
  return null;
}

/**
 * The level a wrapper named `program` peels off at words[at], or null when it is not such a
 * wrapper there (it runs no command, runs a string, or is no wrapper at all).
 */
export function peelAt(program: string, words: readonly Word[], at: number): Peel | null {
  switch (program) {
    case 'env':
      return envPeel(words, at);
    case 'timeout':
      return specPeel(TIMEOUT_OPTIONS, words, at);
    case 'time':
      return timePeel(words, at);
    case 'command':
      return commandPeel(words, at);
    case 'xargs':
      return xargsPeel(words, at);
    case 'busybox':
    case 'toybox':
      return multicallPeel(words, at);
    case 'flock':
      return flockPeel(words, at);
    default: {
      const spec = lookup(ARGV_WRAPPERS, program) ?? lookup(MORE_ARGV_WRAPPERS, program);
      if (spec === undefined) return runnerPeel(program, words, at);
      const peel = specPeel(spec, words, at);
      // `parallel ::: CMD…`: the arguments are the commands (wrappers.ts)
      return peel !== null && spec.unknownTail === true && (words[peel.next] as Word).text.startsWith(':::')
        ? null
        : peel;
    }
  }
}

const PLAIN_PEELERS: ReadonlySet<string> = new Set([
  'env',
  'timeout',
  'time',
  'command',
  'xargs',
  'busybox',
  'toybox',
  'flock',
]);

/** Whether `program` is a wrapper whose argv continues with the command it runs (with none, it runs nothing). */
export function isArgvWrapper(program: string): boolean {
  return (
    PLAIN_PEELERS.has(program) ||
    lookup(ARGV_WRAPPERS, program) !== undefined ||
    lookup(MORE_ARGV_WRAPPERS, program) !== undefined
  );
}

/** The program a word names as the shell would look it up (a bare name or an absolute path's basename), or null. */
export function programOf(w: Word | undefined): string | null {
  if (w === undefined || w.dynamic) return null;
  const t = w.text;
  if (!t.includes('/')) return t;
  return t.startsWith('/') || t.startsWith('~') ? t.slice(t.lastIndexOf('/') + 1) : null;
}

/** How many plain wrapper levels follow words[from] (stops counting past `limit`). */
export function chainDepth(words: readonly Word[], from: number, limit: number): number {
  let depth = 0;
  let at = from;
  while (depth <= limit) {
    const program = programOf(words[at]);
    const peel = program === null ? null : peelAt(program, words, at);
    if (peel === null) break;
    depth++;
    at = peel.next;
  }
  return depth;
}

// Commands that run other commands: wrappers whose argv continues with the real command (sudo,
// timeout, nice, env, xargs…), shells and eval that run a string, and find's -exec. Pure functions
// over de-quoted words; the model builder turns each expansion into nested segments. Which options
// take a value (GNU abbreviations included) is in wrapper-options.ts.

import type { Assignment } from './command-model.js';
import { type ParsedArgs, parseOption } from './option-parser.js';
import { type CommandSpec, lookup } from './option-spec.js';
import { isBroadTarget } from './paths.js';
import { SHELLS } from './programs.js';
import { splitPatternWords } from './words.js';
import {
  ARGV_WRAPPERS,
  ENV_OPTIONS,
  TIME_OPTIONS,
  TIMEOUT_OPTIONS,
  type WrapperSpec,
  XARGS_OPTIONS,
} from './wrapper-options.js';

/** One de-quoted word and whether it holds a run-time value. */
export interface Word {
  text: string;
  dynamic: boolean;
  /** for a dynamic word whose value is still known statically (`"$(echo cm0= | base64 -d)"`): that value */
  value?: string;
}

/** What a wrapper runs. */
export type Expansion =
  | {
      kind: 'argv';
      via: string;
      words: Word[];
      assignments?: Assignment[];
      unknownTail?: boolean;
      findBroad?: boolean;
    }
  | { kind: 'script'; via: string; text: string; dynamic: boolean; value?: string };

/** The result of looking at one command as a possible wrapper. */
export interface WrapperExpansion {
  /** the segment only wraps what it runs (find is not: it is a command with -exec children) */
  wrapper: boolean;
  inner: Expansion[];
}

/** Reads the option word words[i] (not `--`) under `spec` into `out`; returns the index after it and its value. */
function readOption(spec: CommandSpec, words: Word[], i: number, out: ParsedArgs): number {
  return (
    i +
    parseOption(
      spec,
      words.slice(i, i + 2).map((w) => w.text),
      0,
      out,
    )
  );
}

const emptyArgs = (): ParsedArgs => ({ options: new Map(), positionals: [], positionalIndex: [] });

/**
 * Skips the options of a wrapper starting at words[from]; returns the index of the first
 * non-option word (the wrapped command), the `NAME=value` assignments found after the options,
 * and the options read.
 */
function skipOptions(
  words: Word[],
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

function argvAfter(via: string, words: Word[], spec: WrapperSpec): WrapperExpansion {
  const { index, assignments } = skipOptions(words, 1, spec);
  if (index >= words.length) return { wrapper: false, inner: [] };
  const inner: Expansion = { kind: 'argv', via, words: words.slice(index) };
  if (assignments.length > 0) inner.assignments = assignments;
  return { wrapper: true, inner: [inner] };
}

function joinWords(words: Word[]): { text: string; dynamic: boolean; value?: string } {
  const out: { text: string; dynamic: boolean; value?: string } = {
    text: words.map((w) => w.text).join(' '),
    dynamic: words.some((w) => w.dynamic),
  };
  if (out.dynamic && words.every((w) => !w.dynamic || w.value !== undefined)) {
    out.value = words.map((w) => (w.dynamic ? w.value : w.text)).join(' ');
  }
  return out;
}

function scriptOf(via: string, w: { text: string; dynamic: boolean; value?: string }): Expansion {
  const e: Expansion = { kind: 'script', via, text: w.text, dynamic: w.dynamic };
  if (w.value !== undefined) e.value = w.value;
  return e;
}

/** `sh -c 'string'`, `bash -lc "…"`, `zsh -c -x '…'`; a shell without `-c` is an ordinary command. */
function shell(words: Word[]): WrapperExpansion {
  let start = 1;
  if (words[0]?.text !== undefined && /(^|\/)busybox$/.test(words[0].text)) {
    const applet = words[1]?.text ?? '';
    if (applet === '' || applet.startsWith('-')) return { wrapper: false, inner: [] };
    // busybox <applet> …: the applet is the command
    if (!SHELLS.has(applet) || applet === 'busybox')
      return { wrapper: true, inner: [{ kind: 'argv', via: 'busybox', words: words.slice(1) }] };
    start = 2;
  }
  let cMode = false;
  let i = start;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--' || w === '-') {
      i++;
      break;
    }
    if (w === '-o' || w === '+o' || w === '-O' || w === '+O' || w === '--rcfile' || w === '--init-file') {
      i++;
      continue;
    }
    if (w.startsWith('--')) continue;
    if ((w.startsWith('-') || w.startsWith('+')) && w.length > 1) {
      if (w.startsWith('-') && w.includes('c')) cMode = true;
      continue;
    }
    break;
  }
  if (!cMode || i >= words.length) return { wrapper: false, inner: [] };
  return { wrapper: true, inner: [scriptOf('sh -c', words[i] as Word)] };
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** find primaries that do not narrow which files are visited */
const FIND_NON_FILTERS = new Set([
  '-depth',
  '-d',
  '-maxdepth',
  '-mindepth',
  '-xdev',
  '-mount',
  '-follow',
  '-print',
  '-print0',
  '-delete',
  '-daystart',
  '-noleaf',
  '-ignore_readdir_race',
  '-noignore_readdir_race',
  '-regextype',
  '-warn',
  '-nowarn',
  '-prune',
  '-true',
  '-ls',
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-H',
  '-L',
  '-P',
  '-O0',
  '-O1',
  '-O2',
  '-O3',
]);

/** The starting points of a find command (words before the first expression word). */
export function findRoots(words: Word[]): Word[] {
  const roots: Word[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-H' || w === '-L' || w === '-P' || /^-O\d$/.test(w) || w === '-D') {
      if (w === '-D') i++;
      continue;
    }
    if (w.startsWith('-') || w === '(' || w === '!' || w === ')') break;
    roots.push(words[i] as Word);
  }
  return roots;
}

/** Whether a find command visits everything under a broad root (no filtering test). */
export function findIsBroad(words: Word[]): boolean {
  const roots = findRoots(words);
  const broadRoot = roots.length === 0 || roots.some((r) => r.dynamic || isBroadTarget(r.text));
  if (!broadRoot) return false;
  for (let i = 1 + roots.length; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (FIND_EXEC.has(w)) {
      // skip the -exec body
      while (i < words.length && (words[i] as Word).text !== ';' && (words[i] as Word).text !== '+') i++;
      continue;
    }
    if (w.startsWith('-') && !FIND_NON_FILTERS.has(w)) return false;
  }
  return true;
}

function find(words: Word[]): WrapperExpansion {
  const inner: Expansion[] = [];
  let broad: boolean | undefined;
  for (let i = 1; i < words.length; i++) {
    if (!FIND_EXEC.has((words[i] as Word).text)) continue;
    const body: Word[] = [];
    let j = i + 1;
    for (; j < words.length; j++) {
      const t = (words[j] as Word).text;
      if (t === ';' || (t === '+' && body.length > 0 && body[body.length - 1]?.text === '{}')) break;
      body.push(words[j] as Word);
    }
    if (body.length > 0) {
      broad ??= findIsBroad(words);
      inner.push({ kind: 'argv', via: 'find -exec', words: body, findBroad: broad });
    }
    i = j;
  }
  return { wrapper: false, inner };
}

function xargs(words: Word[]): WrapperExpansion {
  const opts = emptyArgs();
  let i = 1;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    i = readOption(XARGS_OPTIONS, words, i, opts);
  }
  // -I R, or -i[R] / --replace[=R] (default `{}`): the last one wins
  const replaceI = opts.options.get('I')?.at(-1);
  const replacei = opts.options.get('i')?.at(-1);
  const replace = replacei !== undefined ? replacei || '{}' : replaceI;
  const cmd = i < words.length ? words.slice(i) : [{ text: 'echo', dynamic: false }];
  const inner =
    replace === undefined ? cmd : cmd.map((w) => (w.text.includes(replace) ? { text: w.text, dynamic: true } : w));
  return { wrapper: true, inner: [{ kind: 'argv', via: 'xargs', words: inner, unknownTail: true }] };
}

function env(words: Word[]): WrapperExpansion {
  const assignments: Assignment[] = [];
  const opts = emptyArgs();
  let i = 1;
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
      const next = readOption(ENV_OPTIONS, words, i, opts);
      const str = opts.options.get('split-string')?.[0];
      if (str !== undefined) {
        // env -S 'cmd args' rest…: the string is split into words and the command continues with them
        const dynamic = words.slice(i, next).some((x) => x.dynamic);
        const split = splitPatternWords(str) ?? [str];
        const combined = [...split.map((t) => ({ text: t, dynamic })), ...words.slice(next)];
        return {
          wrapper: true,
          inner: [{ kind: 'argv', via: 'env -S', words: [{ text: 'env', dynamic: false }, ...combined] }],
        };
      }
      i = next;
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
  if (i >= words.length) return { wrapper: false, inner: [] };
  const inner: Expansion = { kind: 'argv', via: 'env', words: words.slice(i) };
  if (assignments.length > 0) inner.assignments = assignments;
  return { wrapper: true, inner: [inner] };
}

function su(words: Word[]): WrapperExpansion {
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-c' || w === '--command') {
      const s = words[i + 1];
      if (s === undefined) break;
      return { wrapper: true, inner: [scriptOf('su', s)] };
    }
    if (w.startsWith('--command=')) {
      return {
        wrapper: true,
        inner: [{ kind: 'script', via: 'su', text: w.slice(10), dynamic: (words[i] as Word).dynamic }],
      };
    }
  }
  return { wrapper: false, inner: [] };
}

function watch(words: Word[]): WrapperExpansion {
  let exec = false;
  let i = 1;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-')) break;
    if (w === '-x' || w === '--exec') exec = true;
    else if (w === '-n' || w === '--interval' || w === '-q' || w === '--equexit') i++;
  }
  if (i >= words.length) return { wrapper: false, inner: [] };
  if (exec) return { wrapper: true, inner: [{ kind: 'argv', via: 'watch', words: words.slice(i) }] };
  return { wrapper: true, inner: [scriptOf('watch', joinWords(words.slice(i)))] };
}

function timeout(words: Word[]): WrapperExpansion {
  const { index } = skipOptions(words, 1, TIMEOUT_OPTIONS);
  // the first word after the options is the duration
  if (index + 1 >= words.length) return { wrapper: false, inner: [] };
  return { wrapper: true, inner: [{ kind: 'argv', via: 'timeout', words: words.slice(index + 1) }] };
}

/** A word as shell text that reads back as the same single word. */
function shellQuote(text: string): string {
  return /^[\w./~+,:@%=-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * GNU time: the command after its options; `-o FILE` (`-a`: appending) writes its report to FILE,
 * which is handed on as the redirect it amounts to (`: > FILE`), so the same rules judge the target.
 */
function time(words: Word[]): WrapperExpansion {
  const { index, options } = skipOptions(words, 1, TIME_OPTIONS);
  if (index >= words.length) return { wrapper: false, inner: [] };
  const inner: Expansion[] = [{ kind: 'argv', via: 'time', words: words.slice(index) }];
  const op = options.options.has('append') ? '>>' : '>';
  for (const file of options.options.get('output') ?? [])
    inner.push({ kind: 'script', via: 'time -o', text: `: ${op} ${shellQuote(file)}`, dynamic: false });
  return { wrapper: true, inner };
}

function commandBuiltin(words: Word[]): WrapperExpansion {
  let i = 1;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    if (w.includes('v') || w.includes('V')) return { wrapper: false, inner: [] };
  }
  if (i >= words.length) return { wrapper: false, inner: [] };
  return { wrapper: true, inner: [{ kind: 'argv', via: 'command', words: words.slice(i) }] };
}

/**
 * Looks at a command (words[0] is its program, de-quoted; `program` its basename) and says what it
 * runs. Returns null for an ordinary command.
 */
export function expandWrapper(program: string, words: Word[]): WrapperExpansion | null {
  if (SHELLS.has(program)) return shell(words);
  switch (program) {
    case 'eval': {
      if (words.length < 2) return null;
      return { wrapper: true, inner: [scriptOf('eval', joinWords(words.slice(1)))] };
    }
    case 'xargs':
      return xargs(words);
    case 'find':
      return find(words);
    case 'env':
      return env(words);
    case 'timeout':
      return timeout(words);
    case 'time':
      return time(words);
    case 'command':
      return commandBuiltin(words);
    case 'su':
      return su(words);
    case 'watch':
      return watch(words);
    default: {
      const spec = lookup(ARGV_WRAPPERS, program);
      if (spec === undefined) return null;
      // sudo -e / -l / -v / -k without a command runs none; sudo -s / -i run a shell
      return argvAfter(program, words, spec);
    }
  }
}

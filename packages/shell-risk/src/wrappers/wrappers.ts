// Commands that run other commands: wrappers whose argv continues with the real command (sudo,
// timeout, nice, env, xargs, flock, unshare, strace…), shells and eval that run a string, find's
// -exec, option values and builtin arguments that are shell code (`tar --to-command=…`,
// `trap '…' EXIT`, `printf -v 'a[$(…)]'`), and a command name that is a glob. Pure functions
// over de-quoted words; the model builder turns each expansion into nested segments. Which options
// take a value (GNU abbreviations included) is in wrapper-options.ts; one level of an argv wrapper
// in wrapper-peel.ts.

import type { Assignment } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { SHELLS } from '../knowledge/programs/programs.js';
import { NEUTRAL_WRAPPERS } from '../knowledge/programs/safe-commands.js';
import { ENV_OPTIONS } from '../options/wrapper-options.js';
import { splitPatternWords } from '../parse/words.js';
import { evaluatedWords } from '../rules/evaluated-words.js';
import { commandStrings } from './command-strings.js';
import { type Expansion, joinWords, scriptOf, type Word, type WrapperExpansion } from './expansion.js';
import { findExec } from './find-exec.js';
import { globbedProgram } from './program-globs.js';
import { replEscapes } from './repl-escapes.js';
import { localSsh, runnerStrings } from './runner-strings.js';
import { capsh, flockString, ksu, machinectl, runuser, script, sg, su, watch } from './user-wrappers.js';
import {
  chainDepth,
  emptyArgs,
  isArgvWrapper,
  MAX_WRAPPERS,
  type Peel,
  peelAt,
  programOf,
  readOption,
} from './wrapper-peel.js';

export { findIsBroad, findRoots } from './find-exec.js';

const NONE: WrapperExpansion = { wrapper: false, inner: [] };

/** `sh -c 'string'`, `bash -lc "…"`, `zsh -c -x '…'`; a shell without `-c` is an ordinary command. */
function shell(words: Word[]): WrapperExpansion {
  let start = 1;
  if (words[0]?.text !== undefined && /(^|\/)busybox$/.test(words[0].text)) {
    const applet = words[1]?.text ?? '';
    if (applet === '' || applet.startsWith('-')) return NONE;
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
  if (!cMode || i >= words.length) return NONE;
  return { wrapper: true, inner: [scriptOf('sh -c', words[i] as Word)] };
}

/** `env -S 'cmd args' rest…`: the string is split into words and the command continues with them. */
function envSplit(words: Word[]): WrapperExpansion | null {
  const opts = emptyArgs();
  let i = 1;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--' || !w.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      if (w === '--' || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) return null;
      i++;
      continue;
    }
    if (w === '-') {
      i++;
      continue;
    }
    const next = readOption(ENV_OPTIONS, words, i, opts);
    const str = opts.options.get('split-string')?.[0];
    if (str !== undefined) {
      const dynamic = words.slice(i, next).some((x) => x.dynamic);
      const split = splitPatternWords(str) ?? [str];
      const combined = [...split.map((t) => ({ text: t, dynamic })), ...words.slice(next)];
      return {
        wrapper: true,
        inner: [{ kind: 'argv', via: 'env -S', words: [{ text: 'env', dynamic: false }, ...combined] }],
      };
    }
    i = next;
  }
  return null;
}

/** The words of the wrapped command, xargs' replace string made a run-time value. */
function wrappedWords(words: readonly Word[], from: number, replaces: readonly string[]): Word[] {
  const rest = words.slice(from);
  if (replaces.length === 0) return rest;
  return rest.map((w) => (replaces.some((r) => w.text.includes(r)) ? { text: w.text, dynamic: true } : w));
}

function argvOf(via: string, words: Word[], peel: Pick<Peel, 'assignments' | 'unknownTail'>): Expansion {
  const e: Expansion = { kind: 'argv', via, words };
  if (peel.assignments.length > 0) e.assignments = peel.assignments;
  if (peel.unknownTail === true) e.unknownTail = true;
  return e;
}

/** One level: the wrapped command, and what the wrapper adds. */
function peeled(program: string, words: Word[], peel: Peel): WrapperExpansion {
  const inner = wrappedWords(words, peel.next, peel.replace === undefined ? [] : [peel.replace]);
  return { wrapper: true, inner: [argvOf(program, inner, peel), ...peel.extra] };
}

/**
 * A chain of more than MAX_WRAPPERS wrappers, judged in one pass: the first wrapper is judged as
 * a command of its own (so the chain is never safe), every other wrapper that is not neutral as a
 * command of its own words (`sudo -u root`: elevated privileges), and the command at the end of
 * the chain with every assignment, replace string and appended argument the chain gives it.
 */
function collapsedChain(words: Word[]): WrapperExpansion {
  const inner: Expansion[] = [];
  const seen = new Set<string>();
  const assignments: Assignment[] = [];
  const replaces: string[] = [];
  let unknownTail = false;
  let at = 0;
  let levels = 0;
  for (;;) {
    const program = programOf(words[at]);
    const peel = program === null ? null : peelAt(program, words, at);
    if (program === null || peel === null) break;
    if (at > 0 && !NEUTRAL_WRAPPERS.has(program)) {
      const own = words.slice(at, peel.next);
      const key = own.map((w) => w.text).join(' ');
      if (!seen.has(key)) {
        seen.add(key);
        inner.push({ kind: 'argv', via: 'wrapper chain', words: own });
      }
    }
    assignments.push(...peel.assignments);
    inner.push(...peel.extra);
    if (peel.replace !== undefined) replaces.push(peel.replace);
    unknownTail ||= peel.unknownTail === true;
    at = peel.next;
    levels++;
  }
  inner.push(argvOf(`${levels} wrappers`, wrappedWords(words, at, replaces), { assignments, unknownTail }));
  return { wrapper: false, inner };
}

/**
 * Looks at a command (words[0] is its program, de-quoted; `program` its basename) and says what it
 * runs. Returns null for an ordinary command.
 */
export function expandWrapper(program: string, words: Word[], homes: KnownHomes): WrapperExpansion | null {
  const glob = globbedProgram(words);
  if (glob !== null) return glob;
  const peel = peelAt(program, words, 0);
  if (peel !== null && chainDepth(words, peel.next, MAX_WRAPPERS) >= MAX_WRAPPERS) return collapsedChain(words);
  const runner = runnerStrings(program, words, peel !== null);
  if (runner !== null) return runner;
  if (SHELLS.has(program)) return shell(words);
  switch (program) {
    case 'eval':
      return words.length < 2 ? null : { wrapper: true, inner: [scriptOf('eval', joinWords(words.slice(1)))] };
    case 'xargs':
      // without a command xargs runs echo
      return peel !== null
        ? peeled('xargs', words, peel)
        : {
            wrapper: true,
            inner: [{ kind: 'argv', via: 'xargs', words: [{ text: 'echo', dynamic: false }], unknownTail: true }],
          };
    case 'find':
      return findExec(words, homes);
    case 'env':
      return envSplit(words) ?? (peel === null ? NONE : peeled('env', words, peel));
    case 'su':
      return su(words);
    case 'runuser':
      return runuser(words);
    case 'ksu':
      return ksu(words);
    case 'sg':
      return sg(words);
    case 'machinectl':
      return machinectl(words);
    case 'capsh':
      return capsh(words);
    case 'script':
      return script(words);
    case 'watch':
      return watch(words);
    case 'toybox': {
      // toybox APPLET …: the applet is the command (a shell applet then runs its -c string)
      const applet = words[1];
      return applet === undefined || applet.dynamic || applet.text.startsWith('-')
        ? NONE
        : { wrapper: true, inner: [{ kind: 'argv', via: 'toybox', words: words.slice(1) }] };
    }
    case 'flock':
      return flockString(words) ?? (peel === null ? NONE : peeled('flock', words, peel));
    default:
      break;
  }
  if (peel !== null) return peeled(program, words, peel);
  // a wrapper given no command runs none (`sudo -l`, `nice`, `timeout 5`)
  if (isArgvWrapper(program)) return NONE;
  const code = merged([
    ...commandStrings(program, words),
    ...evaluatedWords(program, words),
    ...localSsh(program, words),
    ...replEscapes(program, words),
  ]);
  return code.length === 0 ? null : { wrapper: false, inner: code };
}

/** More command strings than this from one command are parsed as one script per `via` (one parse, not thousands). */
const MAX_STRINGS = 8;

/** The expansions without repeats; many static strings of one kind joined into one script (a line each). */
function merged(all: readonly Expansion[]): Expansion[] {
  const seen = new Set<string>();
  const unique = all.filter((e) => {
    const key = e.kind === 'script' ? `${e.via}\0${e.text}\0${e.dynamic}` : JSON.stringify(e);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length <= MAX_STRINGS) return unique;
  const out: Expansion[] = [];
  const scripts = new Map<string, string[]>();
  for (const e of unique) {
    if (e.kind !== 'script' || e.dynamic) out.push(e);
    else scripts.set(e.via, [...(scripts.get(e.via) ?? []), e.text]);
  }
  for (const [via, texts] of scripts) out.push({ kind: 'script', via, text: texts.join('\n'), dynamic: false });
  return out;
}

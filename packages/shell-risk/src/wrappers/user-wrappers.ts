// Wrappers that run a command string or run as another user or group: `su -c`, `runuser`, `ksu`,
// `sg GROUP CMD`, `machinectl shell`, `capsh -- …`, `script -c`, `watch`, `flock FILE -c`. Each
// says what it runs (a string for `sh -c`, or an argv); privilege is judged by programs.ts.

import { parseWithSpec } from '../options/option-parser.js';
import { same } from '../options/option-spec.js';
import { ARGV_WRAPPERS, type WrapperSpec } from '../options/wrapper-options.js';
import { type Expansion, joinWords, scriptOf, type Word, type WrapperExpansion } from './expansion.js';
import { emptyArgs, shellQuote, skipOptions } from './wrapper-peel.js';

const NONE: WrapperExpansion = { wrapper: false, inner: [] };

export function su(words: Word[]): WrapperExpansion {
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-c' || w === '--command' || w === '--session-command') {
      const s = words[i + 1];
      if (s === undefined) break;
      return { wrapper: true, inner: [scriptOf('su', s)] };
    }
    const m = /^--(?:session-)?command=/.exec(w);
    if (m !== null) {
      return {
        wrapper: true,
        inner: [{ kind: 'script', via: 'su', text: w.slice(m[0].length), dynamic: (words[i] as Word).dynamic }],
      };
    }
  }
  return NONE;
}

export function watch(words: Word[]): WrapperExpansion {
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
  if (i >= words.length) return NONE;
  if (exec) return { wrapper: true, inner: [{ kind: 'argv', via: 'watch', words: words.slice(i) }] };
  return { wrapper: true, inner: [scriptOf('watch', joinWords(words.slice(i)))] };
}

/** util-linux runuser: `-u USER CMD…` runs an argv; otherwise it is su (`runuser - root -c '…'`). */
const RUNUSER: WrapperSpec = {
  short: { l: 'login', m: 'preserve', p: 'preserve', f: 'fast', P: 'pty', h: 'help', V: 'version' },
  shortArg: { u: 'user', g: 'group', G: 'supp-group', s: 'shell', c: 'command', w: 'whitelist-environment' },
  long: same('login', 'preserve-environment', 'fast', 'pty', 'help', 'version'),
  longArg: same('user', 'group', 'supp-group', 'shell', 'command', 'session-command', 'whitelist-environment'),
  gnuPrefix: true,
};

export function runuser(words: Word[]): WrapperExpansion {
  const { index, options } = skipOptions(words, 1, RUNUSER);
  if (!options.options.has('user')) return su(words);
  return index < words.length
    ? { wrapper: true, inner: [{ kind: 'argv', via: 'runuser', words: words.slice(index) }] }
    : NONE;
}

/** Kerberos ksu: `ksu [USER] [opts] -e CMD ARGS…` runs an argv, `-a ARGS…` hands ARGS to the shell. */
export function ksu(words: Word[]): WrapperExpansion {
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-e' && i + 1 < words.length)
      return { wrapper: true, inner: [{ kind: 'argv', via: 'ksu', words: words.slice(i + 1) }] };
    if (w === '-a')
      return {
        wrapper: true,
        inner: [{ kind: 'argv', via: 'ksu', words: [{ text: 'sh', dynamic: false }, ...words.slice(i + 1)] }],
      };
  }
  return NONE;
}

/** `sg [-] GROUP [-c] COMMAND`: the command is a string /bin/sh runs. */
export function sg(words: Word[]): WrapperExpansion {
  let i = 1;
  if (words[i]?.text === '-') i++;
  i++; // the group
  if (words[i]?.text === '-c') i++;
  if (i >= words.length) return NONE;
  return { wrapper: true, inner: [scriptOf('sg', joinWords(words.slice(i)))] };
}

/** `machinectl shell|login [opts] [[USER@]MACHINE [PATH [ARGS…]]]`: PATH and ARGS run on that machine (`.host`: this one). */
export function machinectl(words: Word[]): WrapperExpansion {
  const ops: number[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      for (let k = i + 1; k < words.length; k++) ops.push(k);
      break;
    }
    if (/^-[EMHp]$|^--(?:setenv|machine|host|property|uid)$/.test(w)) i++;
    else if (!w.startsWith('-')) ops.push(i);
  }
  const sub = ops[0] === undefined ? '' : (words[ops[0]] as Word).text;
  if (sub !== 'shell') return NONE;
  const path = ops[2];
  return path === undefined
    ? NONE
    : { wrapper: true, inner: [{ kind: 'argv', via: 'machinectl shell', words: words.slice(path) }] };
}

/** `capsh [opts] -- ARGS…`: ARGS go to /bin/bash (or `--shell=PROG`); `== ARGS` runs capsh again. */
export function capsh(words: Word[]): WrapperExpansion {
  let shell = 'bash';
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w.startsWith('--shell=')) shell = w.slice(8);
    if (w === '--' || w === '==') {
      const prog = { text: w === '--' ? shell : 'capsh', dynamic: false };
      return { wrapper: true, inner: [{ kind: 'argv', via: 'capsh', words: [prog, ...words.slice(i + 1)] }] };
    }
  }
  return NONE;
}

/** util-linux script: `-c CMD` is run by the shell; the typescript and log files are written. */
const SCRIPT: WrapperSpec = {
  short: { a: 'append', e: 'return', f: 'flush', q: 'quiet', h: 'help', V: 'version' },
  shortArg: {
    c: 'command',
    E: 'echo',
    B: 'log-io',
    I: 'log-in',
    O: 'log-out',
    T: 'log-timing',
    m: 'logging-format',
    o: 'output-limit',
  },
  shortOptArg: { t: 'timing' },
  long: same('append', 'return', 'flush', 'force', 'quiet', 'timing', 'help', 'version'),
  longArg: same('command', 'echo', 'log-io', 'log-in', 'log-out', 'log-timing', 'logging-format', 'output-limit'),
  gnuPrefix: true,
};

export function script(words: Word[]): WrapperExpansion {
  const p = emptyArgs();
  parseWithSpec(
    SCRIPT,
    words.map((w) => w.text),
    1,
    p,
    false,
  );
  const inner: Expansion[] = [];
  const op = p.options.has('append') ? '>>' : '>';
  const written = [
    ...p.positionals.slice(0, 1),
    ...['log-io', 'log-in', 'log-out', 'log-timing'].flatMap((o) => p.options.get(o) ?? []),
    ...(p.options.get('timing') ?? []).filter((f) => f !== ''),
  ];
  for (const file of written)
    inner.push({ kind: 'script', via: 'script', text: `: ${op} ${shellQuote(file)}`, dynamic: false });
  const cmd = p.options.get('command')?.at(-1);
  if (cmd !== undefined) {
    const dynamic = words.some((w) => w.dynamic && w.text.includes(cmd));
    inner.push({ kind: 'script', via: 'script -c', text: cmd, dynamic });
  }
  return { wrapper: cmd !== undefined, inner };
}

/** `flock [opts] FILE -c STRING`; the argv form (`flock FILE CMD…`) is a plain peel. */
export function flockString(words: Word[]): WrapperExpansion | null {
  const { index } = skipOptions(words, 1, ARGV_WRAPPERS.flock as WrapperSpec);
  const c = words[index + 1];
  if (c === undefined) return null;
  if ((c.text === '-c' || c.text === '--command') && words[index + 2] !== undefined)
    return { wrapper: true, inner: [scriptOf('flock -c', words[index + 2] as Word)] };
  if (c.text.startsWith('--command='))
    return { wrapper: true, inner: [{ kind: 'script', via: 'flock -c', text: c.text.slice(10), dynamic: c.dynamic }] };
  return null;
}

// Runners whose command is a string or is not the plain rest of their argv: `parallel ::: 'CMD'`,
// tmux `new-session` / `new-window` / `split-window` / `send-keys … Enter`, `nix-shell --run`,
// `hyperfine 'CMD'`, `entr -s 'CMD'`, `npm exec -c` / `npx -c` / `doppler run --command`,
// `cross-env-shell`, `start-stop-daemon --start --exec PROG -- ARGS`, `ssh localhost CMD` (it runs
// on this machine), `rimraf PATH` (an `rm -rf`), `grm` and `coreutils --coreutils-prog=rm` (the
// program they name). Each is handed on as shell code or argv and judged as if run directly.

import { type ParsedArgs, parseOption } from '../options/option-parser.js';
import { type CommandSpec, same } from '../options/option-spec.js';
import { G_PREFIXED, NODE_RUNNER, NPX_LIKE } from '../options/wrapper-options.js';
import { code } from './command-strings.js';
import type { Expansion, Word, WrapperExpansion } from './expansion.js';

const emptyArgs = (): ParsedArgs => ({ options: new Map(), positionals: [], positionalIndex: [] });

/** The options of `spec` from words[from] on; the index of the first operand (after a `--`) and the options read. */
function options(words: readonly Word[], from: number, spec: CommandSpec): { index: number; opts: ParsedArgs } {
  const opts = emptyArgs();
  let i = from;
  while (i < words.length) {
    const w = (words[i] as Word).text;
    if (w === '--') return { index: i + 1, opts };
    if (!w.startsWith('-') || w === '-') break;
    const b = words[i + 1]?.text;
    i += parseOption(spec, b === undefined ? [w] : [w, b], 0, opts);
  }
  return { index: i, opts };
}

/** The words as one shell string (a run-time value if any word is one). */
function joined(via: string, words: readonly Word[]): Expansion[] {
  if (words.length === 0) return [];
  return [
    code(
      via,
      words.map((w) => w.text).join(' '),
      words.some((w) => w.dynamic),
    ),
  ];
}

const wrapped = (inner: Expansion[]): WrapperExpansion | null => (inner.length === 0 ? null : { wrapper: true, inner });

/** `parallel [options] ::: CMD…` (no command before `:::`): each argument is a command line. */
function parallelArgs(program: string, words: readonly Word[]): WrapperExpansion | null {
  const k = words.findIndex((w) => /^:::+\+?$/.test(w.text));
  if (k < 0) return null;
  const args = words.slice(k + 1).filter((w) => !/^:::+\+?$/.test(w.text));
  return wrapped(args.map((w) => code(`${program} :::`, w.text, w.dynamic)));
}

/** tmux options and subcommands that take a value, by subcommand. */
const TMUX_GLOBAL: CommandSpec = { short: same(...'2CDlNuvV'), shortArg: same(...'cfLST') };
const TMUX_RUN: Readonly<Record<string, CommandSpec>> = {
  'new-session': { short: same(...'AdDEPX'), shortArg: same(...'cefFnstxy') },
  'new-window': { short: same(...'abdkPS'), shortArg: same(...'ceFnt') },
  'split-window': { short: same(...'bdfhIvPZ'), shortArg: same(...'ceFlpt') },
  'respawn-pane': { short: same(...'k'), shortArg: same(...'cet') },
  'run-shell': { short: same(...'bC'), shortArg: same(...'dct') },
  'display-popup': { short: same(...'BCEk'), shortArg: same(...'bcdehsStTwxy') },
};
const TMUX_ALIAS: Readonly<Record<string, string>> = {
  new: 'new-session',
  neww: 'new-window',
  splitw: 'split-window',
  respawnp: 'respawn-pane',
  'respawn-window': 'respawn-pane',
  respawnw: 'respawn-pane',
  run: 'run-shell',
  popup: 'display-popup',
};
const ENTER = /^(?:Enter|C-m|C-j|KPEnter|\^M)$/;

/** tmux: `-c CMD`, a new session / window / pane / popup running CMD, or keys typed into a pane ending in Enter. */
function tmux(words: readonly Word[]): WrapperExpansion | null {
  const global = options(words, 1, TMUX_GLOBAL);
  const out: Expansion[] = (global.opts.options.get('c') ?? []).map((c) =>
    code(
      'tmux -c',
      c,
      words.some((w) => w.dynamic),
    ),
  );
  const subWord = words[global.index];
  if (subWord === undefined || subWord.dynamic) return wrapped(out);
  const sub = TMUX_ALIAS[subWord.text] ?? subWord.text;
  const spec = Object.hasOwn(TMUX_RUN, sub) ? TMUX_RUN[sub] : undefined;
  if (spec !== undefined) {
    const { index } = options(words, global.index + 1, spec);
    const rest = words.slice(index);
    const end = rest.findIndex((w) => w.text === ';' || w.text === '\\;');
    out.push(...joined(`tmux ${sub}`, end < 0 ? rest : rest.slice(0, end)));
  } else if (sub === 'send-keys' || sub === 'send') {
    const { index, opts } = options(words, global.index + 1, { short: same(...'FHKlMRX'), shortArg: same(...'Nt') });
    const keys = words.slice(index);
    const enter = keys.findIndex((w) => ENTER.test(w.text) || w.text.includes('\n'));
    if (enter >= 0 || opts.options.has('l')) {
      const typed = keys.slice(0, enter < 0 ? keys.length : enter + 1).map((w) => ({
        text: w.text === 'Space' ? ' ' : ENTER.test(w.text) ? '' : w.text,
        dynamic: w.dynamic,
      }));
      const text = typed.map((w) => w.text).join('');
      if (text.trim() !== '')
        out.push(
          code(
            'tmux send-keys',
            text,
            typed.some((w) => w.dynamic),
          ),
        );
    }
  }
  return wrapped(out);
}

const HYPERFINE: CommandSpec = {
  short: same(...'iNh'),
  shortArg: {
    w: 'warmup',
    m: 'min-runs',
    M: 'max-runs',
    r: 'runs',
    s: 'setup',
    p: 'prepare',
    c: 'cleanup',
    S: 'shell',
    u: 'time-unit',
    n: 'command-name',
  },
  long: same('ignore-failure', 'show-output', 'help', 'version'),
  longArg: same(
    'warmup',
    'min-runs',
    'max-runs',
    'runs',
    'setup',
    'prepare',
    'conclude',
    'cleanup',
    'shell',
    'style',
    'sort',
    'time-unit',
    'export-asciidoc',
    'export-csv',
    'export-json',
    'export-markdown',
    'export-orgmode',
    'output',
    'input',
    'command-name',
    'reference',
  ),
};
const HYPERFINE_CODE = ['setup', 'prepare', 'conclude', 'cleanup', 'reference'];

/** hyperfine: every operand is a command line, and so are --setup / --prepare / --conclude / --cleanup / --reference. */
function hyperfine(words: readonly Word[]): WrapperExpansion | null {
  const out: Expansion[] = [];
  const opts = emptyArgs();
  for (let i = 1; i < words.length;) {
    const w = words[i] as Word;
    if (w.text.startsWith('-') && w.text !== '-') {
      const b = words[i + 1];
      // -P / -L take more than one value
      if (w.text === '-P' || w.text === '--parameter-scan') i += 4;
      else if (
        w.text === '-L' ||
        w.text === '--parameter-list' ||
        w.text === '-D' ||
        w.text === '--parameter-step-size'
      )
        i += w.text === '-D' || w.text === '--parameter-step-size' ? 2 : 3;
      else i += parseOption(HYPERFINE, b === undefined ? [w.text] : [w.text, b.text], 0, opts);
      continue;
    }
    out.push(code('hyperfine', w.text, w.dynamic));
    i++;
  }
  for (const name of HYPERFINE_CODE)
    for (const v of opts.options.get(name) ?? []) out.push(code(`hyperfine --${name}`, v, false));
  return wrapped(out);
}

/** `entr -s 'CMD'`: the string runs in $SHELL (without -s, entr runs the rest of its argv: a plain wrapper). */
function entr(words: readonly Word[]): WrapperExpansion | null {
  const { index, opts } = options(words, 1, { short: same(...'acdnprsz') });
  const cmd = words[index];
  return opts.options.has('s') && cmd !== undefined ? wrapped([code('entr -s', cmd.text, cmd.dynamic)]) : null;
}

/** nix-shell / nix develop `--run CMD` / `--command CMD`. */
function nixShell(words: readonly Word[]): WrapperExpansion | null {
  const out: Expansion[] = [];
  for (let i = 1; i + 1 < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--run' || w === '--command' || w === '-c') {
      const v = words[++i] as Word;
      out.push(code(`nix-shell ${w}`, v.text, v.dynamic));
    }
  }
  return wrapped(out);
}

/** `npm exec -c CMD`, `npx -c CMD`, `pnpm exec -c`: --call runs a string in a shell. */
function nodeCall(words: readonly Word[], from: number): WrapperExpansion | null {
  const { opts } = options(words, from, NODE_RUNNER);
  return wrapped(
    (opts.options.get('call') ?? []).map((c) =>
      code(
        'npm exec --call',
        c,
        words.some((w) => w.dynamic),
      ),
    ),
  );
}

/** `doppler run --command CMD`. */
function doppler(words: readonly Word[]): WrapperExpansion | null {
  const out: Expansion[] = [];
  for (let i = 2; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.text === '--') break;
    if (w.text === '--command' && words[i + 1] !== undefined)
      out.push(code('doppler --command', (words[i + 1] as Word).text, (words[i + 1] as Word).dynamic));
    else if (w.text.startsWith('--command=')) out.push(code('doppler --command', w.text.slice(10), w.dynamic));
  }
  return wrapped(out);
}

/** start-stop-daemon --start --exec / --startas PROG [-- ARGS]: PROG runs with ARGS. */
function startStopDaemon(words: readonly Word[]): WrapperExpansion | null {
  let start = false;
  let prog: Word | undefined;
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.text === '--') {
      i++;
      break;
    }
    if (w.text === '--start' || /^-[a-zA-Z]*S[a-zA-Z]*$/.test(w.text)) start = true;
    const m = /^--(exec|startas)=(.*)$/s.exec(w.text);
    if (m !== null) prog = { text: m[2] as string, dynamic: w.dynamic };
    else if (w.text === '--exec' || w.text === '--startas' || w.text === '-x' || w.text === '-a') prog = words[++i];
  }
  if (!start || prog === undefined) return null;
  return wrapped([{ kind: 'argv', via: 'start-stop-daemon', words: [prog, ...words.slice(i)] }]);
}

const SSH_VALUE = /^-[46AaCfGgKkMNnqsTtVvXxYy]*[BbcDEeFIiJLlmOoPpQRSWw]$/;
const LOOPBACK = /^(?:localhost|localhost\.localdomain|ip6-localhost|127(?:\.\d{1,3}){3}|::1|\[::1\]|0\.0\.0\.0|0)$/i;

/** `ssh [options] [user@]localhost CMD…`: the command runs on this machine, through the user's shell. */
function sshLocal(words: readonly Word[]): Expansion[] {
  let i = 1;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-')) break;
    if (SSH_VALUE.test(w)) i++;
  }
  const host = words[i];
  if (host === undefined || host.dynamic) return [];
  const name = host.text.replace(/^ssh:\/\//, '').replace(/^[^@]*@/, '');
  if (!LOOPBACK.test(name)) return [];
  return joined('ssh localhost', words.slice(i + 1));
}

const RIMRAF = new Set(['rimraf', 'del-cli', 'trash-empty']);

/** `rimraf PATH…` (also fetched by npx): removes each path recursively, like `rm -rf`. */
function rimraf(words: readonly Word[]): WrapperExpansion {
  const rest = words
    .slice(1)
    .filter((w) => !/^(?:-[gGvVi]|--(?:glob|verbose|interactive|preserve-root|impl=.*))$/.test(w.text));
  return {
    wrapper: false,
    inner: [
      {
        kind: 'argv',
        via: words[0]?.text ?? 'rimraf',
        words: [{ text: 'rm', dynamic: false }, { text: '-rf', dynamic: false }, ...rest],
      },
    ],
  };
}

/** `grm -rf ~` (a GNU program under its g-prefixed name), `coreutils --coreutils-prog=rm -rf ~`: the named program. */
function renamed(program: string, words: readonly Word[]): WrapperExpansion | null {
  if (program.startsWith('g') && G_PREFIXED.has(program.slice(1)))
    return wrapped([
      { kind: 'argv', via: program, words: [{ text: program.slice(1), dynamic: false }, ...words.slice(1)] },
    ]);
  if (program === 'coreutils') {
    const m = /^--coreutils-prog=(.+)$/s.exec(words[1]?.text ?? '');
    if (m !== null)
      return wrapped([
        {
          kind: 'argv',
          via: 'coreutils',
          words: [{ text: m[1] as string, dynamic: words[1]?.dynamic === true }, ...words.slice(2)],
        },
      ]);
  }
  return null;
}

/**
 * What a runner whose command is a string (or not the plain rest of its argv) runs, or null when
 * `program` is no such runner here (its argv, if any, is peeled as a plain wrapper).
 */
export function runnerStrings(program: string, words: readonly Word[], peeled: boolean): WrapperExpansion | null {
  switch (program) {
    case 'parallel':
    case 'sem':
      return peeled ? null : parallelArgs(program, words);
    case 'tmux':
      return tmux(words);
    case 'hyperfine':
      return hyperfine(words);
    case 'entr':
      return entr(words);
    case 'nix-shell':
    case 'nix':
      return nixShell(words);
    case 'npm':
    case 'pnpm':
      return nodeCall(words, 2);
    case 'yarn': {
      // yarn 2+ runs `yarn exec "CMD ARGS"` through a shell
      const rest = words.slice(2);
      return words[1]?.text === 'exec' && rest.length === 1 && /\s/.test((rest[0] as Word).text)
        ? wrapped(joined('yarn exec', rest))
        : null;
    }
    case 'doppler':
      return doppler(words);
    case 'cross-env-shell':
      return wrapped(
        joined(
          'cross-env-shell',
          words.slice(1).filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text)),
        ),
      );
    case 'start-stop-daemon':
      return startStopDaemon(words);
    default:
      if (NPX_LIKE.has(program)) return nodeCall(words, 1);
      if (RIMRAF.has(program)) return rimraf(words);
      return peeled ? null : renamed(program, words);
  }
}

/** `ssh localhost CMD`: the command, judged as run here (ssh itself stays judged as ssh). */
export function localSsh(program: string, words: readonly Word[]): Expansion[] {
  return program === 'ssh' ? sshLocal(words) : [];
}

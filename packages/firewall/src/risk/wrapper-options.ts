// Option tables of the commands that run other commands (sudo, env, time, xargs…): which options
// take a value, so that the word after them is not taken for the program they run. Long options
// are listed in full, with and without a value, so that a GNU abbreviation (`env --sp=…`,
// `time --o FILE`) resolves to the option getopt_long would pick.

import { type CommandSpec, same } from './option-spec.js';

/** A wrapper's options, and how the words after them read. */
export interface WrapperSpec extends CommandSpec {
  /** a `NAME=value` word after the options is an assignment (sudo, env) */
  assignments?: boolean;
  /** numeric `-N` is an option (nice -10) */
  numeric?: boolean;
}

/** Each letter of `s` as a short option named by itself. */
const letters = (s: string): Record<string, string> => same(...s);

/** GNU env (and the BSD `-P altpath`); `-S` / `--split-string` is handled by the caller. */
export const ENV_OPTIONS: CommandSpec = {
  short: { i: 'ignore-environment', 0: 'null', v: 'debug' },
  shortArg: { u: 'unset', C: 'chdir', S: 'split-string', P: 'path' },
  long: same(
    'ignore-environment',
    'null',
    'debug',
    'help',
    'version',
    'list-signal-handling',
    // these take a value only as `=SIG`
    'block-signal',
    'default-signal',
    'ignore-signal',
  ),
  longArg: same('unset', 'chdir', 'split-string'),
  gnuPrefix: true,
};

/** GNU xargs; canonical names are the short letters (`--replace[=R]` is `-i[R]`). */
export const XARGS_OPTIONS: CommandSpec = {
  short: letters('0oprtx'),
  shortArg: letters('adEILnPs'),
  shortOptArg: letters('eil'),
  long: {
    null: '0',
    'open-tty': 'o',
    interactive: 'p',
    'no-run-if-empty': 'r',
    verbose: 't',
    exit: 'x',
    'show-limits': 'show-limits',
    help: 'help',
    version: 'version',
    // optional values, only as `=value`
    eof: 'e',
    replace: 'i',
    'max-lines': 'l',
  },
  longArg: {
    'arg-file': 'a',
    delimiter: 'd',
    'max-args': 'n',
    'max-chars': 's',
    'max-procs': 'P',
    'process-slot-var': 'process-slot-var',
  },
  gnuPrefix: true,
};

/** GNU time: `-o FILE` writes (with `-a` appends) its report to FILE. */
export const TIME_OPTIONS: WrapperSpec = {
  short: { a: 'append', p: 'portability', q: 'quiet', v: 'verbose', V: 'version' },
  shortArg: { f: 'format', o: 'output' },
  long: same('append', 'help', 'portability', 'quiet', 'verbose', 'version'),
  longArg: { format: 'format', output: 'output', 'output-file': 'output' },
  gnuPrefix: true,
};

/** The wrappers whose argv continues, after their options, with the command they run. */
export const ARGV_WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    shortArg: letters('acgCDprtTuUR'),
    shortOptArg: { h: 'host' },
    long: same(
      'askpass',
      'background',
      'bell',
      'preserve-env',
      'edit',
      'help',
      'set-home',
      'login',
      'remove-timestamp',
      'reset-timestamp',
      'list',
      'non-interactive',
      'preserve-groups',
      'stdin',
      'shell',
      'version',
      'validate',
    ),
    longArg: same(
      'auth-type',
      'login-class',
      'user',
      'group',
      'close-from',
      'chdir',
      'host',
      'prompt',
      'role',
      'type',
      'command-timeout',
      'other-user',
      'chroot',
    ),
    gnuPrefix: true,
    assignments: true,
  },
  doas: { shortArg: letters('aCu') },
  nice: {
    shortArg: letters('n'),
    long: same('help', 'version'),
    longArg: same('adjustment'),
    gnuPrefix: true,
    numeric: true,
  },
  ionice: {
    shortArg: letters('cnpPu'),
    long: same('ignore', 'help', 'version'),
    longArg: same('class', 'classdata', 'pid', 'pgid', 'uid'),
    gnuPrefix: true,
  },
  nohup: { long: same('help', 'version'), gnuPrefix: true },
  setsid: { long: same('ctty', 'fork', 'wait', 'help', 'version'), gnuPrefix: true },
  builtin: {},
  exec: { shortArg: letters('a') },
  stdbuf: {
    shortArg: letters('ioe'),
    long: same('help', 'version'),
    longArg: same('input', 'output', 'error'),
    gnuPrefix: true,
  },
  noglob: {},
  nocorrect: {},
  chronic: {},
  unbuffer: {},
};

/** coreutils timeout (its first operand is the duration). */
export const TIMEOUT_OPTIONS: CommandSpec = {
  shortArg: letters('sk'),
  short: { v: 'verbose' },
  long: same('foreground', 'preserve-status', 'verbose', 'help', 'version'),
  longArg: same('signal', 'kill-after'),
  gnuPrefix: true,
};

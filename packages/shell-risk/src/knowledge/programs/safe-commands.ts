// The read-only safe list: commands that only read and print, with the per-tool options that make
// them write or run something else (find -exec/-delete/-fprint, rg --pre, git -c / --output,
// sort -o, sed without -n…p). A command is `safe` only when every segment passes this check.
// A long option counts in every GNU abbreviation (`sort --co=sh` is --compress-program), a short
// one anywhere in a cluster (`tree -ao f`).

import { steersPrograms } from '../../flow/exported-variables.js';
import {
  GIT_CONFIG,
  GIT_CONFIG_READS,
  GIT_CONFIG_WRITES,
  gitConfigShowsCredential,
} from '../../options/git-options.js';
import { grepRecursesIntoSecrets } from '../../options/grep-directories.js';
import { abbreviatesAny, type ParsedArgs, parseWithSpec } from '../../options/option-parser.js';
import { type CommandSpec, lookup } from '../../options/option-spec.js';
import { ENV_OPTIONS } from '../../options/wrapper-options.js';
import type { KnownHomes } from '../places/known-homes.js';

/** Commands that only read and print, whatever their arguments. */
const ALWAYS_SAFE = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'pwd',
  'echo',
  'which',
  'whereis',
  'type',
  'stat',
  'du',
  'df',
  'cut',
  'tr',
  'jq',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'true',
  'false',
  ':',
  'whoami',
  'id',
  'uname',
  'nl',
  'tac',
  'rev',
  'comm',
  'cmp',
  'diff',
  'md5sum',
  'sha1sum',
  'sha224sum',
  'sha256sum',
  'sha384sum',
  'sha512sum',
  'shasum',
  'b2sum',
  'cksum',
  'sum',
  'od',
  'hexdump',
  'strings',
  'column',
  'fold',
  'fmt',
  'paste',
  'join',
  'expand',
  'unexpand',
  'seq',
  'expr',
  'sleep',
  'uptime',
  'nproc',
  'locale',
  'tty',
  'groups',
  'arch',
  'printenv',
  'cd',
  'free',
  'logname',
  'users',
  'who',
  'numfmt',
  'getconf',
  'cal',
  'look',
  'lsblk',
  'pgrep',
]);

/** `homes`: the judging assessor's (known-homes.ts), for the checks that read paths (grep -r over a home). */
type Check = (args: string[], homes: KnownHomes) => boolean;

const shortHas = (a: string, letters: string): boolean =>
  a.startsWith('-') && !a.startsWith('--') && [...a.slice(1)].some((c) => letters.includes(c));
const positionals = (args: string[]): string[] => args.filter((a) => !a.startsWith('-') || a === '-');
/** `-X` in a cluster or an abbreviation of one of `long`. */
const hasOption = (a: string, short: string, long: readonly string[]): boolean =>
  shortHas(a, short) || abbreviatesAny(a, long);
const parse = (spec: CommandSpec, args: string[]): ParsedArgs => {
  const out: ParsedArgs = { options: new Map(), positionals: [], positionalIndex: [] };
  parseWithSpec(spec, args, 0, out, false);
  return out;
};

const FIND_UNSAFE = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
]);
const GIT_SAFE_SUBCOMMANDS = new Set([
  'status',
  'log',
  'diff',
  'show',
  'rev-parse',
  'ls-files',
  'blame',
  'describe',
  'shortlog',
  'grep',
  'ls-tree',
  'merge-base',
  'rev-list',
  'for-each-ref',
  'count-objects',
  'name-rev',
  'show-ref',
  'whatchanged',
  'check-ignore',
  'branch',
  'tag',
  'remote',
  'config',
  'stash',
  'worktree',
  'reflog',
  'version',
]);
/** Options of the read-only git subcommands that write a file or run a program (-O: grep's pager). */
const gitUnsafeArg = (a: string): boolean =>
  hasOption(a, 'O', ['output', 'ext-diff', 'open-files-in-pager', 'exec', 'upload-pack']);

/**
 * `git config` only reads: the first operand (after the options and their values) is `get` or
 * `list` (git ≥ 2.46), or a read action (`--get`, `-l`…) is given; never with a write action or
 * an option git would not take as one of its own.
 */
function gitConfigReads(args: string[]): boolean {
  const p = parse(GIT_CONFIG, args);
  const names = [...p.options.keys()];
  if (names.some((o) => GIT_CONFIG_WRITES.has(o) || o.startsWith('-'))) return false;
  const first = p.positionals[0];
  // `git config user.email`: one key, no action, is a read of it
  const plainRead = p.positionals.length === 1 && /^[A-Za-z0-9-]+\.[^=\s]+$/.test(first as string);
  const reads = first === 'get' || first === 'list' || plainRead || names.some((o) => GIT_CONFIG_READS.has(o));
  return reads && !gitConfigShowsCredential(p);
}

const GIT_BRANCH_WRITES = [
  'delete',
  'move',
  'copy',
  'set-upstream-to',
  'set-upstream',
  'unset-upstream',
  'edit-description',
  'force',
  'track',
  'no-track',
  'create-reflog',
  'recurse-submodules',
];
const GIT_TAG_WRITES = [
  'delete',
  'annotate',
  'sign',
  'force',
  'message',
  'file',
  'local-user',
  'edit',
  'create-reflog',
];

function gitSafe(args: string[]): boolean {
  // global options other than --no-pager / -P are not safe (-c, -C, --git-dir, --exec-path, …)
  let i = 0;
  while (i < args.length && (args[i] === '--no-pager' || args[i] === '-P' || args[i] === '--no-optional-locks')) i++;
  const sub = args[i];
  if (sub === undefined || sub.startsWith('-') || !GIT_SAFE_SUBCOMMANDS.has(sub)) return false;
  const rest = args.slice(i + 1);
  if (rest.some(gitUnsafeArg)) return false;
  switch (sub) {
    case 'branch':
      if (rest.some((a) => hasOption(a, 'dDmMcCuft', GIT_BRANCH_WRITES))) return false;
      return positionals(rest).length === 0 || rest.some((a) => a === '-l' || a === '--list');
    case 'tag':
      if (rest.some((a) => hasOption(a, 'dasfmFue', GIT_TAG_WRITES))) return false;
      return positionals(rest).length === 0 || rest.some((a) => a === '-l' || a === '--list');
    case 'remote':
      return rest.every((a) => a === '-v' || a === '--verbose') || (rest[0] === 'get-url' && rest.length <= 3);
    case 'config':
      return gitConfigReads(rest);
    case 'stash':
      return rest[0] === 'list' || rest[0] === 'show';
    case 'worktree':
      return rest[0] === 'list';
    case 'reflog':
      return rest.length === 0 || rest[0] === 'show' || rest[0]?.startsWith('-') === true;
    default:
      return true;
  }
}

const ENV_PRINTS = new Set(['ignore-environment', 'null', 'debug', 'help', 'version']);

/** ps options whose value is the next word (UNIX `-o fmt`, `-u user`…; BSD `o fmt`, `p pid`…). */
const PS_UNIX_ARG =
  /^-[A-Za-z]*[oOpqUuGgCstk]$|^--(?:format|sort|pid|ppid|quick-pid|user|User|group|Group|sid|tty|cols|columns|rows|lines|width|context|forest-depth)$/;
const PS_BSD_ARG = /[oOpUk]$/;

/**
 * ps: a BSD-style option word (no dash) with `e` prints every listed process's environment, the
 * secrets of other programs included (`ps eww`, `ps auxe`); `-e` only selects every process.
 */
function psSafe(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('-')) {
      if (PS_UNIX_ARG.test(a)) i++;
      continue;
    }
    if (a.includes('e')) return false;
    if (PS_BSD_ARG.test(a)) i++;
  }
  return true;
}

/** A variable name with a subscript bash evaluates (`a[$(cmd)]`, `a[$i]`): the builtin runs what it expands. */
const evaluatedSubscript = (name: string | undefined): boolean => {
  const open = name?.indexOf('[') ?? -1;
  return open >= 0 && /[$`]/.test((name as string).slice(open));
};

/** `printf -v NAME`: NAME's subscript is evaluated, and a variable that steers later programs is set. */
function printfSafe(args: string[]): boolean {
  const first = args[0];
  if (first === undefined || !first.startsWith('-v')) return true;
  const name = first === '-v' ? args[1] : first.slice(2);
  return name !== undefined && !evaluatedSubscript(name) && !steersPrograms(name.replace(/\[.*$/s, ''));
}

/** `test -v NAME` / `[ -v NAME ]`: NAME's subscript is evaluated. */
const testSafe = (args: string[]): boolean =>
  !args.some((a, i) => (a === '-v' || a === '-R') && evaluatedSubscript(args[i + 1]));

const CHECKS: Record<string, Check> = {
  printf: printfSafe,
  test: testSafe,
  '[': testSafe,
  find: (args) => !args.some((a) => FIND_UNSAFE.has(a)),
  rg: (args) =>
    !args.some((a) => /^(?:--pre(?:=|$)|--pre-glob|--search-zip$|--hostname-bin)/.test(a) || shortHas(a, 'z')),
  git: gitSafe,
  sort: (args) => !args.some((a) => hasOption(a, 'o', ['output', 'compress-program'])),
  sed: (args) => {
    // only `sed -n 'Np'` / `sed -n 'N,Mp'` (print lines) is read-only for sure
    const opts = args.filter((a) => a.startsWith('-') && a !== '-');
    const ops = positionals(args);
    return (
      opts.length > 0 &&
      opts.every((a) => /^-[nEr]+$/.test(a) || a === '--quiet' || a === '--silent') &&
      opts.some((a) => /^-[a-zA-Z]*n/.test(a) || a === '--quiet' || a === '--silent') &&
      ops.length >= 1 &&
      /^\s*(?:\d+|\$)(?:\s*,\s*(?:\d+|\$))?\s*p\s*$/.test(ops[0] as string)
    );
  },
  xxd: (args) => positionals(args).length <= 1,
  uniq: (args) => positionals(args).length <= 1,
  base64: (args) => !args.some((a) => hasOption(a, 'o', ['output'])),
  // -o FILE writes the listing; -R with -H writes an index into every directory
  tree: (args) =>
    !args.some((a) => shortHas(a, 'o')) && !(args.some((a) => shortHas(a, 'R')) && args.some((a) => shortHas(a, 'H'))),
  file: (args) => !args.some((a) => hasOption(a, 'C', ['compile'])),
  date: (args) => !args.some((a) => hasOption(a, 's', ['set'])) && positionals(args).every((a) => a.startsWith('+')),
  // an operand, -F / --file or -b sets the host name
  hostname: (args) => positionals(args).length === 0 && !args.some((a) => hasOption(a, 'Fb', ['file', 'boot'])),
  // env alone prints the environment; -u / -C / -S / -P and unknown options are not looked into
  env: (args) => {
    const p = parse(ENV_OPTIONS, args);
    return p.positionals.length === 0 && [...p.options.keys()].every((o) => ENV_PRINTS.has(o));
  },
  ps: psSafe,
  command: (args) => args.some((a) => /^-[a-zA-Z]*[vV]/.test(a)),
  tail: () => true,
  // `-d recurse` is `-r`: over home, `/`, `/etc`… a credential read
  grep: (args, homes) => !grepRecursesIntoSecrets(args, homes),
  egrep: (args, homes) => !grepRecursesIntoSecrets(args, homes),
  fgrep: (args, homes) => !grepRecursesIntoSecrets(args, homes),
  zgrep: (args, homes) => !grepRecursesIntoSecrets(args, homes),
};

/**
 * Whether a command (program and its arguments, wrappers already stripped) is on the read-only
 * safe list. The caller also requires no write redirect, no substitution, no assignment, a
 * standard program path and no run-time values. `homes`: those of the assessor that judges.
 */
export function isSafeCommand(program: string, args: string[], homes: KnownHomes): boolean {
  if (ALWAYS_SAFE.has(program)) return true;
  const check = lookup(CHECKS, program);
  return check !== undefined && check(args, homes);
}

/** Every program name on the safe list (for documentation and the report). */
export function safeProgramNames(): string[] {
  return [...new Set([...ALWAYS_SAFE, ...Object.keys(CHECKS)])].sort();
}

/**
 * Wrappers that change nothing about what the wrapped command may do (safe if the wrapped command
 * is): niceness, CPU and memory placement, buffering, limits. Not setsid: what it starts leaves
 * the process group, and outlives the stop of the command that started it; nor chrt (a real-time
 * priority can starve the machine) or cgexec (another cgroup's limits).
 */
export const NEUTRAL_WRAPPERS: ReadonlySet<string> = new Set([
  'timeout',
  'nice',
  'ionice',
  'nohup',
  'time',
  'stdbuf',
  'command',
  'builtin',
  'noglob',
  'nocorrect',
  'chronic',
  'taskset',
  'numactl',
  'catchsegv',
  'prlimit',
]);

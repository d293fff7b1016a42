// The read-only safe list: commands that only read and print, with the per-tool options that make
// them write or run something else (find -exec/-delete/-fprint, rg --pre, git -c / --output,
// sort -o, sed without -n…p). A command is `safe` only when every segment passes this check.

import { lookup } from './option-spec.js';

/** Commands that only read and print, whatever their arguments. */
const ALWAYS_SAFE = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'egrep',
  'fgrep',
  'pwd',
  'echo',
  'printf',
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
  'test',
  '[',
  'sleep',
  'ps',
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
  'zgrep',
]);

type Check = (args: string[]) => boolean;

const shortHas = (a: string, letters: string): boolean =>
  a.startsWith('-') && !a.startsWith('--') && [...a.slice(1)].some((c) => letters.includes(c));
const positionals = (args: string[]): string[] => args.filter((a) => !a.startsWith('-') || a === '-');

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
const GIT_UNSAFE_ARGS = /^(?:--output(?:=|$)|--ext-diff$|--open-files-in-pager|-O|--exec(?:=|$)|--upload-pack)/;

function gitSafe(args: string[]): boolean {
  // global options other than --no-pager / -P are not safe (-c, -C, --git-dir, --exec-path, …)
  let i = 0;
  while (i < args.length && (args[i] === '--no-pager' || args[i] === '-P' || args[i] === '--no-optional-locks')) i++;
  const sub = args[i];
  if (sub === undefined || sub.startsWith('-') || !GIT_SAFE_SUBCOMMANDS.has(sub)) return false;
  const rest = args.slice(i + 1);
  if (rest.some((a) => GIT_UNSAFE_ARGS.test(a))) return false;
  switch (sub) {
    case 'branch':
      if (
        rest.some((a) =>
          /^(?:-[dDmMcCuf]|--(?:delete|move|copy|set-upstream|unset-upstream|edit-description|force|track|no-track|create-reflog))/.test(
            a,
          ),
        )
      )
        return false;
      return positionals(rest).length === 0 || rest.some((a) => a === '-l' || a === '--list');
    case 'tag':
      if (rest.some((a) => /^(?:-[dasfmFue]|--(?:delete|annotate|sign|force|message|file|local-user|edit))/.test(a)))
        return false;
      return positionals(rest).length === 0 || rest.some((a) => a === '-l' || a === '--list');
    case 'remote':
      return rest.every((a) => a === '-v' || a === '--verbose') || (rest[0] === 'get-url' && rest.length <= 3);
    case 'config':
      return (
        rest.some(
          (a) => /^(?:--get|--get-all|--get-regexp|--list|-l|--get-urlmatch)$/.test(a) || a === 'get' || a === 'list',
        ) &&
        !rest.some((a) =>
          /^(?:--add|--unset|--unset-all|--replace-all|--edit|-e|--rename-section|--remove-section)$/.test(a),
        )
      );
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

const CHECKS: Record<string, Check> = {
  find: (args) => !args.some((a) => FIND_UNSAFE.has(a)),
  rg: (args) =>
    !args.some((a) => /^(?:--pre(?:=|$)|--pre-glob|--search-zip$|--hostname-bin)/.test(a) || shortHas(a, 'z')),
  git: gitSafe,
  sort: (args) => !args.some((a) => /^--(?:o|ou|out|outp|outpu|output|comp)/.test(a) || shortHas(a, 'o')),
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
  base64: (args) => !args.some((a) => a === '-o' || a.startsWith('--output')),
  tree: (args) => !args.some((a) => a === '-o' || a.startsWith('-o')),
  file: (args) => !args.some((a) => a === '-C' || a === '--compile'),
  date: (args) =>
    !args.some((a) => a === '-s' || a.startsWith('--set') || shortHas(a, 's')) &&
    positionals(args).every((a) => a.startsWith('+')),
  hostname: (args) => positionals(args).length === 0,
  env: (args) =>
    positionals(args).length === 0 &&
    !args.some((a) => a.startsWith('-u') || a.startsWith('--unset') || a === '-C' || a.startsWith('--chdir')),
  command: (args) => args.some((a) => /^-[a-zA-Z]*[vV]/.test(a)),
  tail: () => true,
};

/**
 * Whether a command (program and its arguments, wrappers already stripped) is on the read-only
 * safe list. The caller also requires no write redirect, no substitution, no assignment, a
 * standard program path and no run-time values.
 */
export function isSafeCommand(program: string, args: string[]): boolean {
  if (ALWAYS_SAFE.has(program)) return true;
  const check = lookup(CHECKS, program);
  return check !== undefined && check(args);
}

/** Every program name on the safe list (for documentation and the report). */
export function safeProgramNames(): string[] {
  return [...new Set([...ALWAYS_SAFE, ...Object.keys(CHECKS)])].sort();
}

/** Wrappers that change nothing about what the wrapped command may do (safe if the wrapped command is). */
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
  'setsid',
]);

// Option normalisation: `-rf` = `-fr` = `-r -f` = `-R -f` = `--recursive --force` = `--rec --forc`.
// For the commands whose options matter to deny rules and risk (rm, chmod, chown, cp, mv, git
// push, curl, wget, sed, find) each spelling maps to one canonical name; any other command's
// options stay as written (`-x` per letter of a cluster, `--name` for a long option).

/** The options and operands of one argv, after normalisation. */
export interface ParsedArgs {
  /** canonical option name → its values ('' when it takes none), in order of appearance */
  options: Map<string, string[]>;
  /** operands, in order */
  positionals: string[];
  /** argv index of each operand */
  positionalIndex: number[];
}

interface CommandSpec {
  /** short letter → canonical name (no value) */
  short?: Record<string, string>;
  /** short letter → canonical name (takes a value: rest of the cluster or the next word) */
  shortArg?: Record<string, string>;
  /** short letters whose value is optional and attached (`sed -i.bak`) */
  shortOptArg?: Record<string, string>;
  /** long name → canonical name (no value, or an attached `=value`) */
  long?: Record<string, string>;
  /** long name → canonical name (takes a value: `=value` or the next word) */
  longArg?: Record<string, string>;
  /** a long option may be abbreviated to any unambiguous prefix (GNU getopt_long) */
  gnuPrefix?: boolean;
  /** decides whether a word starting with `-` is an option at all (chmod `-x` is a mode) */
  isOption?: (word: string) => boolean;
  /** every `-word` is one option named by the whole word (find primaries) */
  wholeWord?: boolean;
}

const same = (...names: string[]): Record<string, string> => Object.fromEntries(names.map((n) => [n, n]));

const CHOWN: CommandSpec = {
  short: { R: 'recursive', c: 'changes', f: 'silent', v: 'verbose', h: 'no-dereference', H: '-H', L: '-L', P: '-P' },
  long: {
    ...same(
      'recursive',
      'changes',
      'silent',
      'verbose',
      'dereference',
      'no-dereference',
      'no-preserve-root',
      'preserve-root',
    ),
    quiet: 'silent',
  },
  longArg: same('from', 'reference'),
  gnuPrefix: true,
};

const SPECS: Record<string, CommandSpec> = {
  rm: {
    short: {
      r: 'recursive',
      R: 'recursive',
      f: 'force',
      i: 'interactive',
      I: 'interactive-once',
      d: 'dir',
      v: 'verbose',
    },
    long: same(
      'recursive',
      'force',
      'interactive',
      'dir',
      'verbose',
      'one-file-system',
      'no-preserve-root',
      'preserve-root',
      'help',
      'version',
    ),
    gnuPrefix: true,
  },
  chmod: {
    short: { R: 'recursive', c: 'changes', f: 'silent', v: 'verbose' },
    long: {
      ...same('recursive', 'changes', 'silent', 'verbose', 'no-preserve-root', 'preserve-root'),
      quiet: 'silent',
    },
    longArg: same('reference'),
    gnuPrefix: true,
    isOption: (w) => w.startsWith('--') || /^-[Rcfv]+$/.test(w),
  },
  chown: CHOWN,
  chgrp: CHOWN,
  cp: {
    short: {
      r: 'recursive',
      R: 'recursive',
      a: 'archive',
      f: 'force',
      i: 'interactive',
      n: 'no-clobber',
      u: 'update',
      v: 'verbose',
      l: 'link',
      s: 'symbolic-link',
      p: 'preserve',
      d: '-d',
      P: 'no-dereference',
      L: 'dereference',
      x: 'one-file-system',
      T: 'no-target-directory',
      b: 'backup',
      H: '-H',
    },
    shortArg: { t: 'target-directory', S: 'suffix' },
    long: same(
      'recursive',
      'archive',
      'force',
      'interactive',
      'no-clobber',
      'update',
      'verbose',
      'link',
      'symbolic-link',
      'preserve',
      'no-preserve',
      'no-dereference',
      'dereference',
      'one-file-system',
      'no-target-directory',
      'backup',
      'remove-destination',
      'strip-trailing-slashes',
      'attributes-only',
      'sparse',
      'reflink',
      'parents',
      'debug',
    ),
    longArg: same('target-directory', 'suffix'),
    gnuPrefix: true,
  },
  mv: {
    short: {
      f: 'force',
      i: 'interactive',
      n: 'no-clobber',
      u: 'update',
      v: 'verbose',
      T: 'no-target-directory',
      b: 'backup',
    },
    shortArg: { t: 'target-directory', S: 'suffix' },
    long: same(
      'force',
      'interactive',
      'no-clobber',
      'update',
      'verbose',
      'no-target-directory',
      'backup',
      'strip-trailing-slashes',
      'exchange',
      'debug',
    ),
    longArg: same('target-directory', 'suffix'),
    gnuPrefix: true,
  },
  curl: {
    short: {
      s: 'silent',
      S: 'show-error',
      L: 'location',
      f: 'fail',
      k: 'insecure',
      O: 'remote-name',
      I: 'head',
      i: 'include',
      v: 'verbose',
      N: 'no-buffer',
      g: 'globoff',
      G: 'get',
      J: 'remote-header-name',
      '#': 'progress-bar',
      '4': 'ipv4',
      '6': 'ipv6',
      l: 'list-only',
      n: 'netrc',
      j: 'junk-session-cookies',
      R: 'remote-time',
      B: 'use-ascii',
      p: 'proxytunnel',
      q: 'disable',
      Z: 'parallel',
      a: 'append',
      M: 'manual',
      V: 'version',
    },
    shortArg: {
      o: 'output',
      d: 'data',
      H: 'header',
      X: 'request',
      u: 'user',
      A: 'user-agent',
      e: 'referer',
      b: 'cookie',
      c: 'cookie-jar',
      T: 'upload-file',
      F: 'form',
      x: 'proxy',
      K: 'config',
      w: 'write-out',
      m: 'max-time',
      r: 'range',
      E: 'cert',
      C: 'continue-at',
      Y: 'speed-limit',
      y: 'speed-time',
      z: 'time-cond',
      Q: 'quote',
      t: 'telnet-option',
      U: 'proxy-user',
      P: 'ftp-port',
      D: 'dump-header',
    },
    long: same(
      'silent',
      'show-error',
      'location',
      'fail',
      'insecure',
      'remote-name',
      'head',
      'include',
      'verbose',
      'no-buffer',
      'globoff',
      'get',
      'remote-header-name',
      'progress-bar',
      'ipv4',
      'ipv6',
      'compressed',
      'create-dirs',
      'fail-with-body',
      'remote-name-all',
      'http1.1',
      'http2',
      'location-trusted',
      'netrc',
      'parallel',
      'append',
      'version',
      'proxytunnel',
    ),
    longArg: {
      ...same(
        'output',
        'data',
        'header',
        'request',
        'user',
        'user-agent',
        'referer',
        'cookie',
        'cookie-jar',
        'upload-file',
        'form',
        'proxy',
        'config',
        'write-out',
        'max-time',
        'range',
        'cert',
        'continue-at',
        'data-binary',
        'data-raw',
        'data-urlencode',
        'data-ascii',
        'output-dir',
        'json',
        'url',
        'form-string',
        'retry',
        'connect-timeout',
        'dump-header',
        'oauth2-bearer',
        'resolve',
        'cacert',
        'key',
      ),
    },
  },
  wget: {
    short: {
      q: 'quiet',
      c: 'continue',
      r: 'recursive',
      N: 'timestamping',
      v: 'verbose',
      b: 'background',
      m: 'mirror',
      p: 'page-requisites',
      k: 'convert-links',
      K: 'backup-converted',
      E: 'adjust-extension',
      H: 'span-hosts',
      L: 'relative',
      S: 'server-response',
      x: 'force-directories',
      F: 'force-html',
      '4': 'inet4-only',
      '6': 'inet6-only',
    },
    shortArg: {
      O: 'output-document',
      o: 'output-file',
      P: 'directory-prefix',
      a: 'append-output',
      i: 'input-file',
      U: 'user-agent',
      t: 'tries',
      T: 'timeout',
      w: 'wait',
      e: 'execute',
      A: 'accept',
      R: 'reject',
      D: 'domains',
      I: 'include-directories',
      X: 'exclude-directories',
      l: 'level',
      Q: 'quota',
      B: 'base',
    },
    long: same(
      'quiet',
      'continue',
      'recursive',
      'timestamping',
      'verbose',
      'background',
      'mirror',
      'page-requisites',
      'convert-links',
      'adjust-extension',
      'span-hosts',
      'no-check-certificate',
      'no-verbose',
      'no-clobber',
      'no-parent',
      'server-response',
      'spider',
    ),
    longArg: same(
      'output-document',
      'output-file',
      'directory-prefix',
      'append-output',
      'input-file',
      'user-agent',
      'tries',
      'timeout',
      'wait',
      'execute',
      'accept',
      'reject',
      'domains',
      'level',
      'quota',
      'base',
      'header',
      'post-data',
      'post-file',
      'body-data',
      'body-file',
      'method',
      'user',
      'password',
    ),
    gnuPrefix: true,
  },
  sed: {
    short: { n: 'quiet', E: 'regexp-extended', r: 'regexp-extended', s: 'separate', u: 'unbuffered', z: 'null-data' },
    shortArg: { e: 'expression', f: 'file', l: 'line-length' },
    shortOptArg: { i: 'in-place' },
    long: {
      ...same(
        'quiet',
        'regexp-extended',
        'separate',
        'unbuffered',
        'null-data',
        'posix',
        'sandbox',
        'debug',
        'in-place',
        'follow-symlinks',
      ),
      silent: 'quiet',
    },
    longArg: same('expression', 'file', 'line-length'),
    gnuPrefix: true,
  },
  find: { wholeWord: true },
};

const GIT_GLOBAL_ARG: Record<string, string> = { C: 'C', c: 'config' };
const GIT_GLOBAL_LONG_ARG = new Set([
  'git-dir',
  'work-tree',
  'namespace',
  'config-env',
  'super-prefix',
  'list-cmds',
  'attr-source',
]);

const GIT_PUSH: CommandSpec = {
  short: { f: 'force', u: 'set-upstream', d: 'delete', n: 'dry-run', v: 'verbose', q: 'quiet', 4: 'ipv4', 6: 'ipv6' },
  shortArg: { o: 'push-option' },
  long: {
    ...same(
      'force',
      'set-upstream',
      'delete',
      'dry-run',
      'verbose',
      'quiet',
      'mirror',
      'all',
      'tags',
      'prune',
      'atomic',
      'follow-tags',
      'no-verify',
      'force-if-includes',
    ),
    'force-with-lease': 'force',
    branches: 'all',
  },
  longArg: { 'push-option': 'push-option', repo: 'repo', 'receive-pack': 'receive-pack', exec: 'receive-pack' },
  gnuPrefix: true,
};

const GIT_SUBCOMMANDS: Record<string, CommandSpec> = { push: GIT_PUSH };

/** Programs whose first operand is a subcommand (a deny pattern anchors it: `git push` is not `git log push`). */
export const SUBCOMMAND_PROGRAMS: ReadonlySet<string> = new Set([
  'git',
  'npm',
  'yarn',
  'pnpm',
  'bun',
  'deno',
  'docker',
  'podman',
  'kubectl',
  'helm',
  'cargo',
  'go',
  'systemctl',
  'apt',
  'apt-get',
  'brew',
  'pip',
  'pip3',
  'gh',
  'terraform',
  'aws',
  'gcloud',
  'az',
  'poetry',
  'uv',
  'dotnet',
  'conda',
  'snap',
  'flatpak',
  'launchctl',
  'service',
  'ip',
  'nmcli',
  'openssl',
  'dnf',
  'yum',
  'pacman',
  'zypper',
  'rustup',
]);

function add(out: ParsedArgs, name: string, value: string): void {
  const list = out.options.get(name);
  if (list === undefined) out.options.set(name, [value]);
  else list.push(value);
}

function resolveLong(spec: CommandSpec, name: string): { canonical: string; takesArg: boolean } | null {
  const a = spec.longArg?.[name];
  if (a !== undefined) return { canonical: a, takesArg: true };
  const b = spec.long?.[name];
  if (b !== undefined) return { canonical: b, takesArg: false };
  if (spec.gnuPrefix !== true || name.length < 2) return null;
  let found: { canonical: string; takesArg: boolean } | null = null;
  for (const [table, takesArg] of [
    [spec.long, false],
    [spec.longArg, true],
  ] as const) {
    for (const [full, canonical] of Object.entries(table ?? {})) {
      if (!full.startsWith(name)) continue;
      if (found !== null && found.canonical !== canonical) return null; // ambiguous
      found = { canonical, takesArg };
    }
  }
  return found;
}

/** Parses argv[start…] against a spec; returns the index where parsing stopped (end of argv). */
function parseWith(
  spec: CommandSpec,
  argv: readonly string[],
  start: number,
  out: ParsedArgs,
  stopAtOperand: boolean,
): number {
  let i = start;
  let endOfOptions = false;
  for (; i < argv.length; i++) {
    const w = argv[i] as string;
    const isOpt = !endOfOptions && w.length > 1 && w.startsWith('-') && (spec.isOption?.(w) ?? true);
    if (!isOpt) {
      if (stopAtOperand) return i;
      out.positionals.push(w);
      out.positionalIndex.push(i);
      continue;
    }
    if (w === '--') {
      endOfOptions = true;
      continue;
    }
    if (spec.wholeWord === true) {
      add(out, w, '');
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      const known = resolveLong(spec, name);
      if (known === null) {
        add(out, `--${name}`, eq < 0 ? '' : w.slice(eq + 1));
      } else if (eq >= 0) {
        add(out, known.canonical, w.slice(eq + 1));
      } else if (known.takesArg) {
        add(out, known.canonical, argv[i + 1] ?? '');
        i++;
      } else {
        add(out, known.canonical, '');
      }
      continue;
    }
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      const withArg = spec.shortArg?.[letter];
      if (withArg !== undefined) {
        if (k < w.length - 1) add(out, withArg, w.slice(k + 1));
        else {
          add(out, withArg, argv[i + 1] ?? '');
          i++;
        }
        break;
      }
      const optArg = spec.shortOptArg?.[letter];
      if (optArg !== undefined) {
        add(out, optArg, w.slice(k + 1));
        break;
      }
      add(out, spec.short?.[letter] ?? `-${letter}`, '');
    }
  }
  return i;
}

function parseGit(argv: readonly string[], start: number, out: ParsedArgs): void {
  let i = start;
  for (; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('-') || w === '-') break;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      if (eq >= 0) add(out, name, w.slice(eq + 1));
      else if (GIT_GLOBAL_LONG_ARG.has(name)) add(out, name, argv[++i] ?? '');
      else add(out, name === 'paginate' ? 'p' : name === 'no-pager' ? 'P' : name, '');
      continue;
    }
    const letter = w[1] as string;
    const withArg = GIT_GLOBAL_ARG[letter];
    if (withArg !== undefined) add(out, withArg, w.length > 2 ? w.slice(2) : (argv[++i] ?? ''));
    else for (let k = 1; k < w.length; k++) add(out, w[k] as string, '');
  }
  if (i >= argv.length) return;
  const sub = argv[i] as string;
  out.positionals.push(sub);
  out.positionalIndex.push(i);
  parseWith(GIT_SUBCOMMANDS[sub] ?? {}, argv, i + 1, out, false);
  if (sub === 'push' && out.positionals.slice(1).some((p) => p.startsWith('+'))) add(out, 'force', '+refspec');
}

/**
 * Normalises the options of `argv` (argv[0] is the program) as the program `program` reads them.
 * Used by deny patterns (the pattern and the command go through the same function) and by the
 * risk rules.
 */
export function parseArgs(program: string, argv: readonly string[], start = 1): ParsedArgs {
  const out: ParsedArgs = { options: new Map(), positionals: [], positionalIndex: [] };
  if (program === 'git') parseGit(argv, start, out);
  else parseWith(SPECS[program] ?? {}, argv, start, out, false);
  return out;
}

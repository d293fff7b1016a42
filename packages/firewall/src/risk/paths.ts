// Path knowledge of the RiskAssessor, all lexical (no file system access): which targets are
// "broad" (deleting or chmod-ing them is a disaster), which writes touch sensitive places (shell
// start-up files, ~/.ssh, git hooks, /etc…), which files hold credentials, and the red-flag paths
// that escape a sandbox (/proc/self/root) or open a socket (/dev/tcp).

import { posix } from 'node:path';

const HOME_PREFIX = /^(?:\$HOME|\$\{HOME\})(?=\/|$)/;
/** finger's own home (tokens, keys, policy): `$FINGER_HOME` is `~/.finger` unless set elsewhere. */
const FINGER_HOME_PREFIX = /^(?:\$FINGER_HOME|\$\{FINGER_HOME\})(?=\/|$)/;
const USER_HOME = /^(?:\/home\/[^/]+|\/Users\/[^/]+|\/root)(?=\/|$)/;

/**
 * Normalises a de-quoted path word for matching: `$HOME`, `${HOME}`, `~user`, `/home/<u>`,
 * `/Users/<u>` and `/root` become `~`; `.`/`..`/`//` are resolved lexically; a trailing slash is
 * dropped. Returns null when the path starts with any other run-time value (`$X/…`, `` `…` ``).
 */
export function normalizePath(word: string): string | null {
  let p = word;
  if (HOME_PREFIX.test(p)) p = p.replace(HOME_PREFIX, '~');
  else if (FINGER_HOME_PREFIX.test(p)) p = p.replace(FINGER_HOME_PREFIX, '~/.finger');
  if (p.startsWith('$') || p.startsWith('`')) return null;
  if (p.startsWith('~')) {
    const slash = p.indexOf('/');
    const rest = slash < 0 ? '' : p.slice(slash);
    const n = posix.normalize(`/${rest}`);
    return n === '/' ? '~' : `~${n.endsWith('/') ? n.slice(0, -1) : n}`;
  }
  if (USER_HOME.test(p)) return normalizePath(p.replace(USER_HOME, '~'));
  if (p === '') return '';
  let n = posix.normalize(p);
  if (n.length > 1 && n.endsWith('/')) n = n.slice(0, -1);
  return n;
}

const TRAILING_GLOB = /(?:\/\*|\/\.\*|\/\.|\/)+$/;

/**
 * Whether deleting / chmod-ing / chown-ing this target hits something broad: `/`, `~`, `.`, `..`,
 * `*`, a top-level directory (`/etc`, `/usr`), a direct child of home (`~/.ssh`, `~/Documents`),
 * or a path starting with a run-time value (`"$HOME"`, `$X/…`).
 */
export function isBroadTarget(word: string): boolean {
  let w = word;
  if (w.length > 1) w = w.replace(TRAILING_GLOB, '') || '/';
  const n = normalizePath(w);
  if (n === null) return true;
  if (n === '' || n === '/' || n === '~' || n === '.' || n === '..' || n === '*' || n === '.*') return true;
  if (/^(?:\.\.\/)*\.\.$/.test(n)) return true;
  if (/^\/[^/]+$/.test(n)) return true;
  if (/^~\/[^/]+$/.test(n)) return true;
  return false;
}

const HOME_SENSITIVE_DIRS = [
  '.finger/config',
  '.finger/state',
  '.finger/audit',
  '.finger/backups',
  '.finger/events',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.azure',
  '.password-store',
  '.config/gh',
  '.config/git',
  '.config/gcloud',
  '.config/autostart',
  '.config/systemd',
  '.config/fish',
  '.local/bin',
  'Library/LaunchAgents',
  '.oh-my-zsh',
];
const HOME_SENSITIVE_FILES = new Set([
  '.finger/token',
  '.finger/tokens.json',
  '.finger/daemon.json',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.cshrc',
  '.tcshrc',
  '.inputrc',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.gitconfig',
  '.git-credentials',
  '.xinitrc',
  '.xprofile',
  '.xsession',
  '.pam_environment',
  '.config/fish/config.fish',
]);
const SYSTEM_PREFIXES = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/System',
  '/Library',
  '/private/etc',
  '/var/spool/cron',
  '/var/cron',
  '/var/at',
  '/proc',
  '/sys',
  '/dev',
];
const GIT_INTERNAL = /(?:^|\/)\.git\/(?:hooks(?:\/|$)|config$|info\/attributes$)/;
const NULL_SINK = /^\/dev\/(?:null|stdout|stderr|tty|zero|fd\/\d+|pts\/\d+)$/;

function underAny(path: string, prefixes: readonly string[]): string | undefined {
  return prefixes.find((d) => path === d || path.startsWith(`${d}/`));
}

/** Whether a write target is a sink that keeps nothing (`/dev/null`, `/dev/stderr`, `/dev/fd/2`…). */
export function isNullSink(word: string): boolean {
  return NULL_SINK.test(word);
}

/**
 * Names the sensitive place a write to this path would touch (shell start-up files, ~/.ssh,
 * credentials, git hooks and config, system directories, devices), or null.
 */
export function sensitiveWriteTarget(word: string): string | null {
  if (isNullSink(word)) return null;
  const n = normalizePath(word);
  if (n === null) return null;
  const home = fingerHomeEntry(n, FINGER_GUARDED);
  if (home !== undefined) return home;
  if (n.startsWith('~/')) {
    const rel = n.slice(2);
    const dir = underAny(rel, HOME_SENSITIVE_DIRS);
    if (dir !== undefined) return `~/${dir}`;
    if (HOME_SENSITIVE_FILES.has(rel)) return n;
  }
  if (n.startsWith('/')) {
    const sys = underAny(n, SYSTEM_PREFIXES);
    if (sys !== undefined) return sys === '/dev' ? n : sys;
  }
  const git = GIT_INTERNAL.exec(n);
  if (git !== null) return git[0].startsWith('/') ? git[0].slice(1).replace(/\/$/, '') : git[0].replace(/\/$/, '');
  return null;
}

const HOME_SECRET_DIRS = [
  '.finger/config', // finger's own cluster and serve keys, policy
  '.finger/state',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.azure',
  '.password-store',
  '.config/gh',
  '.config/gcloud',
  '.config/rclone',
  '.terraform.d',
];
const HOME_SECRET_FILES = new Set([
  '.finger', // finger's home as a whole (an archive of it, a cd into it), not what lies under workspace/
  '.finger/token', // finger's own admin token and token hashes
  '.finger/tokens.json',
  '.netrc',
  '.git-credentials',
  '.docker/config.json',
  '.npmrc',
  '.pypirc',
  '.pgpass',
  '.vault-token',
  '.my.cnf',
  '.s3cfg',
  '.boto',
  '.config/hub',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
]);
/**
 * Files that hold credentials wherever they are: private keys, key stores, credential and secret
 * files, shell histories (commands typed with passwords and tokens in them).
 */
const SECRET_FILE_ANYWHERE =
  /(?:^|\/)(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|[^/]+\.(?:pem|key|p12|pfx|jks|keystore)|credentials\.json|secrets?\.(?:ya?ml|json|toml|env)|\.htpasswd|\.pgpass|\.vault-token|\.[a-z]*_history)$/;
const SYSTEM_SECRETS = /^\/etc\/(?:shadow|gshadow|sudoers|master\.passwd|ssh\/ssh_host_[^/]*key)$/;
/** Cheap pre-check: a word that can name a credential store contains one of these. */
const SECRET_HINT =
  /\.(?:ssh|aws|gnupg|kube|azure|password-store|netrc|git-credentials|docker|npmrc|pypirc|config|env|finger|terraform|pgpass|vault|my\.cnf|s3cfg|boto|cargo|gem|pem|key|p12|pfx|jks|keystore|htpasswd|[a-z]*_history)|FINGER_HOME|id_(?:rsa|dsa|ecdsa|ed25519)|credentials|secret|shadow|sudoers|master\.passwd|ssh_host_/;
const DOTENV = /(?:^|\/)\.env(?:\.(?!example$|sample$|template$|dist$)[^/]+)?$/;

/**
 * finger's own home where it is not `~/.finger` (set once at start, {@link addFingerHome}),
 * normalised: its token files, `config/` and `state/` hold credentials; those, `audit/`,
 * `backups/`, `events/` and `daemon.json` are sensitive to write. Its `workspace/` is neither.
 */
const EXTRA_FINGER_HOMES: string[] = [];
const FINGER_SECRETS = ['token', 'tokens.json', 'config', 'state'];
const FINGER_GUARDED = [...FINGER_SECRETS, 'audit', 'backups', 'events', 'daemon.json'];

/** Makes `dir` (absolute) finger's home for every later check of this process (see above). */
export function addFingerHome(dir: string): void {
  const n = normalizePath(dir);
  if (n === null || n === '/' || n === '~' || !(n.startsWith('/') || n.startsWith('~/'))) return;
  if (!EXTRA_FINGER_HOMES.includes(n)) EXTRA_FINGER_HOMES.push(n);
}

/** The entry of a registered finger home among `names` that `n` (normalised) lies in, if any. */
function fingerHomeEntry(n: string, names: readonly string[]): string | undefined {
  for (const h of EXTRA_FINGER_HOMES) {
    if (n === h) return h;
    if (!n.startsWith(`${h}/`)) continue;
    const first = n.slice(h.length + 1).split('/')[0]!;
    if (names.includes(first)) return `${h}/${first}`;
  }
  return undefined;
}

/** Glob characters: a glob may match a credential store whatever its letters. */
const GLOB = /[*?[]/;

/** Whether a word may name a credential store at all (a cheap test; so may no part of it when it fails). */
export function mayNameSecret(word: string): boolean {
  return SECRET_HINT.test(word) || GLOB.test(word) || (EXTRA_FINGER_HOMES.length > 0 && word.includes('/'));
}

/**
 * Names the credential store this path points into (~/.ssh, ~/.aws, .env files, /etc/shadow…),
 * or null. Accepts the `@file` / `name=@file` forms curl uses to send a file.
 */
export function secretPath(word: string): string | null {
  if (!mayNameSecret(word)) return null;
  let w = word;
  const at = w.indexOf('=@');
  if (at >= 0) w = w.slice(at + 2);
  else if (w.startsWith('@') || w.startsWith('<')) w = w.slice(1);
  const n = normalizePath(w);
  if (n === null) return null;
  const home = fingerHomeEntry(n, FINGER_SECRETS);
  if (home !== undefined) return home;
  if (n.startsWith('~/')) {
    const rel = n.slice(2);
    const dir = underAny(rel, HOME_SECRET_DIRS);
    if (dir !== undefined) return `~/${dir}`;
    if (HOME_SECRET_FILES.has(rel)) return n;
    if (GLOB.test(rel)) {
      const hit = globSecret(rel);
      if (hit !== null) return `~/${hit}`;
    }
  }
  if (SYSTEM_SECRETS.test(n)) return n;
  if (DOTENV.test(n)) return n;
  if (SECRET_FILE_ANYWHERE.test(n)) return n;
  return null;
}

/**
 * The credential store (relative to home) a glob relative to home can match (`.s*\/id_rsa` →
 * `.ssh`), or null: each of its first components is matched, as the shell would, against the
 * components of every known store.
 */
function globSecret(rel: string): string | null {
  const parts = rel.split('/');
  // a leading dot is matched only by a dot, as the shell globs
  const match = (pattern: string, name: string) =>
    (!name.startsWith('.') || pattern.startsWith('.')) && componentRegExp(pattern).test(name);
  for (const store of [...HOME_SECRET_DIRS, ...HOME_SECRET_FILES]) {
    const names = store.split('/');
    const isDir = HOME_SECRET_DIRS.includes(store);
    if (parts.length < names.length || (!isDir && parts.length !== names.length)) continue;
    if (names.every((name, i) => match(parts[i]!, name))) return store;
  }
  return null;
}

/** A shell glob component (`*`, `?`, `[…]`) as an anchored regular expression. */
function componentRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Directories a program may be run from by absolute path and still count as "the" command. */
const STANDARD_BIN = new Set([
  '/bin',
  '/usr/bin',
  '/usr/local/bin',
  '/sbin',
  '/usr/sbin',
  '/usr/local/sbin',
  '/opt/homebrew/bin',
  '/opt/local/bin',
]);

/** Whether argv[0] names a program by bare name or from a standard bin directory. */
export function isStandardProgramPath(path: string): boolean {
  const slash = path.lastIndexOf('/');
  if (slash < 0) return true;
  return STANDARD_BIN.has(path.slice(0, slash));
}

const PROC_ESCAPE = /\/proc\/[^/\s'"]+\/(?:root|cwd|environ|mem|exe|map_files)(?![\w.-])/;
const DEV_SOCKET = /\/dev\/(?:tcp|udp)\//;

/** Red-flag paths anywhere in raw text: `/proc/<pid|self>/root…` (sandbox escape), `/dev/tcp/…` (socket). */
export function redFlagPaths(text: string): string[] {
  const out: string[] = [];
  if (text.includes('/proc/')) {
    const m = PROC_ESCAPE.exec(text);
    if (m !== null) out.push(`'${m[0]}' reaches another process's root, environment or memory`);
  }
  if (text.includes('/dev/')) {
    const m = DEV_SOCKET.exec(text);
    if (m !== null) out.push(`'${m[0]}' opens a network socket`);
  }
  return out;
}

// Path knowledge of the RiskAssessor, all lexical (no file system access): which targets are
// "broad" (deleting or chmod-ing them is a disaster), which writes touch sensitive places (shell
// start-up files, ~/.ssh, git's own files, /etc…), which files hold credentials, and the red-flag
// paths that escape a sandbox (/proc/<pid>/root) or open a socket (/dev/tcp). A path is normalised
// first (`//`, `/./`, `..`), then a home directory becomes `~`; a brace expansion counts when any
// of its words does, a glob when any path it can match does (path-globs.ts). The places
// themselves are listed in sensitive-places.ts.

import { posix } from 'node:path';

import { KnownHomes, USUAL_HOMES } from './known-homes.js';
import { ANY, componentMatches, components, expandBraces, GLOB, meet, type Place } from './path-globs.js';
import {
  DOTENV,
  FINGER_GUARDED,
  FINGER_SECRETS,
  HOME_SECRET_DIRS,
  HOME_SECRET_FILES,
  HOME_SECRET_INNER_FILES,
  HOME_SENSITIVE_DIRS,
  HOME_SENSITIVE_FILES,
  SECRET_FILE_ANYWHERE,
  SECRET_HINT,
  SSH_HOST_KEY,
  SYSTEM_PREFIXES,
  SYSTEM_SECRET_DIRS,
  SYSTEM_SECRET_FILES,
  USER_HOME,
} from './sensitive-places.js';

const HOME_PREFIX = /^(?:\$HOME|\$\{HOME\})(?=\/|$)/;
/** finger's own home (tokens, keys, policy): `$FINGER_HOME` is `~/.finger` unless set elsewhere. */
const FINGER_HOME_PREFIX = /^(?:\$FINGER_HOME|\$\{FINGER_HOME\})(?=\/|$)/;
/** Where `~` stands while `..` is resolved: a home two levels down, as `/home/<u>` is. */
const HOME_AT_HOME = '/home/\u0000';
/** …and where it stands in the other reading: `/root`, one level down. */
const HOME_AT_ROOT = '/root';

function normalizeAs(word: string, homeAt: string, homes: KnownHomes): string | null {
  let p = word;
  if (HOME_PREFIX.test(p)) p = p.replace(HOME_PREFIX, '~');
  else if (FINGER_HOME_PREFIX.test(p)) p = p.replace(FINGER_HOME_PREFIX, '~/.finger');
  if (p.startsWith('$') || p.startsWith('`')) return null;
  if (p === '') return '';
  let tilde = false;
  if (p.startsWith('~')) {
    // `~`, `~/x`, `~user/x`: a home directory
    const slash = p.indexOf('/');
    p = homeAt + (slash < 0 ? '' : p.slice(slash));
    tilde = true;
  }
  let n = posix.normalize(p);
  if (n.length > 1 && n.endsWith('/')) n = n.slice(0, -1);
  if (tilde && (n === homeAt || n.startsWith(`${homeAt}/`))) return `~${n.slice(homeAt.length)}`;
  if (!n.startsWith('/')) return n;
  const m = USER_HOME.exec(n);
  if (m !== null) return `~${n.slice(m[0].length)}`;
  const extra = homes.userHomePrefix(n);
  return extra === 0 ? n : `~${n.slice(extra)}`;
}

/**
 * Normalises a de-quoted path word for matching: `.`/`..`/`//` are resolved lexically, then
 * `$HOME`, `${HOME}`, `~user`, `/home/<u>`, `/Users/<u>`, `/root` and `/var/root` become `~`; a
 * trailing slash is dropped. Returns null when the path starts with any other run-time value
 * (`$X/…`, `` `…` ``). `~/..` is read as the directory holding homes (see {@link pathReadings}).
 */
export function normalizePath(word: string, homes: KnownHomes): string | null {
  return normalizeAs(word, HOME_AT_HOME, homes);
}

/**
 * Every normalised reading of a path word: one, or two when it climbs out of home (`~/../x` is
 * `/home/x` for a home in /home and `/x` for `/root`).
 */
export function pathReadings(word: string, homes: KnownHomes): string[] {
  const n = normalizeAs(word, HOME_AT_HOME, homes);
  if (n === null) return [];
  if (n.startsWith('~') || !/^(?:~|\$HOME|\$\{HOME\}|\$FINGER_HOME|\$\{FINGER_HOME\})/.test(word)) return [n];
  const r = normalizeAs(word, HOME_AT_ROOT, homes);
  return r === null || r === n ? [n] : [n, r];
}

/** The words a path word stands for: its brace expansion, each in every reading. */
function readingsOf(word: string, homes: KnownHomes): string[] {
  const alts = expandBraces(word);
  if (alts.length === 1) return pathReadings(alts[0]!, homes);
  return alts.flatMap((a) => pathReadings(a, homes));
}

const TRAILING_GLOB = /(?:\/\*|\/\.\*|\/\.|\/)+$/;

/**
 * Whether deleting / chmod-ing / chown-ing this target hits something broad: `/`, `~`, `.`, `..`,
 * `*`, a top-level directory (`/etc`, `/usr`), a direct child of home (`~/.ssh`, `~/Documents`),
 * or a path starting with a run-time value (`"$HOME"`, `$X/…`).
 */
export function isBroadTarget(word: string, homes: KnownHomes): boolean {
  for (const alt of expandBraces(word)) {
    let w = alt;
    if (w.length > 1) w = w.replace(TRAILING_GLOB, '') || '/';
    const ns = pathReadings(w, homes);
    if (ns.length === 0) return true;
    if (ns.some(isBroadNormal)) return true;
  }
  return false;
}

function isBroadNormal(n: string): boolean {
  if (n === '' || n === '/' || n === '~' || n === '.' || n === '..' || n === '*' || n === '.*') return true;
  if (/^(?:\.\.\/)*\.\.$/.test(n)) return true;
  if (/^\/[^/]+$/.test(n)) return true;
  return /^~\/[^/]+$/.test(n);
}

const NULL_SINK = /^\/dev\/(?:null|stdout|stderr|tty|zero|fd\/\d+|pts\/\d+)$/;

function underAny(path: string, prefixes: readonly string[]): string | undefined {
  return prefixes.find((d) => path === d || path.startsWith(`${d}/`));
}

/** Whether a write target is a sink that keeps nothing (`/dev/null`, `/dev/stderr`, `/dev/fd/2`…). */
export function isNullSink(word: string): boolean {
  return NULL_SINK.test(word);
}

// ---- git's own files ------------------------------------------------------------------------------

/** What git only stores under `.git` (objects, refs, logs, message files): writing it runs nothing. */
const GIT_DATA_DIR = /^(?:objects|refs|logs)$/i;
const GIT_DATA_FILE = /^(?:COMMIT_EDITMSG|MERGE_MSG|TAG_EDITMSG|SQUASH_MSG|description)$/i;

/**
 * The git file a write touches (`.git` itself — a directory, or the `gitdir:` file or symlink that
 * makes a directory a repository —, `.git/config`, `.git/hooks`, `.git/modules`, `.git/info/attributes`,
 * `.git/worktrees`, …), compared case-insensitively (`.GIT/config` on a case-insensitive disk):
 * anything under a `.git` component but objects, refs, logs, message files and `info/exclude`.
 */
function gitTarget(n: string): string | null {
  if (!/\.g/i.test(n) && !GLOB.test(n)) return null;
  const parts = n.split('/');
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p === '**' || !componentMatches(p, '.git', true)) continue;
    const rest = parts.slice(i + 1);
    if (rest.length === 0) return p;
    const first = rest[0]!;
    if (!GLOB.test(first) && GIT_DATA_DIR.test(first)) continue;
    if (rest.length === 1 && !GLOB.test(first) && GIT_DATA_FILE.test(first)) continue;
    if (rest.length === 2 && /^info$/i.test(first) && /^exclude$/i.test(rest[1]!)) continue;
    return /^info$/i.test(first) && rest.length > 1 ? `${p}/${first}/${rest[1]}` : `${p}/${first}`;
  }
  return null;
}

// ---- places, for globs ---------------------------------------------------------------------------

/** The prefixes a home directory has: `~`, `/home/<u>`, `/Users/<u>`, `/root`, `/var/root`. */
const HOME_ANCHORS: readonly (readonly string[])[] = [
  ['~'],
  ['', 'home', ANY],
  ['', 'Users', ANY],
  ['', 'root'],
  ['', 'var', 'root'],
];
const PROC_ENTRIES = ['environ', 'mem', 'root', 'cwd', 'map_files', 'exe', 'fd', 'cmdline'];

interface Places {
  /** credential stores, every home spelling */
  secret: Place[];
  /** places sensitive to write, every home spelling */
  write: Place[];
  /** `~`-relative and absolute places of both kinds, for paths relative to an unknown directory */
  tails: Place[];
}

/** The places of each set of known homes, built on first use (a memo: derived from the homes alone). */
const placesOf = new WeakMap<KnownHomes, Places>();

function place(parts: readonly string[], dir: boolean, label: string): Place {
  return { parts, dir, label };
}

function homePlaces(stores: Iterable<string>, dir: boolean, anchors = HOME_ANCHORS): Place[] {
  const out: Place[] = [];
  for (const s of stores) for (const a of anchors) out.push(place([...a, ...s.split('/')], dir, `~/${s}`));
  return out;
}

function absolutePlaces(paths: readonly string[], dir: boolean): Place[] {
  return paths.map((p) => place(components(p), dir, p));
}

/** The places for these homes. */
function allPlaces(homes: KnownHomes): Places {
  const built = placesOf.get(homes);
  if (built !== undefined) return built;
  const finger = (names: readonly string[]): Place[] =>
    homes.fingerHomes.flatMap((h) => [
      place(components(h), false, h),
      ...names.map((n) => place([...components(h), n], true, `${h}/${n}`)),
    ]);
  const proc = PROC_ENTRIES.flatMap((e) => [
    place(['', 'proc', ANY, e], true, `/proc/*/${e}`),
    place(['', 'proc', ANY, 'task', ANY, e], true, `/proc/*/task/*/${e}`),
  ]);
  const secret = [
    ...homePlaces(HOME_SECRET_DIRS, true),
    ...homePlaces(HOME_SECRET_FILES, false),
    ...absolutePlaces(SYSTEM_SECRET_DIRS, true),
    ...absolutePlaces(SYSTEM_SECRET_FILES, false),
    ...finger(FINGER_SECRETS),
    ...proc,
  ];
  const write = [
    ...homePlaces(HOME_SENSITIVE_DIRS, true),
    ...homePlaces(HOME_SENSITIVE_FILES, false),
    ...absolutePlaces(SYSTEM_PREFIXES, true),
    ...finger(FINGER_GUARDED),
  ];
  const tilde = [HOME_ANCHORS[0]!];
  const git = [
    place(['.git', 'config'], false, '.git/config'),
    place(['.git', 'hooks'], true, '.git/hooks'),
    place(['.git', 'modules'], true, '.git/modules'),
    place(['.git', 'info', 'attributes'], false, '.git/info/attributes'),
  ];
  const tails = [
    ...homePlaces(HOME_SECRET_DIRS, true, tilde),
    ...homePlaces(HOME_SECRET_FILES, false, tilde),
    ...homePlaces(HOME_SECRET_INNER_FILES, false, tilde),
    ...homePlaces(HOME_SENSITIVE_DIRS, true, tilde),
    ...homePlaces(HOME_SENSITIVE_FILES, false, tilde),
    ...absolutePlaces(SYSTEM_SECRET_DIRS, true),
    ...absolutePlaces(SYSTEM_SECRET_FILES, false),
    ...finger(FINGER_SECRETS),
    ...proc,
    ...git,
  ];
  const places = { secret, write, tails };
  placesOf.set(homes, places);
  return places;
}

/** The label of the first place a (glob) path lies at, or null. */
function globPlace(n: string, list: readonly Place[]): string | null {
  const parts = components(n);
  for (const p of list) if (p.parts[0] === parts[0] && meet(parts, p) === 'at') return p.label;
  return null;
}

// ---- writes --------------------------------------------------------------------------------------

/**
 * Names the sensitive place a write to this path would touch (shell start-up files, ~/.ssh,
 * credentials, git's own files, system directories, devices, finger's home), or null.
 */
export function sensitiveWriteTarget(word: string, homes: KnownHomes): string | null {
  if (isNullSink(word)) return null;
  for (const n of readingsOf(word, homes)) {
    const hit = sensitiveWriteNormal(n, homes);
    if (hit !== null) return hit;
  }
  return null;
}

function sensitiveWriteNormal(n: string, homes: KnownHomes): string | null {
  if (isNullSink(n)) return null;
  const home = fingerHomeEntry(n, FINGER_GUARDED, homes);
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
  const git = gitTarget(n);
  if (git !== null) return git;
  return GLOB.test(n) ? globPlace(n, allPlaces(homes).write) : null;
}

// ---- credentials ---------------------------------------------------------------------------------

/**
 * The homes one assessor knows (known-homes.ts): the user's home when it lies elsewhere than the
 * usual spellings, and finger's own home where it is not `~/.finger` — its token files, `config/`,
 * `state/`, `audit/`, `backups/`, `events/` and `daemon.json` are credentials and sensitive to
 * write; its `workspace/` is neither. finger's home is normalised with the usual home spellings
 * only (`/home/u/.finger` is `~/.finger`), as it was when it was registered before the user's.
 */
export function knownHomes(options: { finger_home?: string; home_dir?: string }): KnownHomes {
  const finger: string[] = [];
  const n = options.finger_home === undefined ? null : normalizePath(options.finger_home, USUAL_HOMES);
  if (n !== null && n !== '/' && n !== '~' && (n.startsWith('/') || n.startsWith('~/'))) finger.push(n);
  return new KnownHomes(options.home_dir === undefined ? [] : [options.home_dir], finger);
}

/** The entry of a known finger home among `names` that `n` (normalised) lies in, if any. */
function fingerHomeEntry(n: string, names: readonly string[], homes: KnownHomes): string | undefined {
  for (const h of homes.fingerHomes) {
    if (n === h) return h;
    if (!n.startsWith(`${h}/`)) continue;
    const first = n.slice(h.length + 1).split('/')[0]!;
    if (names.includes(first)) return `${h}/${first}`;
  }
  return undefined;
}

/** Whether a word may name a credential store at all (a cheap test; so may no part of it when it fails). */
export function mayNameSecret(word: string, homes: KnownHomes): boolean {
  return (
    SECRET_HINT.test(word) ||
    GLOB.test(word) ||
    word.includes('{') ||
    (homes.fingerHomes.length > 0 && word.includes('/'))
  );
}

/**
 * `/proc/<pid|self|thread-self>/(task/<tid>/)?…`: another process's environment, memory, root,
 * working directory, open files or mapped files (and its own, but for its standard descriptors
 * and command line), and other processes' command lines (which may hold secrets).
 */
const PROC_SECRET =
  /^\/proc\/([^/]+)\/(?:task\/[^/]+\/)?(environ|mem|root|cwd|map_files|exe|fd|cmdline)(?:\/([^/]*)|$)/;

function procSecret(n: string): string | null {
  const m = PROC_SECRET.exec(n);
  if (m === null) return null;
  const own = m[1] === 'self' || m[1] === 'thread-self';
  if (own && m[2] === 'cmdline') return null;
  if (own && m[2] === 'fd' && (m[3] === undefined || /^[0-2]$/.test(m[3]))) return null;
  return n;
}

/**
 * Names the credential store this path points into (~/.ssh, ~/.aws, .env files, /etc/shadow,
 * finger's home, /proc/<pid>/environ…), or null. Accepts the `@file` / `name=@file` forms curl
 * uses to send a file.
 */
export function secretPath(word: string, homes: KnownHomes): string | null {
  if (!mayNameSecret(word, homes)) return null;
  let w = word;
  const at = w.indexOf('=@');
  if (at >= 0) w = w.slice(at + 2);
  else if (w.startsWith('@') || w.startsWith('<')) w = w.slice(1);
  for (const n of readingsOf(w, homes)) {
    const hit = secretNormal(n, homes);
    if (hit !== null) return hit;
  }
  return null;
}

/** What ~/.ssh holds that is public: public keys, known hosts, the keys allowed in. */
const SSH_PUBLIC = /^\.ssh\/(?:[^/*?[]+\.pub|known_hosts(?:\.old)?|authorized_keys2?)$/;

function secretNormal(n: string, homes: KnownHomes): string | null {
  const home = fingerHomeEntry(n, FINGER_SECRETS, homes);
  if (home !== undefined) return home;
  if (n.startsWith('~/')) {
    const rel = n.slice(2);
    const dir = underAny(rel, HOME_SECRET_DIRS);
    if (dir !== undefined && !SSH_PUBLIC.test(rel)) return `~/${dir}`;
    if (HOME_SECRET_FILES.has(rel)) return n;
  } else if (n.startsWith('/')) {
    const dir = underAny(n, SYSTEM_SECRET_DIRS);
    if (dir !== undefined) return dir;
    if (SYSTEM_SECRET_FILES.includes(n) || SSH_HOST_KEY.test(n)) return n;
    if (n.startsWith('/proc/') && procSecret(n) !== null) return n;
  }
  if (DOTENV.test(n)) return n;
  if (SECRET_FILE_ANYWHERE.test(n)) return n;
  return GLOB.test(n) ? globPlace(n, allPlaces(homes).secret) : null;
}

/**
 * The credential store a directory holds (it is an ancestor of it: `~`, `/`, `/home`, `/etc`,
 * `~/.config`, finger's home's parent…), named; or null. A recursive read of it reads the store.
 */
export function holdsSecret(word: string, homes: KnownHomes): string | null {
  for (const n of readingsOf(word, homes)) {
    if (!n.startsWith('/') && !n.startsWith('~')) continue;
    const parts = components(n);
    for (const p of candidates(allPlaces(homes).secret, parts)) if (meet(parts, p) === 'above') return p.label;
  }
  return null;
}

/** Places by their first two components (`/etc`, `~/.ssh`); those whose second is any name apart. */
interface PlaceIndex {
  readonly by: Map<string, Place[]>;
  readonly any: Map<string, Place[]>;
}

const indexes = new WeakMap<readonly Place[], PlaceIndex>();

function indexOf(list: readonly Place[]): PlaceIndex {
  let ix = indexes.get(list);
  if (ix !== undefined) return ix;
  ix = { by: new Map(), any: new Map() };
  for (const p of list) {
    const [first = '', second] = p.parts;
    const [map, key] = second === undefined || second === ANY ? [ix.any, first] : [ix.by, `${first}/${second}`];
    const bucket = map.get(key);
    if (bucket === undefined) map.set(key, [p]);
    else bucket.push(p);
  }
  indexes.set(list, ix);
  return ix;
}

const NO_PLACES: readonly Place[] = [];

/**
 * The places of `list` a path of these components can meet: with a plain second component
 * (`/work/…`), only those under it or under any name there — not the hundreds of others.
 */
function candidates(list: readonly Place[], parts: readonly string[]): readonly Place[] {
  const [first = '', second] = parts;
  if (second === undefined || second === '**' || GLOB.test(second)) return list.filter((p) => p.parts[0] === first);
  const ix = indexOf(list);
  const exact = ix.by.get(`${first}/${second}`) ?? NO_PLACES;
  const any = ix.any.get(first) ?? NO_PLACES;
  return any.length === 0 ? exact : exact.length === 0 ? any : [...exact, ...any];
}

/** Whether a directory holds (is an ancestor of) a credential store or a place sensitive to write. */
export function holdsSensitive(n: string, homes: KnownHomes): boolean {
  if (holdsSecret(n, homes) !== null) return true;
  if (!n.startsWith('/') && !n.startsWith('~')) return false;
  const parts = components(n);
  return candidates(allPlaces(homes).write, parts).some((p) => meet(parts, p) === 'above');
}

/**
 * Where a path relative to a directory that is not known may lead to something sensitive: the
 * place it reaches from some directory (`credentials` from `~/.aws`, `token` from finger's home,
 * `shadow` from `/etc`, `environ` from `/proc/<pid>`, `config` from `.git`…), spelled as a path
 * the other checks recognise (`~/.aws/credentials`); or null. Only names that are part of a
 * place count: `main.ts` is not, though some directory's `main.ts` may lie in `~/.ssh`.
 */
export function sensitiveFromAnywhere(rel: string, homes: KnownHomes): string | null {
  const n = normalizePath(rel, homes);
  if (n === null || n === '' || n.startsWith('/') || n.startsWith('~')) return null;
  const parts = n.split('/').filter((p) => p !== '..' && p !== '.');
  if (parts.length === 0) return null;
  for (const p of allPlaces(homes).tails) {
    for (let k = p.parts[0] === '' ? 1 : p.parts[0] === '~' ? 1 : 0; k < p.parts.length; k++) {
      if (meet(parts, { parts: p.parts.slice(k), dir: p.dir, label: p.label }) !== 'at') continue;
      const anchor = p.parts
        .slice(0, k)
        .map((c) => (c === ANY ? '*' : c))
        .join('/');
      return anchor === '' ? `/${parts.join('/')}` : `${anchor}/${parts.join('/')}`;
    }
  }
  return null;
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

/**
 * `/proc/<pid>/root|cwd|environ|mem|exe|map_files`, also of a thread (`/proc/<pid>/task/<tid>/…`),
 * and another process's open files (`/proc/<pid>/fd`; the own `/proc/self/fd` is how a program
 * names its stdin).
 */
const PROC_ESCAPE =
  /\/proc\/(?:[^/\s'"]+\/(?:task\/[^/\s'"]+\/)?(?:root|cwd|environ|mem|exe|map_files)|(?!self\/|thread-self\/)[^/\s'"]+\/(?:task\/[^/\s'"]+\/)?fd)(?![\w.-])/;
const DEV_SOCKET = /\/dev\/(?:tcp|udp)\//;
/** Physical and kernel memory, input devices (a key logger), cameras, microphones, the screen. */
const DEV_SPY =
  /(?<![\w./-])\/(?:dev\/(?:mem|kmem|port|input\/[^\s'";|&<>()]+|video\d*|snd\/[^\s'";|&<>()]+|hidraw\d*|fb\d*|vcsa?\d*)|proc\/kcore)(?![\w.-])/;

/** Red-flag paths anywhere in raw text: `/proc/<pid|self>/root…` (sandbox escape), `/dev/tcp/…` (socket), `/dev/mem`, `/dev/input/…` (DEV_SPY). */
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
  if (text.includes('/dev/') || text.includes('/proc/kcore')) {
    const m = DEV_SPY.exec(text);
    if (m !== null) out.push(`'${m[0]}' is memory, an input device, a camera, a microphone or the screen`);
  }
  return out;
}

// find's -exec / -execdir / -ok / -okdir: the command each runs (its body up to `;` or `{} +`),
// and whether find visits everything under a broad root (`find / -delete`, `find ~ -exec rm {} \;`).

import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { isBroadTarget, secretPath } from '../knowledge/places/paths.js';
import type { Expansion, Word, WrapperExpansion } from './expansion.js';
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
export function findIsBroad(words: Word[], homes: KnownHomes): boolean {
  const roots = findRoots(words);
  const broadRoot = roots.length === 0 || roots.some((r) => r.dynamic || isBroadTarget(r.text, homes));
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

/** The commands find runs (-exec bodies), each with whether find visits everything under a broad root. */
export function findExec(words: Word[], homes: KnownHomes): WrapperExpansion {
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
      broad ??= findIsBroad(words, homes);
      inner.push({ kind: 'argv', via: 'find -exec', words: body, findBroad: broad });
    }
    i = j;
  }
  return { wrapper: false, inner };
}

/**
 * Names and paths of credential files a find pattern is held against: `-name`/`-iname` against the
 * names, `-path`/`-ipath`/`-wholename` against the paths (keys, certificates, dotenv files, cloud
 * credentials, shell histories, netrc-style password files).
 */
const CREDENTIAL_PATHS: readonly string[] = [
  '/home/u/.ssh/id_rsa',
  '/home/u/.ssh/id_ed25519',
  '/home/u/.ssh/id_ecdsa',
  '/home/u/.ssh/id_dsa',
  '/home/u/certs/server.pem',
  '/home/u/certs/server.key',
  '/home/u/certs/client.p12',
  '/home/u/certs/client.pfx',
  '/home/u/app/.env',
  '/home/u/app/.env.local',
  '/home/u/app/.env.production',
  '/home/u/.aws/credentials',
  '/home/u/.config/gcloud/credentials.db',
  '/home/u/.docker/config.json',
  '/home/u/.kube/config',
  '/home/u/.bash_history',
  '/home/u/.zsh_history',
  '/home/u/.python_history',
  '/home/u/.netrc',
  '/home/u/.pgpass',
  '/home/u/.git-credentials',
  '/home/u/.npmrc',
  '/home/u/.pypirc',
  '/home/u/.gnupg/private-keys-v1.d/a.key',
];
/** Ordinary files: a pattern matching one of them (`*`, `*.*`) is not one for credentials. */
const ORDINARY_PATHS: readonly string[] = ['/home/u/notes.txt', '/home/u/src/main.ts', '/home/u/README', '/home/u/a'];
const FIND_NAME = new Map<string, 'name' | 'path'>([
  ['-name', 'name'],
  ['-iname', 'name'],
  ['-path', 'path'],
  ['-ipath', 'path'],
  ['-wholename', 'path'],
  ['-iwholename', 'path'],
]);

/** A find glob as a regular expression (`*` and `?` cross `/` in `-path`, as find's fnmatch does). */
function globRegExp(glob: string, ignoreCase: boolean): RegExp | null {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) return null;
      re += `[${glob
        .slice(i + 1, end)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '\\' && i + 1 < glob.length) re += (glob[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  try {
    return new RegExp(`^${re}$`, ignoreCase ? 'i' : '');
  } catch {
    return null;
  }
}

/**
 * What a find command visits that holds credentials: a `-name`/`-iname`/`-path` pattern matching
 * credential names (`id_*`, `*.pem`, `.env*`, `*_history`…) under a directory holding credential
 * stores (`~`, `/`, `~/.ssh`…), described as "credential files found by find (id_*) under ~"; or
 * null. Whatever find then does with them — prints their names, `-exec cat {}` — reads them.
 */
export function foundCredentials(
  argv: readonly string[],
  homes: KnownHomes,
  dynamic: readonly number[] = [],
): string | null {
  const roots = findRoots(argv.map((text, i) => ({ text, dynamic: dynamic.includes(i) })));
  const root = roots.find((r) => !r.dynamic && (isBroadTarget(r.text, homes) || secretPath(r.text, homes) !== null));
  if (root === undefined) return null;
  for (let i = 1 + roots.length; i + 1 < argv.length; i++) {
    const kind = FIND_NAME.get(argv[i] as string);
    if (kind === undefined || dynamic.includes(i + 1)) continue;
    const pattern = argv[i + 1] as string;
    const re = globRegExp(pattern, (argv[i] as string).startsWith('-i'));
    if (re === null) continue;
    const matches = (p: string): boolean => re.test(kind === 'name' ? p.slice(p.lastIndexOf('/') + 1) : p);
    if (CREDENTIAL_PATHS.some(matches) && !ORDINARY_PATHS.some(matches))
      return `credential files found by find (${pattern}) under ${root.text}`;
  }
  return null;
}

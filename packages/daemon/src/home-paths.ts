// Paths around FINGER_HOME that the daemon decides once at start: `~` expansion, real paths of
// files that may not exist yet, and where the admin token file lives.

import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** True when `p` is `root` or below it (both absolute, normalised). */
export function isWithin(p: string, root: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Realpath of `p`; for a path that does not exist yet, the realpath of its nearest existing
 * ancestor joined with the rest (so a file about to be created compares like the real one).
 */
export function realPathOf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : join(realPathOf(parent), basename(p));
  }
}

/** `p` made absolute: `~` and `~/…` against `userHome`, another relative path against `base`. */
export function expandPath(p: string, userHome: string, base: string): string {
  if (p === '~') return resolve(userHome);
  if (p.startsWith('~/')) return resolve(userHome, p.slice(2));
  return resolve(base, p);
}

/**
 * The admin token file: `tokenFile` (config `token_file` / FINGER_TOKEN_FILE) — `~/…` against
 * `userHome`, a relative path against FINGER_HOME — else `<home>/token`. Absolute, its
 * directories realpath'd as far as they exist, so the path the OS sandbox masks and the firewall
 * denies is the one written. The file itself is not followed when it is a symlink.
 */
export function resolveTokenFile(home: string, tokenFile: string | undefined, userHome: string): string {
  const abs = expandPath(tokenFile ?? 'token', userHome, resolve(home));
  return join(realPathOf(dirname(abs)), basename(abs));
}

// Synchronous realpath for the firewall's pipeline (evaluate() is synchronous): the path itself,
// or its nearest existing ancestor plus the missing tail for a file that does not exist yet. A
// dangling symlink, a loop or an unreadable component cannot be resolved: where it leads cannot
// be checked, so the caller treats it as outside every root.

import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** The file-system calls the sandbox makes; tests and the daemon may pass their own. */
export interface SandboxFs {
  /** `fs.realpathSync.native` semantics: throws an errno error (ENOENT, ENOTDIR, ELOOP, EACCES…). */
  realpath(p: string): string;
  /** `fs.lstatSync` semantics. */
  lstat(p: string): { isSymbolicLink(): boolean; isFile(): boolean; nlink: number | bigint };
}

/** Node's synchronous file system. */
export const nodeSandboxFs: SandboxFs = {
  realpath: (p) => realpathSync.native(p),
  lstat: (p) => lstatSync(p),
};

/** Outcome of {@link resolveReal}. */
export type RealPath = { ok: true; real: string; exists: boolean } | { ok: false; at: string; problem: string };

function code(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as NodeJS.ErrnoException).code : undefined;
}

/**
 * Real path of the absolute path `abs`: symlinks and `..` resolved; for a path that does not
 * exist, the real path of its nearest existing ancestor with the missing names appended.
 */
export function resolveReal(fs: SandboxFs, abs: string): RealPath {
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      const real = fs.realpath(cur);
      return {
        ok: true,
        real: tail.length === 0 ? real : path.join(real, ...tail.reverse()),
        exists: tail.length === 0,
      };
    } catch (e) {
      const c = code(e);
      if (c === 'ELOOP') return { ok: false, at: cur, problem: 'a symlink loop' };
      if (c !== 'ENOENT' && c !== 'ENOTDIR')
        return { ok: false, at: cur, problem: `it cannot be resolved (${c ?? String(e)})` };
    }
    let isLink = false;
    try {
      isLink = fs.lstat(cur).isSymbolicLink();
    } catch {
      // does not exist at all: look at the parent
    }
    if (isLink) return { ok: false, at: cur, problem: 'a dangling symlink (where it leads cannot be checked)' };
    const parent = path.dirname(cur);
    if (parent === cur) return { ok: true, real: abs, exists: false };
    tail.push(path.basename(cur));
    cur = parent;
  }
}

/** True when `p` is `root` or below it (both absolute and normalised). */
export function isInsideRoot(p: string, root: string): boolean {
  if (p === root) return true;
  if (root === '/') return p.startsWith('/');
  return p.startsWith(root) && p.charCodeAt(root.length) === 47;
}

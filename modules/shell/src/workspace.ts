import fs from 'node:fs/promises';
import path from 'node:path';

import { FingerError } from '@finger/protocol';

/**
 * The real paths of the workspace roots. The first root is created when missing (it is the
 * default cwd and holds `.finger/run/`); other missing roots are left out.
 */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < roots.length; i++) {
    const r = roots[i]!;
    if (i === 0) await fs.mkdir(r, { recursive: true });
    try {
      out.push(await fs.realpath(r));
    } catch (e) {
      if (i === 0) throw e;
    }
  }
  return out;
}

/** True when `real` is `root` or below it (both real paths). */
export function isInside(real: string, root: string): boolean {
  return real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/** Realpath of `p`, or of its nearest existing parent joined with the missing rest. */
async function realpathOrParent(p: string): Promise<{ real: string; exists: boolean }> {
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = await fs.realpath(cur);
      return { real: rest.length === 0 ? real : path.join(real, ...rest.reverse()), exists: rest.length === 0 };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
      const parent = path.dirname(cur);
      if (parent === cur) throw e;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/**
 * Resolves a working directory for a command: relative paths against the first root, then the
 * real path (symlinks, `..`) — for a missing directory that of its nearest existing parent — must
 * lie inside one of the roots. Throws E_FORBIDDEN outside every root, E_NOT_FOUND when the
 * directory does not exist, E_INVALID_ARGS when it is not a directory.
 */
export async function resolveCwd(cwd: string | undefined, roots: readonly string[]): Promise<string> {
  const real = await realRoots(roots);
  const first = real[0]!;
  if (cwd === undefined) return first;
  const wanted = path.resolve(first, cwd);
  const { real: resolved, exists } = await realpathOrParent(wanted);
  if (!real.some((r) => isInside(resolved, r))) {
    throw new FingerError('E_FORBIDDEN', `cwd "${cwd}" resolves to ${resolved}, outside the workspace roots`, {
      cwd,
      resolved,
      roots: real,
    });
  }
  if (!exists) throw new FingerError('E_NOT_FOUND', `cwd "${cwd}" does not exist`, { cwd, resolved });
  const st = await fs.stat(resolved);
  if (!st.isDirectory()) {
    throw new FingerError('E_INVALID_ARGS', `cwd "${cwd}" is not a directory`, {
      issues: [{ path: '$.cwd', message: 'is not a directory' }],
    });
  }
  return resolved;
}

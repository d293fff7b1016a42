import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { FingerError } from '@finger/protocol';

/** A path argument resolved inside a workspace root. */
export interface WorkspacePath {
  /** The argument as given. */
  input: string;
  /** Absolute real path (symlinks and `..` resolved; a not-yet-existing tail appended as given). */
  path: string;
  /** The real path of the workspace root holding it. */
  root: string;
  /** True when `path` exists now (realpath succeeded for the whole path). */
  exists: boolean;
}

function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as NodeJS.ErrnoException).code : undefined;
}

/** True when `p` is `root` or below it (both absolute and normalised). */
export function isInside(p: string, root: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

/** Real path of `p`, or its normalised absolute form when it does not exist (yet). */
async function realOrResolved(p: string): Promise<string> {
  try {
    return await fsp.realpath(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * The real paths of the configured roots, in order. A root that does not exist is kept in its
 * normalised form (nothing can resolve inside it until it is created).
 */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map((r) => realOrResolved(r)));
}

/**
 * Real path of `abs` via its nearest existing ancestor. Throws E_FORBIDDEN when a component is a
 * dangling symlink or a symlink loop: where it would lead cannot be checked.
 */
async function realpathNearest(
  abs: string,
  fail: (resolved: string, reason: string) => never,
): Promise<{ real: string; exists: boolean }> {
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      const real = await fsp.realpath(cur);
      return { real: tail.length === 0 ? real : path.join(real, ...tail.reverse()), exists: tail.length === 0 };
    } catch (e) {
      const code = errCode(e);
      if (code === 'ELOOP') fail(cur, 'symlink loop');
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    }
    let isLink = false;
    try {
      isLink = (await fsp.lstat(cur)).isSymbolicLink();
    } catch {
      // does not exist at all: look at the parent
    }
    if (isLink) fail(cur, 'dangling symlink (its target does not exist, so where it leads cannot be checked)');
    const parent = path.dirname(cur);
    if (parent === cur) return { real: abs, exists: false };
    tail.push(path.basename(cur));
    cur = parent;
  }
}

/**
 * Resolves a tool's path argument inside the workspace `roots` (absolute paths). Relative paths
 * resolve against the first root; `..` is normalised, then symlinks are resolved with realpath
 * (of the path, or of its nearest existing ancestor when it does not exist yet) BEFORE the
 * containment check. Callers must act on the returned `path`, never on the raw input.
 *
 * Throws E_INVALID_ARGS for an empty path or one containing NUL, and E_FORBIDDEN (details
 * `{path, resolved, roots, reason}`) when the result lies outside every root — escaping by `..`,
 * by an absolute path, by a symlink pointing out — or when a component is a dangling symlink.
 */
export async function resolveWorkspacePath(input: unknown, roots: readonly string[]): Promise<WorkspacePath> {
  if (typeof input !== 'string' || input.length === 0) {
    throw new FingerError('E_INVALID_ARGS', 'path must be a non-empty string', { path: input });
  }
  if (input.includes('\0')) {
    throw new FingerError('E_INVALID_ARGS', 'path must not contain NUL bytes', { path: input });
  }
  const real = await realRoots(roots);
  const fail = (resolved: string, reason: string): never => {
    throw new FingerError('E_FORBIDDEN', `path "${input}" is outside the workspace: ${reason}`, {
      path: input,
      resolved,
      roots: real,
      reason,
    });
  };
  const first = real[0];
  if (first === undefined) fail(input, 'no workspace roots are configured');
  const abs = path.isAbsolute(input) ? path.resolve(input) : path.resolve(first as string, input);
  const { real: resolved, exists } = await realpathNearest(abs, fail);
  const root = real.find((r) => isInside(resolved, r));
  if (root === undefined) {
    const reason =
      resolved === abs ? 'it resolves outside every workspace root' : `it resolves (through a symlink) to ${resolved}`;
    return fail(resolved, reason);
  }
  return { input, path: resolved, root, exists };
}

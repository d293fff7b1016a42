import { mkdirSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';

import { FingerError } from '@finger/protocol';

import { expandPath, isWithin, realPathOf } from './home-paths.js';

/** Where {@link resolveWorkspaceRoots} resolves and what it keeps roots away from. */
export interface WorkspaceRootsOptions {
  /** FINGER_HOME: no root may be it or inside it. */
  home: string;
  /** The user's home directory: `~/…` and relative roots resolve against it. */
  userHome: string;
  /** The admin token file (absolute): no root may hold it. */
  tokenFile: string;
}

function refuseRoot(i: number, abs: string, message: string, reason: string): FingerError {
  return new FingerError('E_INVALID_ARGS', `invalid configuration: ${message}`, {
    source: 'config',
    path: abs,
    reason,
    issues: [{ path: `$.workspace.roots[${i}]`, message }],
  });
}

/**
 * Resolves the configured `workspace.roots` at start: `~/…` and relative entries against the
 * user's home directory, each created when missing (mode 0700) and then realpath'd, so modules
 * compare paths against the real directories (symlinked roots included). Duplicates after
 * resolution are dropped. Fails start with E_INVALID_ARGS (`details.issues` points at
 * `$.workspace.roots[i]`, `details.reason` is stable) when a root cannot be created
 * (`cannot_create`), is FINGER_HOME or inside it (`inside_finger_home`: an agent working there
 * could read the daemon's token, keys and audit log), or holds the admin token file
 * (`holds_token_file`). A root inside FINGER_HOME is refused before anything is created there.
 */
export function resolveWorkspaceRoots(roots: readonly string[], o: WorkspaceRootsOptions): string[] {
  const home = realPathOf(resolve(o.home));
  const tokenFile = realPathOf(resolve(o.tokenFile));
  const out: string[] = [];
  roots.forEach((root, i) => {
    const abs = expandPath(root, o.userHome, o.userHome);
    const insideHome = (p: string) => {
      if (isWithin(p, home) || isWithin(p, resolve(o.home)))
        throw refuseRoot(
          i,
          abs,
          `workspace root ${abs} is inside FINGER_HOME (${home}), the daemon's own state: agents must not reach its token, keys or audit log — choose a directory outside it`,
          'inside_finger_home',
        );
    };
    insideHome(realPathOf(abs));
    let real: string;
    try {
      mkdirSync(abs, { recursive: true, mode: 0o700 });
      real = realpathSync(abs);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const reason = err.code ? `${err.code}: ${err.message}` : err.message;
      throw refuseRoot(i, abs, `workspace root ${abs} cannot be created: ${reason}`, 'cannot_create');
    }
    insideHome(real);
    if (isWithin(tokenFile, real))
      throw refuseRoot(
        i,
        abs,
        `workspace root ${abs} holds the admin token file ${tokenFile}: agents working there could read it — choose a directory that does not contain it`,
        'holds_token_file',
      );
    if (!out.includes(real)) out.push(real);
  });
  return out;
}

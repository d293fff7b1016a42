import { mkdirSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';

import { FingerError } from '@finger/protocol';

/**
 * Resolves the configured `workspace.roots` at start: relative entries against FINGER_HOME,
 * each created when missing (mode 0700) and then realpath'd, so modules compare paths against
 * the real directories (symlinked roots included). Duplicates after resolution are dropped.
 * A root that cannot be created or resolved fails start with E_INVALID_ARGS naming the root
 * and the reason (`details.issues` points at `$.workspace.roots[i]`).
 */
export function resolveWorkspaceRoots(home: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  roots.forEach((root, i) => {
    const abs = resolve(home, root);
    let real: string;
    try {
      mkdirSync(abs, { recursive: true, mode: 0o700 });
      real = realpathSync(abs);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const reason = err.code ? `${err.code}: ${err.message}` : err.message;
      const message = `workspace root ${abs} cannot be created: ${reason}`;
      throw new FingerError('E_INVALID_ARGS', `invalid configuration: ${message}`, {
        source: 'config',
        path: abs,
        issues: [{ path: `$.workspace.roots[${i}]`, message }],
      });
    }
    if (!out.includes(real)) out.push(real);
  });
  return out;
}

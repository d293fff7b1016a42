import { isAbsolute, resolve } from 'node:path';

import type { RuntimeOptions } from './runtime.js';
import { findProgram } from './sandbox.js';

/**
 * The argv that starts a module's child process: inside the daemon's sandbox when it applies to
 * the module (its folder and working directory stay usable below a mask), as it is otherwise.
 * Throws an ENOENT error when the program does not exist (bubblewrap would only exit 1 with a
 * message), and E_NO_SANDBOX in mode `required` when no sandbox can run.
 */
export function sandboxCommand(
  opts: Pick<RuntimeOptions, 'sandbox' | 'baseDir' | 'manifest'>,
  command: readonly string[],
  cwd: string,
  env: Record<string, string>,
): { command: readonly string[]; sandboxed: boolean } {
  const sb = opts.sandbox;
  if (sb === undefined || !sb.appliesTo(opts.manifest.id)) return { command, sandboxed: false };
  const keep = [
    { path: resolve(opts.baseDir), writable: true },
    { path: cwd, writable: true },
  ];
  const wrapped = sb.wrap(command, keep);
  if (wrapped === undefined) return { command, sandboxed: false };
  const program = command[0] ?? '';
  const lookup = program.includes('/') && !isAbsolute(program) ? resolve(cwd, program) : program;
  if (findProgram(lookup, env.PATH) === undefined) {
    const e = new Error(`spawn ${program} ENOENT`) as NodeJS.ErrnoException;
    e.code = 'ENOENT';
    throw e;
  }
  return { command: wrapped, sandboxed: true };
}

import type { Stats } from 'node:fs';
import { promises as fsp } from 'node:fs';

import { FingerError, isFingerError, type Principal } from '@finger/protocol';
import type { UndoManager, WorkspacePath } from '@finger/workspace';

import type { PathLock } from './path-lock.js';
import type { FsSettings } from './settings.js';

/** What every fs tool shares: settings, the undo store, the per-path lock and the resolver. */
export interface FsContext {
  settings: FsSettings;
  undo: UndoManager;
  lock: PathLock;
  /**
   * Resolves a path argument inside the call's roots (E_FORBIDDEN outside): the configured ones,
   * and first the calling task's own workspace when the daemon gave it one.
   */
  resolve(input: unknown, call?: FsCallContext): Promise<WorkspacePath>;
  /** The calling task's own workspace root, if any (from the hub's `source`, never the payload). */
  ownRoots(call?: FsCallContext): readonly string[];
}

/** The part of the hub's ToolCallContext the fs tools read (optional: tests call tools directly). */
export interface FsCallContext {
  readonly request_id?: string;
  /** The caller, as the hub set it. */
  readonly source?: Principal;
}

/** The daemon's resolver of a task principal's own workspace (setting `workspace_for`, in-process only). */
export type WorkspaceFor = (source: Principal) => string | undefined;

/** `settings.workspace_for` when it is a function (a JSON value there is ignored). */
export function workspaceForOf(settings: Record<string, unknown>): WorkspaceFor | undefined {
  const f = settings.workspace_for;
  return typeof f === 'function' ? (f as WorkspaceFor) : undefined;
}

/** Roles of a person who may restore anyone's backup (the daemon's `ACCESS.operator`, as on POST /v1/undo). */
const OPERATOR_ROLES: ReadonlySet<string> = new Set(['admin', 'operator']);

/** The caller as `kind:id` (recorded on its backups), or undefined without a hub context. */
export function principalKey(call?: FsCallContext): string | undefined {
  const s = call?.source;
  return s === undefined ? undefined : `${s.kind}:${s.id}`;
}

/** True for a human admin or operator: their undo may restore any backup, not only their own. */
export function isOperator(call?: FsCallContext): boolean {
  const s = call?.source;
  return s?.kind === 'human' && s.roles.some((r) => OPERATOR_ROLES.has(r));
}

/** lstat, or null when the path does not exist. */
export async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fsp.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** E_NOT_FOUND for a path argument. */
export function notFound(p: WorkspacePath, hint = ''): FingerError {
  return new FingerError('E_NOT_FOUND', `${p.input}: no such file or directory${hint}`, {
    path: p.input,
    resolved: p.path,
  });
}

/** `0644`-style permission bits. */
export function modeString(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * Runs `fn`, turning operating-system errors into finger codes: ENOENT → E_NOT_FOUND,
 * EISDIR/ENOTDIR/ENOTEMPTY/EEXIST → E_INVALID_ARGS, ELOOP (a symlink swapped in) → E_FORBIDDEN,
 * anything else → E_MODULE_ERROR with the errno code. FingerErrors pass unchanged.
 */
export async function mapFsErrors<T>(p: WorkspacePath, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isFingerError(e)) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const details = { path: p.input, resolved: p.path, errno: code };
    const msg = `${p.input}: ${(e as Error).message}`;
    if (code === 'ENOENT') throw new FingerError('E_NOT_FOUND', msg, details);
    if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') {
      throw new FingerError('E_INVALID_ARGS', msg, details);
    }
    if (code === 'ELOOP') throw new FingerError('E_FORBIDDEN', `${p.input}: a symlink appeared in the path`, details);
    throw new FingerError('E_MODULE_ERROR', msg, details);
  }
}

import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { FingerError } from '@finger/protocol';
import { atomicWriteFile, type BackupEntry, type RestoreScope, type WorkspacePath } from '@finger/workspace';

import {
  type FsCallContext,
  type FsContext,
  isOperator,
  lstatOrNull,
  mapFsErrors,
  notFound,
  principalKey,
} from './context.js';
import { type ContentEncoding, decodeContent, decodeUtf8 } from './encoding.js';
import { applyEdits, applyUnifiedDiff, type SearchReplaceEdit } from './patch-apply.js';

function tooBig(p: WorkspacePath, bytes: number, max: number): FingerError {
  return new FingerError('E_INVALID_ARGS', `${p.input}: ${bytes} bytes exceeds max_write_bytes (${max})`, {
    path: p.input,
    bytes,
    max_write_bytes: max,
  });
}

/**
 * The backup options of a call: its request id, the calling task's own root and the caller
 * (`kind:id` of the hub's `source`, never the payload) — the backup records the last two.
 */
function backupOptions(
  ctx: FsContext,
  call?: FsCallContext,
): { request_id?: string; extra_roots?: readonly string[]; principal?: string } {
  const own = ctx.ownRoots(call);
  const principal = principalKey(call);
  return {
    ...(typeof call?.request_id === 'string' ? { request_id: call.request_id } : {}),
    ...(own.length ? { extra_roots: own } : {}),
    ...(principal !== undefined ? { principal } : {}),
  };
}

/** Checks the parent directory exists (creating it when asked); E_NOT_FOUND otherwise. */
async function ensureParent(p: WorkspacePath, create: boolean): Promise<void> {
  const parent = path.dirname(p.path);
  const st = await lstatOrNull(parent);
  if (st?.isDirectory()) return;
  if (st !== null) throw new FingerError('E_INVALID_ARGS', `${p.input}: parent is not a directory`, { path: p.input });
  if (!create) throw notFound(p, ' (parent directory missing; pass create_dirs: true)');
  await fsp.mkdir(parent, { recursive: true });
}

/** Arguments of `fs.write`. */
export interface WriteParams {
  path: string;
  content: string;
  encoding?: ContentEncoding;
  create_dirs?: boolean;
}

/** Result of `fs.write`. */
export interface WriteResult {
  path: string;
  bytes: number;
  backup_id: string;
  /** True when the file did not exist before. */
  created: boolean;
}

/**
 * `fs.write`: replaces a whole file atomically, keeping an existing file's mode. The previous
 * state is backed up first (kind `write`); when the backup fails (e.g. over max_backup_bytes)
 * nothing is written. E_INVALID_ARGS over max_write_bytes or for a directory; E_NOT_FOUND when
 * the parent is missing and `create_dirs` is not set.
 */
export async function writeTool(ctx: FsContext, args: WriteParams, call?: FsCallContext): Promise<WriteResult> {
  const p = await ctx.resolve(args.path, call);
  const data = decodeContent(args.content, args.encoding ?? 'utf8');
  if (data.length > ctx.settings.max_write_bytes) throw tooBig(p, data.length, ctx.settings.max_write_bytes);
  return ctx.lock.run(p.path, () =>
    mapFsErrors(p, async () => {
      const st = await lstatOrNull(p.path);
      if (st !== null && !st.isFile()) {
        throw new FingerError('E_INVALID_ARGS', `${p.input} exists and is not a regular file`, { path: p.input });
      }
      if (st === null) await ensureParent(p, args.create_dirs === true);
      const backup = await ctx.undo.backup(p.path, { kind: 'write', ...backupOptions(ctx, call) });
      await atomicWriteFile(p.path, data, st === null ? {} : { mode: st.mode });
      return { path: p.path, bytes: data.length, backup_id: backup.id, created: st === null };
    }),
  );
}

/** Arguments of `fs.patch`: exactly one of `diff` and `edits`. */
export interface PatchParams {
  path: string;
  diff?: string;
  edits?: SearchReplaceEdit[];
}

/** Result of `fs.patch`. */
export interface PatchResult {
  path: string;
  backup_id: string;
  hunks_applied: number;
  /** Size of the patched file. */
  bytes: number;
}

/**
 * `fs.patch`: applies a unified diff (`diff`) or search/replace `edits` to an existing UTF-8 text
 * file, all or nothing, then writes it atomically after backing it up (kind `patch`). Exactly one
 * of `diff` / `edits`. E_INVALID_ARGS when a hunk or edit does not apply (named in the message
 * and details), when the file is not UTF-8, or past the size limits; E_NOT_FOUND when missing.
 */
export async function patchTool(ctx: FsContext, args: PatchParams, call?: FsCallContext): Promise<PatchResult> {
  const p = await ctx.resolve(args.path, call);
  if ((args.diff === undefined) === (args.edits === undefined)) {
    throw new FingerError('E_INVALID_ARGS', 'give exactly one of diff or edits', { path: args.path });
  }
  if (!p.exists) throw notFound(p);
  return ctx.lock.run(p.path, () =>
    mapFsErrors(p, async () => {
      const st = await fsp.lstat(p.path);
      if (!st.isFile()) throw new FingerError('E_INVALID_ARGS', `${p.input} is not a regular file`, { path: p.input });
      const maxRead = ctx.settings.max_read_bytes;
      if (st.size > maxRead) {
        throw new FingerError('E_INVALID_ARGS', `${p.input}: ${st.size} bytes exceeds max_read_bytes (${maxRead})`, {
          path: p.input,
          size: st.size,
          max_read_bytes: maxRead,
        });
      }
      const before = decodeUtf8(await fsp.readFile(p.path), p.input);
      const out = args.diff !== undefined ? applyUnifiedDiff(before, args.diff) : applyEdits(before, args.edits ?? []);
      const data = Buffer.from(out.text, 'utf8');
      if (data.length > ctx.settings.max_write_bytes) throw tooBig(p, data.length, ctx.settings.max_write_bytes);
      const backup = await ctx.undo.backup(p.path, { kind: 'patch', ...backupOptions(ctx, call) });
      await atomicWriteFile(p.path, data, { mode: st.mode });
      return { path: p.path, backup_id: backup.id, hunks_applied: out.hunks_applied, bytes: data.length };
    }),
  );
}

/** Arguments of `fs.delete`. */
export interface DeleteParams {
  path: string;
  recursive?: boolean;
}

/** Result of `fs.delete`. */
export interface DeleteResult {
  path: string;
  type: 'file' | 'dir';
  /** Bytes backed up (a directory: the sum of its files). */
  bytes: number;
  backup_id: string;
}

/**
 * `fs.delete`: removes a file, or a directory tree when `recursive` is true, after backing it up
 * (kind `delete`; fs.undo recreates it). E_NOT_FOUND when missing; E_INVALID_ARGS for a directory
 * without `recursive`; E_FORBIDDEN for a workspace root itself.
 */
export async function deleteTool(ctx: FsContext, args: DeleteParams, call?: FsCallContext): Promise<DeleteResult> {
  const p = await ctx.resolve(args.path, call);
  if (!p.exists) throw notFound(p);
  if (p.path === p.root) {
    throw new FingerError('E_FORBIDDEN', `${p.input} is a workspace root and cannot be deleted`, {
      path: p.input,
      resolved: p.path,
    });
  }
  return ctx.lock.run(p.path, () =>
    mapFsErrors(p, async () => {
      const st = await fsp.lstat(p.path);
      const isDir = st.isDirectory();
      if (isDir && args.recursive !== true) {
        throw new FingerError('E_INVALID_ARGS', `${p.input} is a directory; pass recursive: true to delete it`, {
          path: p.input,
        });
      }
      const backup = await ctx.undo.backup(p.path, { kind: 'delete', ...backupOptions(ctx, call) });
      await fsp.rm(p.path, { recursive: isDir, force: false });
      return { path: p.path, type: isDir ? 'dir' : 'file', bytes: backup.size, backup_id: backup.id };
    }),
  );
}

/** Arguments of `fs.backups`. */
export interface BackupsParams {
  path?: string;
  limit?: number;
}

/** Result of `fs.backups`: newest first; `total` counts every match, returned or not. */
export interface BackupsResult {
  backups: BackupEntry[];
  total: number;
}

/**
 * `fs.backups`: the kept backups, newest first, at most `limit` (default 100); `path` keeps only
 * those of that (resolved) path. A person (any role: viewers watch everything) sees every
 * caller's; an agent or a module only those of its own changes — the backups it may restore — so
 * one agent does not learn which files another changed; a call without a caller sees none.
 */
export async function backupsTool(ctx: FsContext, args: BackupsParams, call?: FsCallContext): Promise<BackupsResult> {
  let all = await ctx.undo.list();
  if (call?.source?.kind !== 'human') {
    const principal = principalKey(call);
    all = principal === undefined ? [] : all.filter((e) => e.principal === principal);
  }
  if (args.path !== undefined) {
    const p = await ctx.resolve(args.path, call);
    all = all.filter((e) => e.path === p.path);
  }
  const limit = args.limit ?? 100;
  return { backups: all.slice(0, limit), total: all.length };
}

/** Result of `fs.undo`. */
export interface UndoResult {
  restored: { id: string; path: string; bytes: number; existed: boolean; type: BackupEntry['type'] };
  /** Backup of the state the undo replaced: `fs.undo {id: backup_id}` undoes the undo. */
  backup_id: string;
}

/**
 * `fs.undo`: restores backup `id` (default: the newest change not undone yet) byte for byte,
 * under the same per-path lock as writes. Who may restore what comes from the hub's `source`: a
 * human admin or operator any backup (default: the newest of anyone's); every other caller (an
 * agent, a module) only the backups of its own changes and undos (default: its own newest).
 * E_NOT_FOUND for an unknown id or nothing (of the caller's) to undo; E_FORBIDDEN for another
 * caller's backup, one that records no caller (stored before callers were recorded) unless the
 * caller is an operator, a call without a caller, or a path now outside the workspace.
 */
export async function undoTool(ctx: FsContext, args: { id?: string }, call?: FsCallContext): Promise<UndoResult> {
  const principal = principalKey(call);
  if (principal === undefined) {
    throw new FingerError('E_FORBIDDEN', 'fs.undo needs the calling principal (the hub sets it): nothing restored');
  }
  const scope: RestoreScope = isOperator(call) ? { principal, any: true } : { principal };
  const target = args.id === undefined ? await ctx.undo.latest(scope) : await ctx.undo.get(args.id);
  if (target === undefined && args.id !== undefined) {
    throw new FingerError('E_NOT_FOUND', `no backup with id "${args.id}" (it may have been evicted)`, { id: args.id });
  }
  if (target === undefined) {
    throw scope.any
      ? new FingerError('E_NOT_FOUND', 'nothing to undo')
      : new FingerError('E_NOT_FOUND', `nothing to undo: ${principal} has no change left to undo`, { principal });
  }
  const { entry, undo } = await ctx.lock.run(target.path, () => ctx.undo.restore(target.id, scope));
  return {
    restored: { id: entry.id, path: entry.path, bytes: entry.size, existed: entry.existed, type: entry.type },
    backup_id: undo.id,
  };
}

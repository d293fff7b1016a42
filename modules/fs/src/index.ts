/**
 * fs: the built-in file tools (read, list, stat, write, patch, delete, backups, undo), in-process.
 * Every path is resolved inside the workspace roots (realpath first; escapes are E_FORBIDDEN);
 * every change is backed up in the firewall's UndoManager before it happens.
 */
import { promises as fsp } from 'node:fs';

import { FingerError } from '@finger/protocol';
import { resolveWorkspacePath, UndoManager } from '@finger/workspace';

import { type FsCallContext, type FsContext, workspaceForOf } from './context.js';
import { PathLock } from './path-lock.js';
import {
  type ListParams,
  type ListResult,
  listTool,
  type ReadParams,
  type ReadResult,
  readTool,
  type StatResult,
  statTool,
} from './read-tools.js';
import { parseFsSettings } from './settings.js';
import {
  type BackupsParams,
  type BackupsResult,
  backupsTool,
  type DeleteParams,
  type DeleteResult,
  deleteTool,
  type PatchParams,
  type PatchResult,
  patchTool,
  type UndoResult,
  undoTool,
  type WriteParams,
  type WriteResult,
  writeTool,
} from './write-tools.js';

export type { FsCallContext, FsContext } from './context.js';
export type { ContentEncoding } from './encoding.js';
export type { PatchOutcome, SearchReplaceEdit } from './patch-apply.js';
export { applyEdits, applyUnifiedDiff } from './patch-apply.js';
export type { ListEntry, ListParams, ListResult, ReadParams, ReadResult, StatResult } from './read-tools.js';
export type { FsSettings } from './settings.js';
export { FS_DEFAULTS, parseFsSettings } from './settings.js';
export type {
  BackupsParams,
  BackupsResult,
  DeleteParams,
  DeleteResult,
  PatchParams,
  PatchResult,
  UndoResult,
  WriteParams,
  WriteResult,
} from './write-tools.js';

/** What the factory receives (structurally the hub's `InProcessModuleFactoryOptions`). */
export interface FsModuleOptions {
  settings: Record<string, unknown>;
}

/** The in-process module object: the eight tools (each rejects with a FingerError) and health. */
export interface FsModule {
  tools: {
    read(args: ReadParams, call?: FsCallContext): Promise<ReadResult>;
    list(args: ListParams, call?: FsCallContext): Promise<ListResult>;
    stat(args: { path: string }, call?: FsCallContext): Promise<StatResult>;
    write(args: WriteParams, call?: FsCallContext): Promise<WriteResult>;
    patch(args: PatchParams, call?: FsCallContext): Promise<PatchResult>;
    delete(args: DeleteParams, call?: FsCallContext): Promise<DeleteResult>;
    backups(args: BackupsParams, call?: FsCallContext): Promise<BackupsResult>;
    undo(args: { id?: string }, call?: FsCallContext): Promise<UndoResult>;
  };
  health(): Promise<{ ok: boolean; detail?: string }>;
}

/** The arguments object as given; E_INVALID_ARGS when it is not an object (direct calls). */
function obj<T>(args: T): T {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new FingerError('E_INVALID_ARGS', 'arguments must be a JSON object');
  }
  return args;
}

/**
 * The module factory (default export) the in-process runtime calls. Reads the settings (see
 * README: workspace_roots, backups_dir and the size/count limits), creates missing workspace
 * roots, and returns the tools. Throws E_INVALID_ARGS naming a bad setting.
 */
export default async function createFsModule(opts: FsModuleOptions): Promise<FsModule> {
  const settings = parseFsSettings(opts.settings ?? {});
  for (const root of settings.workspace_roots) await fsp.mkdir(root, { recursive: true });
  const undoOptions = {
    backups_dir: settings.backups_dir,
    workspace_roots: settings.workspace_roots,
    max_backups: settings.max_backups,
    max_total_bytes: settings.max_backup_total_bytes,
    max_backup_bytes: settings.max_backup_bytes,
  };
  // the daemon shares the store with the shell module's delete snapshots (setting `undo_manager_for`)
  const shared = opts.settings?.undo_manager_for;
  const undo =
    typeof shared === 'function'
      ? (shared as (o: typeof undoOptions) => UndoManager)(undoOptions)
      : new UndoManager(undoOptions);
  // a supervised task's own workspace: a root for that task's calls only, first (relative paths resolve there)
  const workspaceFor = workspaceForOf(opts.settings ?? {});
  const ownRoots = (call?: FsCallContext): readonly string[] => {
    const ws = workspaceFor !== undefined && call?.source !== undefined ? workspaceFor(call.source) : undefined;
    return ws === undefined ? [] : [ws];
  };
  const ctx: FsContext = {
    settings,
    undo,
    lock: new PathLock(),
    resolve: (input, call) => {
      const own = ownRoots(call);
      return resolveWorkspacePath(input, own.length ? [...own, ...settings.workspace_roots] : settings.workspace_roots);
    },
    ownRoots,
  };
  return {
    tools: {
      read: (args, call) => readTool(ctx, obj(args), call),
      list: (args, call) => listTool(ctx, obj(args), call),
      stat: (args, call) => statTool(ctx, obj(args), call),
      write: (args, call) => writeTool(ctx, obj(args), call),
      patch: (args, call) => patchTool(ctx, obj(args), call),
      delete: (args, call) => deleteTool(ctx, obj(args), call),
      backups: (args, call) => backupsTool(ctx, obj(args), call),
      undo: (args, call) => undoTool(ctx, obj(args), call),
    },
    async health() {
      try {
        await fsp.access(settings.workspace_roots[0]!);
        return { ok: true };
      } catch (e) {
        return { ok: false, detail: `workspace root unavailable: ${(e as Error).message}` };
      }
    },
  };
}

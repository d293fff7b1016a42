import { join } from 'node:path';

import { UndoManager, type UndoManagerOptions } from '@finger/firewall';
import { FingerError, type Principal } from '@finger/protocol';

/** What {@link wireUndoSnapshots} needs. */
export interface UndoWiringOptions {
  /** FINGER_HOME: the store is `<home>/backups` unless the fs module's settings name another. */
  home: string;
  /** The fs module's operator settings (config `modules.settings.fs`), for its `backups_dir`. */
  fsSettings?: Record<string, unknown>;
  /** A supervised task's own workspace (a root for its calls only). */
  workspaceFor: (source: Principal) => string | undefined;
  /** Says when a snapshot could not be trimmed after its command (it then keeps extra links). */
  warn(message: string, details: object): void;
}

/** The undo store shared by the fs module (its backups and undo) and the shell module (delete snapshots). */
export interface UndoWiring {
  /** The store's directory, where the firewall checks a snapshot's file system. */
  store: string;
  /** Setting `undo_manager_for` of the fs module: it builds its UndoManager through it, so both share one. */
  undoManagerFor: (o: UndoManagerOptions) => UndoManager;
  /** Setting `undo_snapshot` of the shell module (its UndoSnapshotPort). */
  undoSnapshot: (
    paths: readonly string[],
    meta: { source: Principal; request_id: string },
  ) => Promise<() => Promise<void>>;
  /**
   * Delegated mode: backs up a file a delegated agent is allowed to write, patch or delete (the
   * hook's pre event), in the same store, so `myfinger undo <id>` restores it. Rejects with
   * E_NO_TARGET before the fs module has loaded, E_FORBIDDEN outside the workspace roots.
   */
  backup: (
    path: string,
    meta: { kind: 'write' | 'patch' | 'delete'; request_id: string; principal: string },
  ) => Promise<{ id: string }>;
}

/**
 * Wires the hard-link snapshots of deleting shell commands (link-snapshot.ts of @finger/workspace)
 * into the fs module's undo store, so `myfinger undo` and POST /v1/undo restore them: one
 * UndoManager, built by the fs module with its own settings, used by both modules. A snapshot
 * before the fs module has loaded is refused (E_NO_TARGET): the command does not run.
 */
export function wireUndoSnapshots(o: UndoWiringOptions): UndoWiring {
  const dir = o.fsSettings?.backups_dir;
  const store = typeof dir === 'string' && dir !== '' ? dir : join(o.home, 'backups');
  let manager: UndoManager | undefined;
  const loaded = (what: string): UndoManager => {
    if (manager === undefined)
      throw new FingerError('E_NO_TARGET', `the fs module (the undo store) is not loaded: ${what}`, { target: 'fs' });
    return manager;
  };
  return {
    store,
    undoManagerFor: (opts) => (manager = new UndoManager(opts)),
    backup: async (path, meta) => {
      const m = loaded('a delegated change cannot be backed up');
      return m.backup(path, meta);
    },
    undoSnapshot: async (paths, meta) => {
      const m = loaded('a delete cannot be made undoable');
      const own = o.workspaceFor(meta.source);
      const entry = await m.snapshotLinks(paths, {
        request_id: meta.request_id,
        principal: `${meta.source.kind}:${meta.source.id}`,
        ...(own !== undefined ? { extra_roots: [own] } : {}),
      });
      return async () => {
        try {
          await m.settleLinks(entry.id);
        } catch (e) {
          o.warn('undo: a delete snapshot could not be trimmed after its command', { id: entry.id, err: e });
        }
      };
    },
  };
}

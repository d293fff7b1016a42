// `@finger/workspace`: what changes files in a workspace safely — atomic writes, workspace path
// resolution (symlinks resolved, roots enforced), and undo: backups before each write or delete,
// hard-link snapshots of trees a shell command deletes, restore by id. The fs module and the
// firewall both use it; neither imports the other for it (issue 26 item 3).

export { appendSynced, atomicWriteFile, fsyncDir } from './atomic-write.js';
export type { LinkBounds, SnapshotWord } from './link-snapshot.js';
export { LINK_DEFAULTS, planLinkSnapshot } from './link-snapshot.js';
export type { SnapshotType } from './snapshot.js';
export type { BackupEntry, BackupKind, RestoreResult, RestoreScope, UndoManagerOptions } from './undo-manager.js';
export { UNDO_DEFAULTS, UndoManager } from './undo-manager.js';
export type { WorkspacePath } from './workspace-path.js';
export { isInside, realRoots, resolveWorkspacePath } from './workspace-path.js';

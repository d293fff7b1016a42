import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { FingerError, rfc3339, ulid } from '@finger/protocol';

import { appendSynced, atomicWriteFile } from './atomic-write.js';
import { applyLinks, captureLinks, LINK_DEFAULTS, type LinkBounds, linkedTrees, pruneLinks } from './link-snapshot.js';
import { applySnapshot, captureSnapshot, removeSnapshot, type SnapshotType } from './snapshot.js';
import { isInside, realRoots, resolveWorkspacePath } from './workspace-path.js';

/** Why a backup was taken: the change about to happen, or `undo` (the state an undo replaced). */
export type BackupKind = 'write' | 'delete' | 'patch' | 'undo';

/** One backup: the state of `path` just before a change. */
export interface BackupEntry {
  /** ULID; time-sortable. */
  id: string;
  /** Absolute real path that was backed up. */
  path: string;
  /** RFC 3339 time of the backup. */
  ts: string;
  kind: BackupKind;
  /** False when the path did not exist: restoring it deletes the path. */
  existed: boolean;
  /** What the path was: a file, a directory, or nothing. */
  type: SnapshotType;
  /** Bytes stored (a directory: the sum of its files; 0 when absent). */
  size: number;
  /** sha256 (hex) of the stored file or directory manifest; null when absent. */
  sha256: string | null;
  /** Permission bits of the backed-up path. */
  mode?: number;
  request_id?: string;
  /** For kind `undo`: the entry whose restore this backup preceded. */
  undo_of?: string;
  /**
   * Set when the path lay in a caller's own root (a supervised task's workspace) rather than a
   * configured one: a restore may then reach that root again (the path is resolved inside it anew).
   */
  workspace?: string;
  /** Type `links`: every tree the command could delete (`path` is the first). */
  paths?: string[];
  /** Set once this entry was restored: the id of the `undo` backup taken then. */
  restored_by?: string;
  /**
   * Who made the change (for kind `undo`: who ran the undo): the calling principal as `kind:id`,
   * from the hub's envelope `source`, never from a payload. Absent in backups stored before it
   * was recorded: only an unrestricted {@link RestoreScope} (a human operator's) restores those.
   */
  principal?: string;
}

/**
 * Which backups a caller may restore. `principal` (`kind:id`) is recorded on the `undo` backup a
 * restore takes; without `any` only the backups that principal took are reachable (an agent's
 * undo), with `any: true` every backup, those without a recorded principal too (a human operator's).
 */
export interface RestoreScope {
  principal: string;
  any?: boolean;
}

/** Options of {@link UndoManager}; only `backups_dir` and `workspace_roots` are required. */
export interface UndoManagerOptions {
  /** Directory of the store (created when missing): `index.jsonl` + `blobs/`. */
  backups_dir: string;
  /** Absolute workspace roots: backups and restores of paths outside them are refused. */
  workspace_roots: readonly string[];
  /** Most backups kept; the oldest are evicted first. Default 200. */
  max_backups?: number;
  /** Most bytes kept over all backups; the oldest are evicted first. Default 256 MiB. */
  max_total_bytes?: number;
  /** Largest single backup; a larger one fails with E_INVALID_ARGS. Default 64 MiB. */
  max_backup_bytes?: number;
  /** Epoch-ms time source (tests). Default `Date.now`. */
  now?: () => number;
  /** Bounds of one hard-link snapshot ({@link UndoManager.snapshotLinks}). Default {@link LINK_DEFAULTS}. */
  links?: Partial<LinkBounds>;
}

/** What {@link UndoManager.restore} did. */
export interface RestoreResult {
  /** The entry that was restored. */
  entry: BackupEntry;
  /** The backup of the state the restore replaced (restore it to undo the undo). */
  undo: BackupEntry;
}

/** Defaults of the store bounds. */
export const UNDO_DEFAULTS = {
  max_backups: 200,
  max_total_bytes: 256 * 1024 * 1024,
  max_backup_bytes: 64 * 1024 * 1024,
} as const;

interface RestoredMarker {
  restored: string;
  by: string;
}

/** `v` when it is a non-empty string (a principal `kind:id`), else E_INVALID_ARGS. */
function checkPrincipal(v: unknown): string {
  if (typeof v !== 'string' || v === '') {
    throw new FingerError('E_INVALID_ARGS', 'principal must be a non-empty "kind:id" string', { principal: v });
  }
  return v;
}

/** True when `scope` reaches `e`: any backup, or one its own principal took. */
function inScope(scope: RestoreScope, e: BackupEntry): boolean {
  return scope.any === true || (e.principal !== undefined && e.principal === scope.principal);
}

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1) {
    throw new FingerError('E_INVALID_ARGS', `${name} must be a positive integer, got ${String(v)}`, { [name]: v });
  }
  return v;
}

/**
 * The undo store of §3.8: before a tool changes a file or directory it calls {@link backup};
 * {@link restore} puts the recorded bytes back. Content lives in `<backups_dir>/blobs/<id>`, the
 * entries in `<backups_dir>/index.jsonl` (JSON lines, fsync'd before `backup()` resolves).
 * Bounded by count and total bytes, oldest evicted first (the newest entry is always kept); a
 * single backup over `max_backup_bytes` throws E_INVALID_ARGS so the caller refuses the change.
 * Operations are serialised; one manager per `backups_dir` per process.
 */
export class UndoManager {
  readonly #blobs: string;
  readonly #index: string;
  readonly #roots: readonly string[];
  readonly #maxCount: number;
  readonly #maxTotal: number;
  readonly #maxOne: number;
  readonly #now: () => number;
  readonly #links: LinkBounds;
  #entries: BackupEntry[] = [];
  #ready: Promise<void> | null = null;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: UndoManagerOptions) {
    if (typeof opts.backups_dir !== 'string' || !path.isAbsolute(opts.backups_dir)) {
      throw new FingerError('E_INVALID_ARGS', 'backups_dir must be an absolute path', {
        backups_dir: opts.backups_dir,
      });
    }
    this.#blobs = path.join(opts.backups_dir, 'blobs');
    this.#index = path.join(opts.backups_dir, 'index.jsonl');
    this.#roots = [...opts.workspace_roots];
    this.#maxCount = positiveInt('max_backups', opts.max_backups, UNDO_DEFAULTS.max_backups);
    this.#maxTotal = positiveInt('max_total_bytes', opts.max_total_bytes, UNDO_DEFAULTS.max_total_bytes);
    this.#maxOne = positiveInt('max_backup_bytes', opts.max_backup_bytes, UNDO_DEFAULTS.max_backup_bytes);
    this.#now = opts.now ?? Date.now;
    this.#links = { ...LINK_DEFAULTS, ...opts.links };
  }

  /** The store's directory (hard-link snapshots must be on its file system). */
  get dir(): string {
    return path.dirname(this.#index);
  }

  /** The bounds of one hard-link snapshot. */
  get linkBounds(): LinkBounds {
    return { ...this.#links };
  }

  /**
   * Before a deleting shell command runs (rm -r, find -delete, git clean in the workspace-write
   * sandbox): hard-links the trees at `paths` (real paths inside the roots, planned by the
   * firewall) into the store as one entry of type `links`. Call {@link settleLinks} once the command
   * has ended. Throws E_DENIED_BY_POLICY (details `{reason: 'not_undoable'}`) when a path is on
   * another file system or over the bounds, E_FORBIDDEN when a path is outside the roots.
   */
  snapshotLinks(
    paths: readonly string[],
    opts: { request_id?: string; extra_roots?: readonly string[]; principal?: string },
  ): Promise<BackupEntry> {
    return this.#serial(async () => {
      if (opts.principal !== undefined) checkPrincipal(opts.principal);
      if (paths.length === 0) throw new FingerError('E_INVALID_ARGS', 'no paths to snapshot');
      const extra = opts.extra_roots ?? [];
      const roots = extra.length ? [...this.#roots, ...extra] : this.#roots;
      const real = await realRoots(roots);
      for (const p of paths) {
        // the parent must resolve to itself inside a root: the last component is never followed
        // (a root itself, which `git clean` may clean, must be its own real path)
        const ok = real.includes(p)
          ? (await fsp.realpath(p).catch(() => '')) === p
          : (await resolveWorkspacePath(path.dirname(p), roots)).path === path.dirname(p);
        if (!ok || !real.some((r) => isInside(p, r)))
          throw new FingerError('E_FORBIDDEN', `${p} is not a real path inside the workspace`, { path: p });
      }
      const own = extra.length ? real.find((r) => paths.some((p) => isInside(p, r))) : undefined;
      const now = this.#now();
      const id = ulid(now);
      const bytes = await captureLinks(paths, path.join(this.#blobs, `${id}.d`), this.#links);
      const entry: BackupEntry = {
        id,
        path: paths[0]!,
        ts: rfc3339(now),
        kind: 'delete',
        existed: true,
        type: 'links',
        size: bytes,
        sha256: null,
        paths: [...paths],
      };
      if (opts.request_id !== undefined) entry.request_id = opts.request_id;
      if (own !== undefined && !(await realRoots(this.#roots)).includes(own)) entry.workspace = own;
      if (opts.principal !== undefined) entry.principal = opts.principal;
      try {
        await appendSynced(this.#index, JSON.stringify(entry) + '\n');
      } catch (e) {
        await removeSnapshot(path.join(this.#blobs, id));
        throw new FingerError('E_STORE_UNAVAILABLE', `cannot write the backup index: ${(e as Error).message}`);
      }
      this.#entries.push(entry);
      return { ...entry };
    });
  }

  /**
   * After the command of a {@link snapshotLinks} entry ended: keeps in the snapshot only what the
   * command removed (what is still in place is dropped, so its files lose the extra link). An
   * entry left with nothing (nothing was deleted) is dropped. Returns the entry, or undefined when
   * it was dropped or evicted meanwhile.
   */
  settleLinks(id: string): Promise<BackupEntry | undefined> {
    return this.#serial(async () => {
      const i = this.#entries.findIndex((e) => e.id === id && e.type === 'links');
      if (i < 0) return undefined;
      const entry = this.#entries[i]!;
      const dir = path.join(this.#blobs, `${id}.d`);
      const kept = await pruneLinks(dir);
      if (kept.entries === 0) {
        this.#entries.splice(i, 1);
        await this.#rewriteIndex();
        await removeSnapshot(path.join(this.#blobs, id));
        return undefined;
      }
      entry.size = kept.bytes;
      entry.paths = await linkedTrees(dir);
      entry.path = entry.paths[0] ?? entry.path;
      await appendSynced(this.#index, JSON.stringify(entry) + '\n');
      await this.#evict();
      return { ...entry };
    });
  }

  /** Runs `fn` after every earlier operation, with the index loaded. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      this.#ready ??= this.#load().catch((e: unknown) => {
        this.#ready = null;
        throw e;
      });
      await this.#ready;
      return fn();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #load(): Promise<void> {
    await fsp.mkdir(this.#blobs, { recursive: true, mode: 0o700 });
    let text = '';
    try {
      text = await fsp.readFile(this.#index, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const byId = new Map<string, BackupEntry>();
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let rec: BackupEntry | RestoredMarker;
      try {
        rec = JSON.parse(line) as BackupEntry | RestoredMarker;
      } catch {
        continue; // a torn last line after a crash: that backup never completed
      }
      if ('restored' in rec) {
        const e = byId.get(rec.restored);
        if (e !== undefined) e.restored_by = rec.by;
      } else if (typeof rec.id === 'string' && typeof rec.path === 'string') {
        byId.set(rec.id, rec);
      }
    }
    this.#entries = [...byId.values()];
    // Blobs without an entry are leftovers of an interrupted backup or eviction.
    const known = new Set(this.#entries.map((e) => e.id));
    for (const name of await fsp.readdir(this.#blobs)) {
      if (!known.has(name.replace(/\.d$/, '')))
        await fsp.rm(path.join(this.#blobs, name), { recursive: true, force: true });
    }
    await this.#evict();
  }

  /**
   * Backs up the current state of `target` (absolute; must resolve inside a workspace root) before
   * a change of the given kind. A missing path is recorded as absent, so a restore deletes what
   * the change created. Resolves once content and index entry are on disk. Throws E_INVALID_ARGS
   * when the content exceeds `max_backup_bytes`, E_FORBIDDEN outside the workspace.
   * `extra_roots`: the calling task's own root, allowed besides the configured ones (never from a
   * payload); a backup taken in one records it as `workspace`, so its restore works later.
   * `principal`: the caller (`kind:id`, from the hub's `source`), recorded so that a scoped
   * {@link restore} reaches only that caller's backups.
   */
  backup(
    target: string,
    opts: {
      kind: Exclude<BackupKind, 'undo'>;
      request_id?: string;
      extra_roots?: readonly string[];
      principal?: string;
    },
  ): Promise<BackupEntry> {
    return this.#serial(async () => {
      if (opts.principal !== undefined) checkPrincipal(opts.principal);
      const extra = opts.extra_roots ?? [];
      const resolved = await resolveWorkspacePath(target, extra.length ? [...this.#roots, ...extra] : this.#roots);
      const own = extra.length && !(await realRoots(this.#roots)).includes(resolved.root) ? resolved.root : undefined;
      const entry = await this.#capture(resolved.path, opts.kind, {
        request_id: opts.request_id,
        workspace: own,
        principal: opts.principal,
      });
      await this.#evict();
      return { ...entry };
    });
  }

  async #capture(
    target: string,
    kind: BackupKind,
    meta: { request_id?: string; undo_of?: string; workspace?: string; principal?: string },
  ): Promise<BackupEntry> {
    const { request_id, undo_of, workspace, principal } = meta;
    const now = this.#now();
    const id = ulid(now);
    const snap = await captureSnapshot(target, path.join(this.#blobs, id), this.#maxOne);
    const entry: BackupEntry = {
      id,
      path: target,
      ts: rfc3339(now),
      kind,
      existed: snap.type !== 'absent',
      type: snap.type,
      size: snap.size,
      sha256: snap.sha256,
    };
    if (snap.mode !== undefined) entry.mode = snap.mode;
    if (request_id !== undefined) entry.request_id = request_id;
    if (undo_of !== undefined) entry.undo_of = undo_of;
    if (workspace !== undefined) entry.workspace = workspace;
    if (principal !== undefined) entry.principal = principal;
    try {
      await appendSynced(this.#index, JSON.stringify(entry) + '\n');
    } catch (e) {
      await removeSnapshot(path.join(this.#blobs, id));
      throw new FingerError('E_STORE_UNAVAILABLE', `cannot write the backup index: ${(e as Error).message}`);
    }
    this.#entries.push(entry);
    return entry;
  }

  /** Evicts the oldest entries past the count or byte bound; the newest is always kept. */
  async #evict(): Promise<void> {
    let total = this.#entries.reduce((n, e) => n + e.size, 0);
    let drop = 0;
    while (
      this.#entries.length - drop > 1 &&
      (this.#entries.length - drop > this.#maxCount || total > this.#maxTotal)
    ) {
      total -= this.#entries[drop]!.size;
      drop++;
    }
    if (drop === 0) return;
    const gone = this.#entries.slice(0, drop);
    this.#entries = this.#entries.slice(drop);
    await this.#rewriteIndex();
    for (const e of gone) await removeSnapshot(path.join(this.#blobs, e.id));
  }

  async #rewriteIndex(): Promise<void> {
    const text = this.#entries.map((e) => JSON.stringify(e) + '\n').join('');
    await atomicWriteFile(this.#index, Buffer.from(text), { mode: 0o600 });
  }

  /** Every kept backup, newest first (copies). */
  list(): Promise<BackupEntry[]> {
    return this.#serial(async () => this.#entries.map((e) => ({ ...e })).reverse());
  }

  /** The backup with this id, or undefined. */
  get(id: string): Promise<BackupEntry | undefined> {
    return this.#serial(async () => {
      const e = this.#entries.find((x) => x.id === id);
      return e === undefined ? undefined : { ...e };
    });
  }

  /**
   * The entry `restore(undefined, scope)` would restore: the newest backup within `scope` that is
   * not itself an undo record and was not restored yet. Undefined when there is nothing to undo.
   */
  latest(scope: RestoreScope): Promise<BackupEntry | undefined> {
    return this.#serial(async () => {
      checkPrincipal(scope.principal);
      const e = this.#latest(scope);
      return e === undefined ? undefined : { ...e };
    });
  }

  #latest(scope: RestoreScope): BackupEntry | undefined {
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]!;
      if (e.kind !== 'undo' && e.restored_by === undefined && inScope(scope, e)) return e;
    }
    return undefined;
  }

  /**
   * Restores backup `id` (default: {@link latest} of `scope`) byte for byte — file content and
   * mode, a directory tree, or the absence of the path. The current state is backed up first
   * (kind `undo`, `undo_of: id`, `principal` of the scope), so restoring that entry undoes the
   * undo. Throws E_NOT_FOUND for an unknown id or when there is nothing (of the scope's) to undo,
   * E_FORBIDDEN when backup `id` lies outside `scope` (another caller's, or one recording no
   * caller, for a scope without `any`) or its path now resolves outside the workspace (e.g. a
   * parent was replaced by a symlink), E_STORE_UNAVAILABLE when the stored content is missing or
   * damaged (the path is then left as it was).
   */
  restore(id: string | undefined, scope: RestoreScope): Promise<RestoreResult> {
    return this.#serial(async () => {
      checkPrincipal(scope.principal);
      const entry = id === undefined ? this.#latest(scope) : this.#entries.find((e) => e.id === id);
      if (entry === undefined) {
        throw id === undefined
          ? new FingerError(
              'E_NOT_FOUND',
              scope.any === true
                ? 'nothing to undo: every kept backup was already restored'
                : `nothing to undo: no kept backup of ${scope.principal} is left to restore`,
              scope.any === true ? undefined : { principal: scope.principal },
            )
          : new FingerError('E_NOT_FOUND', `no backup with id "${id}" (it may have been evicted)`, { id });
      }
      if (!inScope(scope, entry)) {
        throw new FingerError(
          'E_FORBIDDEN',
          entry.principal === undefined
            ? `backup "${entry.id}" records no caller (stored before callers were recorded): only an operator may restore it`
            : `backup "${entry.id}" was taken for another caller: ${scope.principal} may restore only its own backups`,
          { id: entry.id, principal: scope.principal },
        );
      }
      const roots = entry.workspace !== undefined ? [...this.#roots, entry.workspace] : this.#roots;
      if (entry.type === 'links') return this.#restoreLinks(entry, roots, scope);
      const resolved = await resolveWorkspacePath(entry.path, roots);
      const undo = await this.#capture(resolved.path, 'undo', {
        undo_of: entry.id,
        workspace: entry.workspace,
        principal: scope.principal,
      });
      await applySnapshot(entry, path.join(this.#blobs, entry.id), resolved.path);
      const marker: RestoredMarker = { restored: entry.id, by: undo.id };
      await appendSynced(this.#index, JSON.stringify(marker) + '\n');
      entry.restored_by = undo.id;
      const result = { entry: { ...entry }, undo: { ...undo } };
      await this.#evict();
      return result;
    });
  }

  /**
   * Restores a `links` entry (see {@link snapshotLinks}): what the command deleted comes back, the
   * same inodes; nothing is overwritten (E_CONFLICT when a path exists again). The `undo` record is
   * the absence of the one tree when it is absent now (restoring it deletes the tree again), else a
   * `links` record that cannot itself be restored (E_INVALID_ARGS).
   */
  async #restoreLinks(entry: BackupEntry, roots: readonly string[], scope: RestoreScope): Promise<RestoreResult> {
    if (entry.kind === 'undo')
      throw new FingerError(
        'E_INVALID_ARGS',
        `backup "${entry.id}" records the restore of deleted files, which is not undone by a restore: delete them again`,
        { id: entry.id },
      );
    if (entry.restored_by !== undefined)
      throw new FingerError('E_CONFLICT', `backup "${entry.id}" was already restored (by ${entry.restored_by})`, {
        id: entry.id,
        restored_by: entry.restored_by,
      });
    const real = await realRoots(roots);
    const check = async (top: string): Promise<void> => {
      const ok = real.includes(top)
        ? (await fsp.realpath(top).catch(() => '')) === top
        : (await resolveWorkspacePath(path.dirname(top), roots)).path === path.dirname(top);
      if (!ok)
        throw new FingerError('E_FORBIDDEN', `${top} no longer resolves to itself inside the workspace: not restored`, {
          path: top,
        });
    };
    const dir = path.join(this.#blobs, `${entry.id}.d`);
    const trees = entry.paths ?? [entry.path];
    const single = trees.length === 1 && (await fsp.lstat(trees[0]!).catch(() => null)) === null;
    let undo: BackupEntry;
    if (single) {
      await check(trees[0]!);
      undo = await this.#capture(trees[0]!, 'undo', {
        undo_of: entry.id,
        workspace: entry.workspace,
        principal: scope.principal,
      });
    } else {
      const now = this.#now();
      undo = {
        id: ulid(now),
        path: entry.path,
        ts: rfc3339(now),
        kind: 'undo',
        existed: true,
        type: 'links',
        size: 0,
        sha256: null,
        paths: trees,
        undo_of: entry.id,
        principal: scope.principal,
      };
      if (entry.workspace !== undefined) undo.workspace = entry.workspace;
    }
    try {
      await applyLinks(dir, check);
    } catch (e) {
      if (single) await this.#drop(undo.id);
      throw e;
    }
    if (!single) {
      await appendSynced(this.#index, JSON.stringify(undo) + '\n');
      this.#entries.push(undo);
    }
    const marker: RestoredMarker = { restored: entry.id, by: undo.id };
    await appendSynced(this.#index, JSON.stringify(marker) + '\n');
    entry.restored_by = undo.id;
    // the restored files are the linked inodes: the store lets go of them (no second link stays)
    await removeSnapshot(path.join(this.#blobs, entry.id));
    entry.size = 0;
    const result = { entry: { ...entry }, undo: { ...undo } };
    await this.#evict();
    return result;
  }

  /** Forgets entry `id` and its content (a record taken for a restore that then failed). */
  async #drop(id: string): Promise<void> {
    this.#entries = this.#entries.filter((e) => e.id !== id);
    await this.#rewriteIndex();
    await removeSnapshot(path.join(this.#blobs, id));
  }
}

import path from 'node:path';

import { FingerError } from '@finger/protocol';

const MiB = 1024 * 1024;

/** Defaults of every optional setting of the fs module. */
export const FS_DEFAULTS = {
  max_read_bytes: 10 * MiB,
  max_write_bytes: 10 * MiB,
  max_backup_bytes: 64 * MiB,
  max_backups: 200,
  max_backup_total_bytes: 256 * MiB,
} as const;

/** The fs module's settings after defaults are applied. */
export interface FsSettings {
  /** Absolute workspace roots; relative paths resolve against the first. */
  workspace_roots: string[];
  /** Absolute directory of the undo store. */
  backups_dir: string;
  max_read_bytes: number;
  max_write_bytes: number;
  max_backup_bytes: number;
  max_backups: number;
  max_backup_total_bytes: number;
}

function bad(message: string, details: Record<string, unknown>): FingerError {
  return new FingerError('E_INVALID_ARGS', `fs module settings: ${message}`, details);
}

function absPath(key: string, v: unknown): string {
  if (typeof v !== 'string' || !path.isAbsolute(v)) throw bad(`${key} must be an absolute path`, { [key]: v });
  return path.resolve(v);
}

function limit(raw: Record<string, unknown>, key: keyof typeof FS_DEFAULTS): number {
  const v = raw[key];
  if (v === undefined) return FS_DEFAULTS[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw bad(`${key} must be a positive integer`, { [key]: v });
  }
  return v;
}

/**
 * Reads the settings the daemon hands the module (`{home, workspace_roots, backups_dir, …}`).
 * Without `workspace_roots` the root is `<home>/workspace`; without `backups_dir` it is
 * `<home>/backups`. Throws E_INVALID_ARGS naming the key when a value is unusable.
 */
export function parseFsSettings(raw: Record<string, unknown>): FsSettings {
  const home = raw.home === undefined ? undefined : absPath('home', raw.home);
  let roots: string[];
  if (raw.workspace_roots !== undefined) {
    if (!Array.isArray(raw.workspace_roots) || raw.workspace_roots.length === 0) {
      throw bad('workspace_roots must be a non-empty array of absolute paths', {
        workspace_roots: raw.workspace_roots,
      });
    }
    roots = raw.workspace_roots.map((r, i) => absPath(`workspace_roots[${i}]`, r));
  } else if (home !== undefined) {
    roots = [path.join(home, 'workspace')];
  } else {
    throw bad('workspace_roots (or home) is required', {});
  }
  let backups: string;
  if (raw.backups_dir !== undefined) backups = absPath('backups_dir', raw.backups_dir);
  else if (home !== undefined) backups = path.join(home, 'backups');
  else throw bad('backups_dir (or home) is required', {});
  return {
    workspace_roots: roots,
    backups_dir: backups,
    max_read_bytes: limit(raw, 'max_read_bytes'),
    max_write_bytes: limit(raw, 'max_write_bytes'),
    max_backup_bytes: limit(raw, 'max_backup_bytes'),
    max_backups: limit(raw, 'max_backups'),
    max_backup_total_bytes: limit(raw, 'max_backup_total_bytes'),
  };
}

import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { FingerError, ulid } from '@finger/protocol';

import { atomicWriteFile, fsyncDir } from './atomic-write.js';

/**
 * What a path was when it was backed up; `links`: the trees a deleting shell command removed, kept
 * as hard links (link-snapshot.ts).
 */
export type SnapshotType = 'file' | 'dir' | 'absent' | 'links';

/** The recorded state of one path (stored in the index entry). */
export interface SnapshotInfo {
  type: SnapshotType;
  /** Bytes of content (a directory: the sum of its files). 0 when absent. */
  size: number;
  /** sha256 (hex) of the file, or of the directory manifest; null when absent. */
  sha256: string | null;
  /** Permission bits (`mode & 0o7777`); absent when the path did not exist. */
  mode?: number;
}

/** One member of a directory snapshot, in pre-order (parents before children). */
interface TreeItem {
  rel: string;
  type: 'dir' | 'file' | 'symlink';
  mode: number;
  size?: number;
  sha256?: string;
  target?: string;
}

const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

function tooLarge(target: string, size: number, max: number): FingerError {
  return new FingerError(
    'E_INVALID_ARGS',
    `cannot back up ${target}: ${size} bytes exceeds max_backup_bytes (${max}); the change is refused because it could not be undone`,
    { path: target, size, max_backup_bytes: max },
  );
}

async function lstatOrNull(p: string): Promise<import('node:fs').Stats | null> {
  try {
    return await fsp.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

async function walk(root: string): Promise<TreeItem[]> {
  const out: TreeItem[] = [];
  const visit = async (rel: string): Promise<void> => {
    const names = (await fsp.readdir(path.join(root, rel))).sort();
    for (const name of names) {
      const r = rel === '' ? name : path.join(rel, name);
      const abs = path.join(root, r);
      const st = await fsp.lstat(abs);
      const mode = st.mode & 0o7777;
      if (st.isDirectory()) {
        out.push({ rel: r, type: 'dir', mode });
        await visit(r);
      } else if (st.isFile()) {
        out.push({ rel: r, type: 'file', mode, size: st.size });
      } else if (st.isSymbolicLink()) {
        out.push({ rel: r, type: 'symlink', mode, target: await fsp.readlink(abs) });
      } else {
        throw new FingerError('E_INVALID_ARGS', `cannot back up ${abs}: not a file, directory or symlink`, {
          path: abs,
        });
      }
    }
  };
  await visit('');
  return out;
}

/**
 * Records the current state of `target` under `blobBase`: a file's bytes at `blobBase`, a
 * directory's members under `blobBase.d/` (manifest.json + numbered files), nothing when the
 * path does not exist. Throws E_INVALID_ARGS when the content exceeds `maxBytes` or the path is
 * neither a file nor a directory (symlinks at the top level are refused: callers pass real paths).
 */
export async function captureSnapshot(target: string, blobBase: string, maxBytes: number): Promise<SnapshotInfo> {
  const st = await lstatOrNull(target);
  if (st === null) return { type: 'absent', size: 0, sha256: null };
  const mode = st.mode & 0o7777;
  if (st.isFile()) {
    if (st.size > maxBytes) throw tooLarge(target, st.size, maxBytes);
    const data = await fsp.readFile(target);
    if (data.length > maxBytes) throw tooLarge(target, data.length, maxBytes);
    await writeBlob(blobBase, data);
    return { type: 'file', size: data.length, sha256: sha256(data), mode };
  }
  if (!st.isDirectory()) {
    throw new FingerError('E_INVALID_ARGS', `cannot back up ${target}: not a regular file or directory`, {
      path: target,
    });
  }
  const items = await walk(target);
  const total = items.reduce((n, i) => n + (i.size ?? 0), 0);
  if (total > maxBytes) throw tooLarge(target, total, maxBytes);
  const dir = `${blobBase}.d`;
  await fsp.mkdir(path.join(dir, 'files'), { recursive: true });
  let size = 0;
  try {
    for (const [n, item] of items.entries()) {
      if (item.type !== 'file') continue;
      const data = await fsp.readFile(path.join(target, item.rel));
      size += data.length;
      if (size > maxBytes) throw tooLarge(target, size, maxBytes);
      item.size = data.length;
      item.sha256 = sha256(data);
      await writeBlob(path.join(dir, 'files', String(n)), data);
    }
    const manifest = JSON.stringify({ mode, items });
    await writeBlob(path.join(dir, 'manifest.json'), Buffer.from(manifest));
    return { type: 'dir', size, sha256: sha256(manifest), mode };
  } catch (e) {
    await fsp.rm(dir, { recursive: true, force: true });
    throw e;
  }
}

async function writeBlob(file: string, data: Uint8Array): Promise<void> {
  const fh = await fsp.open(file, 'wx', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function corrupt(what: string): FingerError {
  return new FingerError('E_STORE_UNAVAILABLE', `backup store is damaged: ${what}`);
}

async function readBlob(file: string, expected: string | undefined): Promise<Buffer> {
  let data: Buffer;
  try {
    data = await fsp.readFile(file);
  } catch (e) {
    throw corrupt(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (expected !== undefined && sha256(data) !== expected) throw corrupt(`${file} does not match its sha256`);
  return data;
}

/**
 * Puts `target` back into the recorded state: removes what is there now, then writes the file
 * (atomically, with its mode) or rebuilds the directory (in a sibling temp directory, renamed
 * into place). Missing parent directories are created. Throws E_STORE_UNAVAILABLE when a blob is
 * missing or does not match its recorded sha256 — then `target` is left as it was.
 */
export async function applySnapshot(info: SnapshotInfo, blobBase: string, target: string): Promise<void> {
  const parent = path.dirname(target);
  if (info.type === 'file') {
    const data = await readBlob(blobBase, info.sha256 ?? undefined);
    const cur = await lstatOrNull(target);
    if (cur?.isDirectory()) await fsp.rm(target, { recursive: true, force: true });
    await fsp.mkdir(parent, { recursive: true });
    await atomicWriteFile(target, data, info.mode === undefined ? {} : { mode: info.mode });
    return;
  }
  if (info.type === 'absent') {
    await fsp.rm(target, { recursive: true, force: true });
    await fsyncDir(parent).catch(() => undefined);
    return;
  }
  const dir = `${blobBase}.d`;
  const manifestText = await readBlob(path.join(dir, 'manifest.json'), info.sha256 ?? undefined);
  const manifest = JSON.parse(manifestText.toString('utf8')) as { mode: number; items: TreeItem[] };
  await fsp.mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `.finger-${ulid()}.tmp.d`);
  try {
    await fsp.mkdir(tmp);
    for (const [n, item] of manifest.items.entries()) {
      const dest = path.join(tmp, item.rel);
      if (item.type === 'dir') await fsp.mkdir(dest, { mode: 0o700 });
      else if (item.type === 'symlink') await fsp.symlink(item.target ?? '', dest);
      else await fsp.writeFile(dest, await readBlob(path.join(dir, 'files', String(n)), item.sha256), { flag: 'wx' });
    }
    // Modes last and deepest first, so a read-only directory does not block filling it.
    for (const item of [...manifest.items].reverse()) {
      if (item.type !== 'symlink') await fsp.chmod(path.join(tmp, item.rel), item.mode);
    }
    await fsp.chmod(tmp, manifest.mode);
    await fsp.rm(target, { recursive: true, force: true });
    await fsp.rename(tmp, target);
    await fsyncDir(parent);
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

/** Deletes the stored content of one snapshot (file blob and/or directory blob). */
export async function removeSnapshot(blobBase: string): Promise<void> {
  await fsp.rm(blobBase, { force: true });
  await fsp.rm(`${blobBase}.d`, { recursive: true, force: true });
}

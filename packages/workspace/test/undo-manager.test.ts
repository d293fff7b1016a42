import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  type BackupEntry,
  resolveWorkspacePath,
  type RestoreScope,
  UNDO_DEFAULTS,
  UndoManager,
} from '@finger/workspace';

let tmp: string;
let ws: string;
let store: string;

beforeEach(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'finger-undo-')));
  ws = path.join(tmp, 'ws');
  store = path.join(tmp, 'backups');
  await fsp.mkdir(ws);
});

afterEach(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

/** A human operator's scope: every backup. */
const OP: RestoreScope = { principal: 'human:op', any: true };

function manager(extra: Partial<ConstructorParameters<typeof UndoManager>[0]> = {}): UndoManager {
  return new UndoManager({ backups_dir: store, workspace_roots: [ws], ...extra });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'resolved';
}

const exists = (p: string) =>
  fsp.lstat(p).then(
    () => true,
    () => false,
  );

describe('UndoManager', () => {
  it('has the documented defaults', () => {
    expect(UNDO_DEFAULTS).toEqual({
      max_backups: 200,
      max_total_bytes: 256 * 1024 * 1024,
      max_backup_bytes: 64 * 1024 * 1024,
    });
  });

  it('backs up a file and restores it byte for byte, keeping its mode', async () => {
    const f = path.join(ws, 'bin.dat');
    const before = randomBytes(4096);
    await fsp.writeFile(f, before, { mode: 0o640 });
    await fsp.chmod(f, 0o640);
    const um = manager();
    const entry = await um.backup(f, { kind: 'write', request_id: 'r1' });
    expect(entry).toMatchObject({
      path: f,
      kind: 'write',
      existed: true,
      type: 'file',
      size: 4096,
      mode: 0o640,
      request_id: 'r1',
    });
    expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    await fsp.writeFile(f, 'changed');
    await fsp.chmod(f, 0o600);
    const { entry: restored, undo } = await um.restore(undefined, OP);
    expect(restored.id).toBe(entry.id);
    expect(Buffer.compare(await fsp.readFile(f), before)).toBe(0);
    expect((await fsp.stat(f)).mode & 0o777).toBe(0o640);
    expect(undo).toMatchObject({ kind: 'undo', undo_of: entry.id, existed: true, size: 7 });
    expect(restored.restored_by).toBe(undo.id);
  });

  it('restoring a backup of a missing path deletes what was created', async () => {
    const f = path.join(ws, 'new.txt');
    const um = manager();
    const entry = await um.backup(f, { kind: 'write' });
    expect(entry).toMatchObject({ existed: false, type: 'absent', size: 0, sha256: null });
    await fsp.writeFile(f, 'fresh');
    await um.restore(entry.id, OP);
    expect(await exists(f)).toBe(false);
  });

  it('an undo can be undone, and plain restore() walks back through changes not yet undone', async () => {
    const f = path.join(ws, 'a.txt');
    await fsp.writeFile(f, 'v1');
    const um = manager();
    const b1 = await um.backup(f, { kind: 'write' });
    await fsp.writeFile(f, 'v2');
    const b2 = await um.backup(f, { kind: 'patch' });
    await fsp.writeFile(f, 'v3');

    expect((await um.latest(OP))?.id).toBe(b2.id);
    const r1 = await um.restore(undefined, OP);
    expect(r1.entry.id).toBe(b2.id);
    expect(await fsp.readFile(f, 'utf8')).toBe('v2');
    const r2 = await um.restore(undefined, OP);
    expect(r2.entry.id).toBe(b1.id);
    expect(await fsp.readFile(f, 'utf8')).toBe('v1');
    expect(await codeOf(um.restore(undefined, OP))).toBe('E_NOT_FOUND');
    // Undo the last undo: back to v2.
    await um.restore(r2.undo.id, OP);
    expect(await fsp.readFile(f, 'utf8')).toBe('v2');
  });

  it('rejects unknown ids with E_NOT_FOUND', async () => {
    expect(await codeOf(manager().restore('01J0000000000000000000000Z', OP))).toBe('E_NOT_FOUND');
  });

  it('refuses a backup over max_backup_bytes with E_INVALID_ARGS and records nothing', async () => {
    const f = path.join(ws, 'big.bin');
    await fsp.writeFile(f, Buffer.alloc(2048));
    const um = manager({ max_backup_bytes: 1024 });
    let err: { code?: string; details?: unknown } = {};
    try {
      await um.backup(f, { kind: 'write' });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({ path: f, size: 2048, max_backup_bytes: 1024 });
    expect(await um.list()).toEqual([]);
    expect(await fsp.readdir(path.join(store, 'blobs'))).toEqual([]);
  });

  it('keeps at most max_backups, evicting the oldest and their content', async () => {
    const f = path.join(ws, 'n.txt');
    const um = manager({ max_backups: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      await fsp.writeFile(f, `v${i}`);
      ids.push((await um.backup(f, { kind: 'write' })).id);
    }
    const list = await um.list();
    expect(list.map((e) => e.id)).toEqual([ids[4], ids[3], ids[2]]);
    expect((await fsp.readdir(path.join(store, 'blobs'))).sort()).toEqual([ids[2], ids[3], ids[4]].sort());
    expect(await um.get(ids[0]!)).toBeUndefined();
  });

  it('keeps the total bytes under max_total_bytes but always the newest backup', async () => {
    const um = manager({ max_total_bytes: 250 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const f = path.join(ws, `f${i}`);
      await fsp.writeFile(f, Buffer.alloc(100, i));
      ids.push((await um.backup(f, { kind: 'write' })).id);
    }
    expect((await um.list()).map((e) => e.id)).toEqual([ids[3], ids[2]]);
    const big = path.join(ws, 'big');
    await fsp.writeFile(big, Buffer.alloc(300));
    const b = await um.backup(big, { kind: 'delete' });
    expect((await um.list()).map((e) => e.id)).toEqual([b.id]);
  });

  it('persists the index: a new manager sees the entries, skips a torn line and drops orphan blobs', async () => {
    const f = path.join(ws, 'p.txt');
    await fsp.writeFile(f, 'keep me');
    const e = await manager().backup(f, { kind: 'write' });
    await fsp.appendFile(path.join(store, 'index.jsonl'), '{"id":"torn');
    await fsp.writeFile(path.join(store, 'blobs', 'ORPHAN'), 'x');
    await fsp.writeFile(f, 'other');
    const um2 = manager();
    expect((await um2.list()).map((x: BackupEntry) => x.id)).toEqual([e.id]);
    expect(await fsp.readdir(path.join(store, 'blobs'))).toEqual([e.id]);
    await um2.restore(undefined, OP);
    expect(await fsp.readFile(f, 'utf8')).toBe('keep me');
    // The restore marker survives a reload too.
    expect((await manager().get(e.id))?.restored_by).toBeDefined();
  });

  it('backs up and restores a directory tree with files, modes and symlinks', async () => {
    const d = path.join(ws, 'tree');
    await fsp.mkdir(path.join(d, 'sub', 'deep'), { recursive: true });
    const bin = randomBytes(1000);
    await fsp.writeFile(path.join(d, 'a.txt'), 'alpha');
    await fsp.writeFile(path.join(d, 'sub', 'deep', 'b.bin'), bin);
    await fsp.chmod(path.join(d, 'sub', 'deep', 'b.bin'), 0o600);
    await fsp.symlink('a.txt', path.join(d, 'link'));
    const um = manager();
    const entry = await um.backup(d, { kind: 'delete' });
    expect(entry).toMatchObject({ type: 'dir', existed: true, size: 1005 });
    await fsp.rm(d, { recursive: true });
    await um.restore(entry.id, OP);
    expect(await fsp.readFile(path.join(d, 'a.txt'), 'utf8')).toBe('alpha');
    expect(Buffer.compare(await fsp.readFile(path.join(d, 'sub', 'deep', 'b.bin')), bin)).toBe(0);
    expect((await fsp.stat(path.join(d, 'sub', 'deep', 'b.bin'))).mode & 0o777).toBe(0o600);
    expect(await fsp.readlink(path.join(d, 'link'))).toBe('a.txt');
  });

  it('refuses to back up or restore a path outside the workspace (E_FORBIDDEN)', async () => {
    const outside = path.join(tmp, 'outside.txt');
    await fsp.writeFile(outside, 'no');
    expect(await codeOf(manager().backup(outside, { kind: 'write' }))).toBe('E_FORBIDDEN');

    // A backup taken inside, then its parent replaced by a symlink that leads out.
    const dir = path.join(ws, 'd');
    await fsp.mkdir(dir);
    await fsp.writeFile(path.join(dir, 'f'), 'inside');
    const um = manager();
    const e = await um.backup(path.join(dir, 'f'), { kind: 'write' });
    const elsewhere = path.join(tmp, 'elsewhere');
    await fsp.mkdir(elsewhere);
    await fsp.rm(dir, { recursive: true });
    await fsp.symlink(elsewhere, dir);
    expect(await codeOf(um.restore(e.id, OP))).toBe('E_FORBIDDEN');
    expect(await fsp.readdir(elsewhere)).toEqual([]);
  });

  it('a damaged blob fails with E_STORE_UNAVAILABLE and leaves the file alone', async () => {
    const f = path.join(ws, 'x.txt');
    await fsp.writeFile(f, 'original');
    const um = manager();
    const e = await um.backup(f, { kind: 'write' });
    await fsp.writeFile(path.join(store, 'blobs', e.id), 'tampered');
    await fsp.writeFile(f, 'current');
    expect(await codeOf(um.restore(e.id, OP))).toBe('E_STORE_UNAVAILABLE');
    expect(await fsp.readFile(f, 'utf8')).toBe('current');
  });

  it('rejects bad options with E_INVALID_ARGS', () => {
    expect(() => new UndoManager({ backups_dir: 'relative', workspace_roots: [ws] })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS' }),
    );
    expect(() => manager({ max_backups: 0 })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGS' }));
  });
});

describe('resolveWorkspacePath', () => {
  it('resolves relative paths against the first root and allows paths that do not exist yet', async () => {
    await fsp.mkdir(path.join(ws, 'a'));
    expect(await resolveWorkspacePath('a/b/c.txt', [ws])).toEqual({
      input: 'a/b/c.txt',
      path: path.join(ws, 'a', 'b', 'c.txt'),
      root: ws,
      exists: false,
    });
    expect(await resolveWorkspacePath(ws, [ws])).toMatchObject({ path: ws, exists: true });
  });

  it('follows a symlink that stays inside', async () => {
    await fsp.writeFile(path.join(ws, 'real.txt'), 'x');
    await fsp.symlink('real.txt', path.join(ws, 'alias'));
    expect(await resolveWorkspacePath('alias', [ws])).toMatchObject({ path: path.join(ws, 'real.txt'), exists: true });
  });

  it('refuses .., absolute paths outside, symlinks out and dangling symlinks with E_FORBIDDEN', async () => {
    await fsp.symlink(tmp, path.join(ws, 'up'));
    await fsp.symlink(path.join(ws, 'missing-target'), path.join(ws, 'dangling'));
    let err: { code?: string; details?: unknown } = {};
    try {
      await resolveWorkspacePath('../outside', [ws]);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toMatchObject({ path: '../outside', resolved: path.join(tmp, 'outside'), roots: [ws] });
    expect(await codeOf(resolveWorkspacePath('/etc/passwd', [ws]))).toBe('E_FORBIDDEN');
    expect(await codeOf(resolveWorkspacePath('up/x', [ws]))).toBe('E_FORBIDDEN');
    expect(await codeOf(resolveWorkspacePath('dangling', [ws]))).toBe('E_FORBIDDEN');
    expect(await codeOf(resolveWorkspacePath('dangling/child', [ws]))).toBe('E_FORBIDDEN');
    expect(await codeOf(resolveWorkspacePath(path.join(ws, '..', 'ws2'), [ws]))).toBe('E_FORBIDDEN');
    expect(await codeOf(resolveWorkspacePath('', [ws]))).toBe('E_INVALID_ARGS');
    expect(await codeOf(resolveWorkspacePath('a\0b', [ws]))).toBe('E_INVALID_ARGS');
  });
});

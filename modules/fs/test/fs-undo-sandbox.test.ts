import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type FsHarness, startFs } from './helpers.js';

let h: FsHarness;
beforeEach(async () => {
  h = await startFs();
});
afterEach(async () => {
  await h.close();
});

const exists = (p: string) =>
  fsp.lstat(p).then(
    () => true,
    () => false,
  );

describe('fs undo', () => {
  it('write then undo restores the previous content byte for byte', async () => {
    const f = path.join(h.ws, 'data.bin');
    const before = randomBytes(10_000);
    await fsp.writeFile(f, before);
    const w = await h.call('write', { path: 'data.bin', content: 'replaced' });
    expect(await fsp.readFile(f, 'utf8')).toBe('replaced');
    const u = await h.call('undo', {});
    expect(u).toEqual({
      restored: { id: w.backup_id, path: f, bytes: 10_000, existed: true, type: 'file' },
      backup_id: expect.any(String),
    });
    expect(Buffer.compare(await fsp.readFile(f), before)).toBe(0);
    // The undo itself can be undone.
    await h.call('undo', { id: u.backup_id });
    expect(await fsp.readFile(f, 'utf8')).toBe('replaced');
  });

  it('undo of a file that did not exist deletes it', async () => {
    const w = await h.call('write', { path: 'new.txt', content: 'fresh' });
    expect(w.created).toBe(true);
    const u = await h.call('undo', { id: w.backup_id });
    expect(u.restored).toMatchObject({ existed: false, type: 'absent', bytes: 0 });
    expect(await exists(path.join(h.ws, 'new.txt'))).toBe(false);
  });

  it('undo of a delete recreates the file, and of a recursive delete the tree', async () => {
    await fsp.mkdir(path.join(h.ws, 'keep', 'sub'), { recursive: true });
    await fsp.writeFile(path.join(h.ws, 'keep', 'sub', 'x.txt'), 'xx');
    await fsp.writeFile(path.join(h.ws, 'gone.txt'), 'bye');
    await h.call('delete', { path: 'gone.txt' });
    await h.call('delete', { path: 'keep', recursive: true });
    await h.call('undo', {});
    expect(await fsp.readFile(path.join(h.ws, 'keep', 'sub', 'x.txt'), 'utf8')).toBe('xx');
    await h.call('undo', {});
    expect(await fsp.readFile(path.join(h.ws, 'gone.txt'), 'utf8')).toBe('bye');
    expect(await h.codeOf('undo', {})).toBe('E_NOT_FOUND');
  });

  it('undo of a patch restores the text', async () => {
    await fsp.writeFile(path.join(h.ws, 'p.txt'), 'a\nb\n');
    await h.call('patch', { path: 'p.txt', edits: [{ search: 'b', replace: 'B' }] });
    await h.call('undo', {});
    expect(await fsp.readFile(path.join(h.ws, 'p.txt'), 'utf8')).toBe('a\nb\n');
  });

  it('lists backups newest first, filtered by path, and rejects unknown ids', async () => {
    const w1 = await h.call('write', { path: 'a.txt', content: '1' });
    const w2 = await h.call('write', { path: 'b.txt', content: '2' });
    const w3 = await h.call('write', { path: 'a.txt', content: '3' });
    const all = await h.call('backups', {});
    expect(all.total).toBe(3);
    expect(all.backups.map((b: { id: string }) => b.id)).toEqual([w3.backup_id, w2.backup_id, w1.backup_id]);
    expect(all.backups[0]).toMatchObject({ path: path.join(h.ws, 'a.txt'), kind: 'write', existed: true, size: 1 });
    expect(all.backups[0].request_id).toEqual(expect.any(String));
    const a = await h.call('backups', { path: 'a.txt', limit: 1 });
    expect(a).toEqual({ backups: [expect.objectContaining({ id: w3.backup_id })], total: 2 });
    expect(await h.codeOf('undo', { id: 'NOPE' })).toBe('E_NOT_FOUND');
  });

  it('keeps at most max_backups backups', async () => {
    await h.close();
    h = await startFs({ max_backups: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await h.call('write', { path: 'c.txt', content: `v${i}` })).backup_id);
    const list = await h.call('backups', {});
    expect(list.total).toBe(3);
    expect(list.backups.map((b: { id: string }) => b.id)).toEqual(ids.slice(3).reverse());
    expect(await h.codeOf('undo', { id: ids[0]! })).toBe('E_NOT_FOUND');
  });

  it('concurrent writes to one file each back up the content they replaced', async () => {
    await Promise.all(Array.from({ length: 8 }, (_, i) => h.call('write', { path: 'race.txt', content: `w${i}` })));
    const { backups } = await h.call('backups', {});
    const seen = backups.map((b: { existed: boolean; size: number }) => b.existed).filter((x: boolean) => !x);
    expect(seen).toHaveLength(1); // exactly one write found the file missing
  });
});

describe('fs workspace sandbox', () => {
  it('refuses ../ escapes, absolute paths outside and symlinks out with E_FORBIDDEN', async () => {
    await fsp.writeFile(path.join(h.tmp, 'outside.txt'), 'secret');
    await fsp.symlink(path.join(h.tmp, 'outside.txt'), path.join(h.ws, 'link-out'));
    await fsp.symlink(h.tmp, path.join(h.ws, 'dir-out'));
    await fsp.symlink(path.join(h.ws, 'nowhere'), path.join(h.ws, 'dangling'));

    const err = await h.errorOf('read', { path: '../outside.txt' });
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toMatchObject({
      path: '../outside.txt',
      resolved: path.join(h.tmp, 'outside.txt'),
      roots: [h.ws],
    });

    for (const tool of ['read', 'stat', 'write', 'delete', 'patch']) {
      const args = { content: 'x', edits: [{ search: 's', replace: 'S' }] };
      const pick = (p: string) =>
        tool === 'write'
          ? { path: p, content: args.content }
          : tool === 'patch'
            ? { path: p, edits: args.edits }
            : { path: p };
      expect(await h.codeOf(tool, pick('../outside.txt'))).toBe('E_FORBIDDEN');
      expect(await h.codeOf(tool, pick(path.join(h.tmp, 'outside.txt')))).toBe('E_FORBIDDEN');
      expect(await h.codeOf(tool, pick('link-out'))).toBe('E_FORBIDDEN');
      expect(await h.codeOf(tool, pick('dir-out/outside.txt'))).toBe('E_FORBIDDEN');
      expect(await h.codeOf(tool, pick('dangling'))).toBe('E_FORBIDDEN');
    }
    expect(await h.codeOf('list', { path: 'dir-out' })).toBe('E_FORBIDDEN');
    expect(await h.codeOf('write', { path: 'dir-out/new.txt', content: 'x' })).toBe('E_FORBIDDEN');
    expect(await fsp.readFile(path.join(h.tmp, 'outside.txt'), 'utf8')).toBe('secret');
    expect(await exists(path.join(h.tmp, 'new.txt'))).toBe(false);
  });

  it('follows a symlink that stays inside the workspace', async () => {
    await fsp.writeFile(path.join(h.ws, 'real.txt'), 'inside');
    await fsp.symlink('real.txt', path.join(h.ws, 'alias.txt'));
    expect(await h.call('read', { path: 'alias.txt' })).toMatchObject({
      path: path.join(h.ws, 'real.txt'),
      content: 'inside',
    });
  });
});

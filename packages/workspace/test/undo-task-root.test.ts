import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { UndoManager } from '@finger/workspace';

// Backups in a supervised task's own root (`extra_roots`): allowed for that backup only, recorded
// on the entry as `workspace`, so a later restore — by anyone, after a restart — reaches it again.

let tmp: string;
let ws: string;
let proj: string;
let store: string;

beforeEach(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'finger-undo-task-')));
  ws = path.join(tmp, 'ws');
  proj = path.join(tmp, 'proj');
  store = path.join(tmp, 'backups');
  for (const d of [ws, proj]) await fsp.mkdir(d);
});

afterEach(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

const manager = () => new UndoManager({ backups_dir: store, workspace_roots: [ws] });

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: { code: string }) => e.code,
  );
}

describe('UndoManager with a task root', () => {
  it('backs up in the extra root, records it, and restores after a reload', async () => {
    const file = path.join(proj, 'a.txt');
    await fsp.writeFile(file, 'before');
    const e = await manager().backup(file, { kind: 'write', extra_roots: [proj] });
    expect(e).toMatchObject({ path: file, existed: true, workspace: proj });
    await fsp.writeFile(file, 'after');
    const r = await manager().restore(e.id, { principal: 'human:op', any: true });
    expect(r.undo).toMatchObject({ kind: 'undo', undo_of: e.id, workspace: proj });
    expect(await fsp.readFile(file, 'utf8')).toBe('before');
  });

  it('without the extra root the same path is E_FORBIDDEN; a backup in a configured root records none', async () => {
    const m = manager();
    expect(await codeOf(m.backup(path.join(proj, 'a.txt'), { kind: 'write' }))).toBe('E_FORBIDDEN');
    const inRoot = await m.backup(path.join(ws, 'b.txt'), { kind: 'write', extra_roots: [proj] });
    expect(inRoot.workspace).toBeUndefined();
  });

  it('a restore re-checks the path inside the recorded root: a parent swapped for a symlink out is E_FORBIDDEN', async () => {
    const sub = path.join(proj, 'sub');
    await fsp.mkdir(sub);
    await fsp.writeFile(path.join(sub, 'c.txt'), 'c');
    const e = await manager().backup(path.join(sub, 'c.txt'), { kind: 'delete', extra_roots: [proj] });
    await fsp.rm(sub, { recursive: true });
    const outside = path.join(tmp, 'elsewhere');
    await fsp.mkdir(outside);
    await fsp.symlink(outside, sub);
    expect(await codeOf(manager().restore(e.id, { principal: 'human:op', any: true }))).toBe('E_FORBIDDEN');
    expect(await fsp.readdir(outside)).toEqual([]);
  });
});

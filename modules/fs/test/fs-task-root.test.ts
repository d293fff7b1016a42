import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Principal } from '@finger/protocol';

import createFsModule, { type FsModule } from '../src/index.js';

// A supervised task's own root: the daemon's `workspace_for` setting maps the task's principal
// (the object the hub hands the module as `source`) to its workspace; everyone else keeps the
// configured roots. The module checks this itself, whatever the firewall decided.

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fsp.rm(d, { recursive: true, force: true });
});

async function setup(workspace_for?: unknown) {
  const tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'finger-fs-task-')));
  dirs.push(tmp);
  const ws = path.join(tmp, 'workspace');
  const proj = path.join(tmp, 'proj');
  const sibling = path.join(tmp, 'sibling');
  for (const d of [proj, sibling]) await fsp.mkdir(d);
  await fsp.writeFile(path.join(proj, 'a.txt'), 'old\n');
  await fsp.writeFile(path.join(sibling, 'secret.txt'), 'secret\n');
  await fsp.symlink(sibling, path.join(proj, 'out'));
  const task: Principal = Object.freeze({ kind: 'agent', id: 'executor-t1', roles: ['agent:executor'] });
  const bound = new Map<Principal, string>([[task, proj]]);
  const fs: FsModule = await createFsModule({
    settings: {
      home: tmp,
      workspace_roots: [ws],
      backups_dir: path.join(tmp, 'backups'),
      workspace_for: workspace_for === undefined ? (p: Principal) => bound.get(p) : workspace_for,
    },
  });
  return { tmp, ws, proj, sibling, task, fs, as: (source: Principal) => ({ request_id: 'r1', source }) };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: { code: string }) => e.code,
  );
}

describe('fs with a task root', () => {
  it('the task reads, lists and writes in its root (relative paths there); the write is backed up and undo restores it', async () => {
    const { proj, task, fs, as } = await setup();
    expect((await fs.tools.read({ path: 'a.txt' }, as(task))).content).toBe('old\n');
    expect((await fs.tools.list({ path: '.' }, as(task))).entries.map((e) => e.path)).toContain('a.txt');
    const w = await fs.tools.write({ path: path.join(proj, 'a.txt'), content: 'new\n' }, as(task));
    expect(w.path).toBe(path.join(proj, 'a.txt'));
    const backups = await fs.tools.backups({}, as(task));
    expect(backups.backups.map((b) => [b.id, b.path])).toEqual([[w.backup_id, path.join(proj, 'a.txt')]]);
    // the undo is a person's act later, without the task's principal: the backup remembers the root
    // (another agent may not restore it into the task's root: it is not its backup)
    const other: Principal = { kind: 'agent', id: 'executor-t2', roles: ['agent:executor'] };
    expect(await codeOf(fs.tools.undo({ id: w.backup_id }, as(other)))).toBe('E_FORBIDDEN');
    expect(await codeOf(fs.tools.undo({}, as(other)))).toBe('E_NOT_FOUND');
    expect(await fsp.readFile(path.join(proj, 'a.txt'), 'utf8')).toBe('new\n');
    const operator: Principal = { kind: 'human', id: 'alice', roles: ['operator'] };
    const undo = await fs.tools.undo({ id: w.backup_id }, as(operator));
    expect(undo.restored).toMatchObject({ id: w.backup_id, path: path.join(proj, 'a.txt'), existed: true });
    expect(await fsp.readFile(path.join(proj, 'a.txt'), 'utf8')).toBe('old\n');
    // a created file: undo removes it again
    const c = await fs.tools.write({ path: 'b/new.txt', content: 'x', create_dirs: true }, as(task));
    expect(c.created).toBe(true);
    await fs.tools.undo({ id: c.backup_id }, as(operator));
    await expect(fsp.stat(path.join(proj, 'b', 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('outside the root and through a symlink leading out: E_FORBIDDEN, nothing written', async () => {
    const { proj, sibling, task, fs, as } = await setup();
    expect(await codeOf(fs.tools.write({ path: path.join(sibling, 'x.txt'), content: 'x' }, as(task)))).toBe(
      'E_FORBIDDEN',
    );
    expect(await codeOf(fs.tools.read({ path: 'out/secret.txt' }, as(task)))).toBe('E_FORBIDDEN');
    expect(await codeOf(fs.tools.write({ path: path.join(proj, 'out', 'y.txt'), content: 'y' }, as(task)))).toBe(
      'E_FORBIDDEN',
    );
    expect(await codeOf(fs.tools.delete({ path: proj }, as(task)))).toBe('E_FORBIDDEN');
    expect((await fsp.readdir(sibling)).sort()).toEqual(['secret.txt']);
  });

  it('nobody else gets the root: a copy of the task principal, another agent, a call without a source', async () => {
    const { proj, task, fs, as } = await setup();
    const file = path.join(proj, 'a.txt');
    expect(await codeOf(fs.tools.read({ path: file }, as({ ...task })))).toBe('E_FORBIDDEN');
    expect(await codeOf(fs.tools.read({ path: file }, as({ kind: 'agent', id: 'x', roles: [] })))).toBe('E_FORBIDDEN');
    expect(await codeOf(fs.tools.write({ path: file, content: 'z' }, { request_id: 'r' }))).toBe('E_FORBIDDEN');
    expect(await codeOf(fs.tools.read({ path: file }))).toBe('E_FORBIDDEN');
  });

  it('a workspace_for that is not a function (config JSON) is ignored', async () => {
    const { proj, task, as, fs } = await setup('/');
    expect(await codeOf(fs.tools.read({ path: path.join(proj, 'a.txt') }, as(task)))).toBe('E_FORBIDDEN');
  });
});

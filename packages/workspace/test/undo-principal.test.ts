import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type RestoreScope, UndoManager } from '@finger/workspace';

// Whose backup a restore may reach: each backup records the caller (`principal`, `kind:id`); a
// scope without `any` (an agent's undo) reaches only that caller's backups, a scope with it (a
// human operator's) every one — those stored before callers were recorded too.

let tmp: string;
let ws: string;
let store: string;

beforeEach(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'finger-undo-principal-')));
  ws = path.join(tmp, 'ws');
  store = path.join(tmp, 'backups');
  await fsp.mkdir(ws);
});

afterEach(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

const manager = () => new UndoManager({ backups_dir: store, workspace_roots: [ws] });

const A: RestoreScope = { principal: 'agent:executor-a' };
const B: RestoreScope = { principal: 'agent:executor-b' };
const OP: RestoreScope = { principal: 'human:alice', any: true };

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details?: unknown };
  }
  throw new Error('unexpectedly resolved');
}

/** Backs up `name` as `by`, then writes `content` there (what the fs tools do). */
async function change(um: UndoManager, name: string, content: string, by?: RestoreScope) {
  const f = path.join(ws, name);
  const e = await um.backup(f, { kind: 'write', ...(by ? { principal: by.principal } : {}) });
  await fsp.writeFile(f, content);
  return e;
}

describe('UndoManager restore scopes', () => {
  it("an agent's restore reaches only its own backups (regression: restore() took any caller's newest backup)", async () => {
    await fsp.writeFile(path.join(ws, 'a.txt'), 'a0');
    await fsp.writeFile(path.join(ws, 'b.txt'), 'b0');
    const um = manager();
    const a1 = await change(um, 'a.txt', 'a1', A);
    const b1 = await change(um, 'b.txt', 'b1', B);
    const a2 = await change(um, 'a.txt', 'a2', A);
    expect([a1.principal, b1.principal, a2.principal]).toEqual([A.principal, B.principal, A.principal]);

    // B's plain undo: its own newest (b1), never A's newer a2
    expect((await um.latest(B))?.id).toBe(b1.id);
    const rb = await um.restore(undefined, B);
    expect(rb.entry.id).toBe(b1.id);
    expect(rb.undo).toMatchObject({ kind: 'undo', undo_of: b1.id, principal: B.principal });
    expect(await fsp.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('a2');
    expect(await fsp.readFile(path.join(ws, 'b.txt'), 'utf8')).toBe('b0');
    // then nothing of B's is left, though A's are
    const none = await errorOf(um.restore(undefined, B));
    expect(none).toMatchObject({ code: 'E_NOT_FOUND', details: { principal: B.principal } });
    expect(await um.latest(B)).toBeUndefined();

    // B naming A's backup by id: E_FORBIDDEN, the file untouched, no undo record taken
    const before = (await um.list()).length;
    const forbidden = await errorOf(um.restore(a2.id, B));
    expect(forbidden).toMatchObject({ code: 'E_FORBIDDEN', details: { id: a2.id, principal: B.principal } });
    expect(forbidden.message).toBe(
      `backup "${a2.id}" was taken for another caller: ${B.principal} may restore only its own backups`,
    );
    expect(await fsp.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('a2');
    expect((await um.list()).length).toBe(before);
    expect((await um.get(a2.id))?.restored_by).toBeUndefined();

    // A walks back its own two changes; B may not undo A's undo, A may
    expect((await um.restore(undefined, A)).entry.id).toBe(a2.id);
    const ra = await um.restore(undefined, A);
    expect(ra.entry.id).toBe(a1.id);
    expect(await fsp.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('a0');
    expect((await errorOf(um.restore(ra.undo.id, B))).code).toBe('E_FORBIDDEN');
    await um.restore(ra.undo.id, A);
    expect(await fsp.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('a1');
  });

  it("an operator's restore takes the newest of anyone's, and any by id", async () => {
    const um = manager();
    const a1 = await change(um, 'a.txt', 'a1', A);
    const b1 = await change(um, 'b.txt', 'b1', B);
    expect((await um.latest(OP))?.id).toBe(b1.id);
    const r = await um.restore(undefined, OP);
    expect(r.entry.id).toBe(b1.id);
    expect(r.undo.principal).toBe(OP.principal);
    expect((await um.restore(a1.id, OP)).entry.id).toBe(a1.id);
    // the operator's undo record is not the agent's to restore
    expect((await errorOf(um.restore(r.undo.id, B))).code).toBe('E_FORBIDDEN');
  });

  it('a backup stored before callers were recorded is restored by an operator only, never by an agent', async () => {
    const f = path.join(ws, 'old.txt');
    await fsp.writeFile(f, 'old');
    // an index line as the store wrote it before: no principal
    const legacy = await change(manager(), 'old.txt', 'new');
    expect(legacy.principal).toBeUndefined();
    const index = await fsp.readFile(path.join(store, 'index.jsonl'), 'utf8');
    expect(index).not.toContain('"principal"');

    const um = manager(); // reloads the index
    expect(await um.latest(A)).toBeUndefined();
    expect((await errorOf(um.restore(undefined, A))).code).toBe('E_NOT_FOUND');
    const byId = await errorOf(um.restore(legacy.id, A));
    expect(byId).toMatchObject({ code: 'E_FORBIDDEN', details: { id: legacy.id, principal: A.principal } });
    expect(byId.message).toBe(
      `backup "${legacy.id}" records no caller (stored before callers were recorded): only an operator may restore it`,
    );
    expect(await fsp.readFile(f, 'utf8')).toBe('new');

    expect((await um.restore(undefined, OP)).entry.id).toBe(legacy.id);
    expect(await fsp.readFile(f, 'utf8')).toBe('old');
  });

  it('the recorded principal survives a reload', async () => {
    const e = await change(manager(), 'p.txt', 'x', A);
    expect((await manager().get(e.id))?.principal).toBe(A.principal);
    expect((await manager().restore(undefined, A)).entry.id).toBe(e.id);
  });

  it('an empty or missing principal is E_INVALID_ARGS', async () => {
    const um = manager();
    const f = path.join(ws, 'q.txt');
    expect((await errorOf(um.backup(f, { kind: 'write', principal: '' }))).code).toBe('E_INVALID_ARGS');
    expect((await errorOf(um.restore(undefined, { principal: '' }))).code).toBe('E_INVALID_ARGS');
    expect((await errorOf(um.latest({ principal: '', any: true }))).code).toBe('E_INVALID_ARGS');
    expect(await um.list()).toEqual([]);
  });
});

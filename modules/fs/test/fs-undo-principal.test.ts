import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { UndoManager } from '@finger/firewall';
import type { Principal } from '@finger/protocol';
import { toolContext } from '@finger/testkit';

import { type FsHarness, startFs } from './helpers.js';

// fs.undo takes no path, so the sandbox sees none: who may restore which backup is the module's
// own check, on the caller the hub hands it (`source`). An agent restores only its own changes; a
// human admin or operator (POST /v1/undo, `myfinger undo`) any, by default the newest of anyone's.

let h: FsHarness;
beforeEach(async () => {
  h = await startFs();
});
afterEach(async () => {
  await h.close();
});

const agentA: Principal = { kind: 'agent', id: 'executor-a', roles: ['agent:executor'] };
const agentB: Principal = { kind: 'agent', id: 'executor-b', roles: ['agent:executor'] };
const operator: Principal = { kind: 'human', id: 'alice', roles: ['operator'] };
const admin: Principal = { kind: 'human', id: 'root', roles: ['admin'] };
const viewer: Principal = { kind: 'human', id: 'vic', roles: ['viewer'] };

/** Runs a tool as `source` (the hub's ToolCallContext), resolving with its result. */
const as = (source: Principal) => (tool: string, args: Record<string, unknown>) =>
  h.rt.invoke(tool, args, toolContext(30_000, { source })) as Promise<any>;

/** The error a tool call as `source` rejects with. */
async function errorOf(
  source: Principal | undefined,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await h.rt.invoke(tool, args, toolContext(30_000, { source: source as Principal }));
  } catch (e) {
    return e as { code: string; message: string; details?: unknown };
  }
  throw new Error(`${tool} unexpectedly succeeded`);
}

const read = (name: string) => fsp.readFile(path.join(h.ws, name), 'utf8');
const exists = (name: string) =>
  fsp.lstat(path.join(h.ws, name)).then(
    () => true,
    () => false,
  );

describe('fs.undo restores only what the caller may', () => {
  it("agent B's fs.undo does not restore agent A's backup (regression: fs.undo restored any caller's newest backup)", async () => {
    await fsp.writeFile(path.join(h.ws, 'shared.txt'), 'orig');
    const a1 = await as(agentA)('write', { path: 'shared.txt', content: 'by A' });

    // B changed nothing: nothing to undo, A's change stays
    const none = await errorOf(agentB, 'undo', {});
    expect(none).toEqual(
      expect.objectContaining({
        code: 'E_NOT_FOUND',
        message: 'nothing to undo: agent:executor-b has no change left to undo',
        details: { principal: 'agent:executor-b' },
      }),
    );
    expect(await read('shared.txt')).toBe('by A');

    // B's own change, then A's newer one: B's plain undo takes B's own, not the newest
    const b1 = await as(agentB)('write', { path: 'b.txt', content: 'by B' });
    const a2 = await as(agentA)('write', { path: 'shared.txt', content: 'by A again' });
    const ub = await as(agentB)('undo', {});
    expect(ub).toEqual({
      restored: { id: b1.backup_id, path: path.join(h.ws, 'b.txt'), bytes: 0, existed: false, type: 'absent' },
      backup_id: expect.any(String),
    });
    expect(await exists('b.txt')).toBe(false);
    expect(await read('shared.txt')).toBe('by A again');

    // B naming A's backups by id: E_FORBIDDEN, nothing restored
    for (const id of [a1.backup_id, a2.backup_id]) {
      const err = await errorOf(agentB, 'undo', { id });
      expect(err).toEqual(
        expect.objectContaining({ code: 'E_FORBIDDEN', details: { id, principal: 'agent:executor-b' } }),
      );
    }
    expect(await read('shared.txt')).toBe('by A again');

    // A walks back its own changes, newest first
    expect((await as(agentA)('undo', {})).restored.id).toBe(a2.backup_id);
    expect(await read('shared.txt')).toBe('by A');
    expect((await as(agentA)('undo', {})).restored.id).toBe(a1.backup_id);
    expect(await read('shared.txt')).toBe('orig');
    expect((await errorOf(agentA, 'undo', {})).code).toBe('E_NOT_FOUND');
  });

  it('every backup records its caller from the hub source; an undo record names who undid', async () => {
    const a = await as(agentA)('write', { path: 'x.txt', content: '1' });
    await as(agentB)('write', { path: 'y.txt', content: '2' });
    const u = await as(agentA)('undo', { id: a.backup_id });
    const { backups } = await as(operator)('backups', {});
    expect(backups.map((b: { kind: string; principal?: string }) => [b.kind, b.principal])).toEqual([
      ['undo', 'agent:executor-a'],
      ['write', 'agent:executor-b'],
      ['write', 'agent:executor-a'],
    ]);
    expect(backups[0].id).toBe(u.backup_id);
    // A may undo its own undo; B may not
    expect((await errorOf(agentB, 'undo', { id: u.backup_id })).code).toBe('E_FORBIDDEN');
    await as(agentA)('undo', { id: u.backup_id });
    expect(await read('x.txt')).toBe('1');
  });

  it("a human operator's or admin's fs.undo restores the newest of anyone's, by id too; a viewer's only its own", async () => {
    const a = await as(agentA)('write', { path: 'a.txt', content: 'A' });
    const b = await as(agentB)('write', { path: 'b.txt', content: 'B' });
    expect((await errorOf(viewer, 'undo', {})).code).toBe('E_NOT_FOUND');
    expect((await errorOf(viewer, 'undo', { id: b.backup_id })).code).toBe('E_FORBIDDEN');
    // an agent holding an operator role name is still an agent
    const sly: Principal = { kind: 'agent', id: 'sly', roles: ['operator', 'admin'] };
    expect((await errorOf(sly, 'undo', { id: b.backup_id })).code).toBe('E_FORBIDDEN');
    expect(await exists('b.txt')).toBe(true);

    const u = await as(operator)('undo', {});
    expect(u.restored.id).toBe(b.backup_id);
    expect(await exists('b.txt')).toBe(false);
    expect((await as(admin)('undo', { id: a.backup_id })).restored.id).toBe(a.backup_id);
    expect(await exists('a.txt')).toBe(false);
    // the operator's undo is not B's to reverse
    expect((await errorOf(agentB, 'undo', { id: u.backup_id })).code).toBe('E_FORBIDDEN');
  });

  it("backups stored before callers were recorded: an agent's fs.undo never restores them, an operator's does", async () => {
    await fsp.writeFile(path.join(h.ws, 'old.txt'), 'old');
    // an entry as the store wrote it before this change (no principal), loaded by the module later
    const legacy = await new UndoManager({ backups_dir: h.backups, workspace_roots: [h.ws] }).backup(
      path.join(h.ws, 'old.txt'),
      { kind: 'write' },
    );
    expect(legacy.principal).toBeUndefined();
    await fsp.writeFile(path.join(h.ws, 'old.txt'), 'new');

    expect((await errorOf(agentA, 'undo', {})).code).toBe('E_NOT_FOUND');
    const byId = await errorOf(agentA, 'undo', { id: legacy.id });
    expect(byId).toEqual(
      expect.objectContaining({
        code: 'E_FORBIDDEN',
        message: `backup "${legacy.id}" records no caller (stored before callers were recorded): only an operator may restore it`,
        details: { id: legacy.id, principal: 'agent:executor-a' },
      }),
    );
    expect(await read('old.txt')).toBe('new');

    expect((await as(operator)('undo', {})).restored.id).toBe(legacy.id);
    expect(await read('old.txt')).toBe('old');
  });

  it("fs.backups shows an agent only its own backups, a person everyone's (regression: agents listed all)", async () => {
    await as(agentA)('write', { path: 'a.txt', content: 'by A' });
    await as(agentB)('write', { path: 'b.txt', content: 'by B' });
    const ofA = await as(agentA)('backups', {});
    expect(ofA.total).toBe(1);
    expect(ofA.backups.map((e: { principal?: string }) => e.principal)).toEqual(['agent:executor-a']);
    const ofB = await as(agentB)('backups', { path: 'a.txt' });
    expect(ofB).toEqual({ backups: [], total: 0 });
    expect((await as(viewer)('backups', {})).total).toBe(2);
    const all = await as(operator)('backups', {});
    expect(all.total).toBe(2);
    expect(new Set(all.backups.map((e: { principal?: string }) => e.principal))).toEqual(
      new Set(['agent:executor-a', 'agent:executor-b']),
    );
    expect(await h.rt.invoke('backups', {}, toolContext(30_000, {}))).toEqual({ backups: [], total: 0 });
  });

  it('a call without a caller restores nothing (E_FORBIDDEN)', async () => {
    await as(agentA)('write', { path: 'z.txt', content: 'z' });
    const err = await errorOf(undefined, 'undo', {});
    expect(err).toEqual(
      expect.objectContaining({
        code: 'E_FORBIDDEN',
        message: 'fs.undo needs the calling principal (the hub sets it): nothing restored',
      }),
    );
    expect(await read('z.txt')).toBe('z');
  });
});

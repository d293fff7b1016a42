import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build } from '@finger/daemon';

import { manifest, startDaemon, tempDir, type TestDaemon, writeFixtureModules } from './helpers.js';

const ADMIN = { kind: 'human', id: 'admin' };
const SEGMENT = 'audit-0000000001.jsonl';

/** A fake fs module offering `fs.undo` (restores `args.id`, default b2). */
async function writeFakeFs(dir: string): Promise<void> {
  await mkdir(join(dir, 'fs'), { recursive: true });
  await writeFile(
    join(dir, 'fs', 'module.json'),
    JSON.stringify({
      ...manifest('fs', ['backups', 'undo']),
      tools: [
        { name: 'backups', description: 'list backups', input_schema: { type: 'object' } },
        { name: 'undo', description: 'restore a backup', input_schema: { type: 'object' } },
      ],
    }),
  );
  await writeFile(
    join(dir, 'fs', 'index.mjs'),
    `export default { tools: {
  backups: () => ({ backups: [], total: 0 }),
  undo: (args) => {
    if (args.id === 'gone') throw Object.assign(new Error('no such backup'), { code: 'E_NOT_FOUND' });
    return { restored: { id: args.id ?? 'b2', path: '/w/a.txt', bytes: 2, existed: true, type: 'file' }, backup_id: 'b3' };
  },
} };
`,
  );
}

describe('audit routes and audited admin changes', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    const modules = await writeFixtureModules(await tempDir('finger-audit-modules-'));
    await writeFakeFs(modules);
    d = await startDaemon({ modules: { paths: [modules] } });
  });
  afterAll(async () => {
    await d.close();
  });

  const audit = async (query = ''): Promise<any> => {
    const res = await d.call('GET', `/v1/audit${query}`);
    expect(res.status).toBe(200);
    return res.json;
  };

  it('a grant change is appended before it applies; a no-op or unknown grant is not', async () => {
    const before = (await audit()).head.seq as number;
    expect((await d.call('POST', '/v1/grants', { body: { role: 'executor', tool: 'fx.*' } })).status).toBe(201);
    expect((await d.call('POST', '/v1/grants', { body: { role: 'executor', tool: 'fx.*' } })).status).toBe(201);
    expect((await d.call('DELETE', '/v1/grants', { body: { role: 'executor', tool: 'fx.*' } })).status).toBe(200);
    const unknown = await d.call('DELETE', '/v1/grants', { body: { role: 'executor', tool: 'nope.*' } });
    expect(unknown.json.error.code).toBe('E_NOT_FOUND');
    const { entries, head } = await audit(`?type=grant.changed&since_seq=${before}`);
    expect(entries.map((e: any) => [e.type, e.actor, e.decision, e.details])).toEqual([
      ['grant.changed', ADMIN, 'grant', { role: 'executor', tool: 'fx.*', action: 'grant' }],
      ['grant.changed', ADMIN, 'revoke', { role: 'executor', tool: 'fx.*', action: 'revoke' }],
    ]);
    expect(entries.map((e: any) => e.seq)).toEqual([before + 1, before + 2]);
    expect(head).toEqual({ seq: before + 2, hash: entries[1].hash });
    expect(entries[1].prev_hash).toBe(entries[0].hash);
  });

  it('token create/revoke are audited with name and role, never the token', async () => {
    const created = await d.call('POST', '/v1/tokens', { body: { name: 'audited', role: 'viewer' } });
    expect(created.status).toBe(201);
    expect((await d.call('DELETE', '/v1/tokens/audited')).status).toBe(200);
    expect((await d.call('DELETE', '/v1/tokens/audited')).status).toBe(404);
    const { entries } = await audit('?type=token.changed');
    expect(entries.map((e: any) => [e.actor, e.decision, e.details])).toEqual([
      [ADMIN, 'create', { action: 'create', name: 'audited', role: 'viewer' }],
      [ADMIN, 'revoke', { action: 'revoke', name: 'audited', role: 'viewer' }],
    ]);
    const file = await readFile(join(d.home, 'audit', SEGMENT), 'utf8');
    expect(file).not.toContain(created.json.token);
  });

  it('module register/unregister are audited; a failed register gets a compensating entry', async () => {
    const dir = await tempDir('finger-audit-mod-');
    await writeFile(join(dir, 'index.mjs'), 'export default { tools: { ping: () => "pong" } };\n');
    const reg = await d.call('POST', '/v1/modules', {
      body: { manifest: manifest('pinger', ['ping']), base_dir: dir },
    });
    expect(reg.status).toBe(201);
    expect((await d.call('DELETE', '/v1/modules/pinger')).status).toBe(200);
    expect((await d.call('DELETE', '/v1/modules/pinger')).status).toBe(404);
    const bad = await d.call('POST', '/v1/modules', { body: { manifest: { id: 'broken' }, base_dir: dir } });
    expect(bad.json.error.code).toBe('E_INVALID_MANIFEST');
    const { entries } = await audit('?type=module.changed');
    expect(entries.map((e: any) => [e.decision, e.details])).toEqual([
      ['register', { action: 'register', module: 'pinger', base_dir: dir }],
      ['unregister', { action: 'unregister', module: 'pinger' }],
      ['register', { action: 'register', module: 'broken', base_dir: dir }],
      [
        'failed',
        { action: 'register', module: 'broken', base_dir: dir, error: 'E_INVALID_MANIFEST', of_seq: entries[2].seq },
      ],
    ]);
    await rm(dir, { recursive: true, force: true });
  });

  it('an undo is audited before it runs and with its outcome, under one request_id', async () => {
    const res = await d.call('POST', '/v1/undo', { body: { id: 'b1' } });
    expect(res.status).toBe(200);
    const request_id = res.headers['x-finger-request-id'] as string;
    const { entries } = await audit(`?request_id=${request_id}`);
    expect(entries.map((e: any) => [e.type, e.actor, e.tool, e.decision, e.details])).toEqual([
      ['undo', ADMIN, 'fs.undo', 'requested', { backup_id: 'b1', path: null }],
      // the firewall's verdict on the tool call itself (a human's direct dispatch)
      ['tool.call', ADMIN, 'fs.undo', 'notify', undefined],
      ['undo', ADMIN, 'fs.undo', 'restored', { backup_id: 'b1', path: '/w/a.txt', new_backup_id: 'b3' }],
    ]);
    const failed = await d.call('POST', '/v1/undo', { body: { id: 'gone' } });
    expect(failed.status).not.toBe(200);
    const rid = failed.headers['x-finger-request-id'] as string;
    const after = await audit(`?request_id=${rid}&type=undo`);
    expect(after.entries.map((e: any) => [e.decision, e.details])).toEqual([
      ['requested', { backup_id: 'gone', path: null }],
      ['failed', { backup_id: 'gone', path: null, error: failed.json.error.code }],
    ]);
  });

  it('GET /v1/audit filters by type, request_id, since_seq and limit; viewers may read, agents may not', async () => {
    const all = (await audit('?limit=10000')).entries as any[];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect((await audit('?limit=2')).entries).toEqual(all.slice(0, 2));
    expect((await audit('?since_seq=3&limit=2')).entries).toEqual(all.slice(3, 5));
    expect((await audit('?type=undo')).entries).toEqual(all.filter((e) => e.type === 'undo'));
    expect((await audit('?request_id=nothing-here')).entries).toEqual([]);
    expect((await d.call('GET', '/v1/audit?type=nonsense')).json.error.code).toBe('E_INVALID_ARGS');
    expect((await d.call('GET', '/v1/audit?limit=0')).status).toBe(400);
    const viewer = await d.token('viewer');
    expect((await d.call('GET', '/v1/audit', { token: viewer })).status).toBe(200);
    expect((await d.call('GET', '/v1/audit/verify', { token: viewer })).status).toBe(200);
    const agent = await d.token('agent:executor');
    expect((await d.call('GET', '/v1/audit', { token: agent })).json.error.code).toBe('E_FORBIDDEN');
    expect((await d.call('GET', '/v1/audit/verify', { token: agent })).json.error.code).toBe('E_FORBIDDEN');
  });

  it('GET /v1/audit/verify passes, then names the entry whose byte was changed on disk', async () => {
    const { head } = await audit();
    const ok = await d.call('GET', '/v1/audit/verify');
    expect(ok.json).toEqual({ ok: true, entries: head.seq, first_bad: null, reason: null });
    const path = join(d.home, 'audit', SEGMENT);
    const lines = (await readFile(path, 'utf8')).split('\n');
    // Change one byte of entry 2: a digit of its timestamp's year.
    const line = lines[1]!;
    const at = line.indexOf('"ts":"') + 8;
    lines[1] = line.slice(0, at) + (line[at] === '1' ? '2' : '1') + line.slice(at + 1);
    await writeFile(path, lines.join('\n'));
    const bad = await d.call('GET', '/v1/audit/verify');
    expect(bad.json).toEqual({
      ok: false,
      entries: head.seq,
      first_bad: 2,
      reason: expect.stringContaining(`${SEGMENT}:2`),
    });
  });
});

describe('the daemon and its audit log', () => {
  it('refuses an audited change with 503 E_STORE_UNAVAILABLE when the entry cannot be written', async () => {
    const d = await startDaemon();
    try {
      await d.app.audit.close();
      const res = await d.call('POST', '/v1/grants', { body: { role: 'executor', tool: 'fx.*' } });
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe('E_STORE_UNAVAILABLE');
      expect(d.app.grants.list().executor ?? []).not.toContain('fx.*');
      const tok = await d.call('POST', '/v1/tokens', { body: { name: 'never', role: 'viewer' } });
      expect(tok.json.error.code).toBe('E_STORE_UNAVAILABLE');
      expect(d.app.tokens.list().map((t) => t.name)).not.toContain('never');
      const mod = await d.call('DELETE', '/v1/modules/echo');
      expect(mod.json.error.code).toBe('E_STORE_UNAVAILABLE');
      expect(d.app.hub.registry.get('echo')).toBeDefined();
    } finally {
      await d.close();
    }
  });

  it('continues the chain across restarts and refuses to start over a damaged log end', async () => {
    const home = await tempDir();
    const config = { log: { level: 'silent' as const }, server: { port: 0 }, modules: { builtin: false } };
    try {
      let app = await build({ home, config });
      await app.audit.append({ type: 'halt' });
      await app.close();
      app = await build({ home, config });
      expect(app.audit.head().seq).toBe(1);
      expect((await app.audit.append({ type: 'unlock' })).seq).toBe(2);
      await app.close();
      expect(await readdir(join(home, 'audit'))).toEqual([SEGMENT]);
      const path = join(home, 'audit', SEGMENT);
      await writeFile(path, (await readFile(path, 'utf8')).slice(0, -10));
      const err = await build({ home, config }).then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err?.code).toBe('E_STORE_UNAVAILABLE');
      expect(err?.message).toContain('damaged at its end');
      expect(err?.message).toContain('myfinger audit verify');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

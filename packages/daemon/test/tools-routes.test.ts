import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build } from '@finger/daemon';
import type { FingerEvent } from '@finger/protocol';

import { startDaemon, tempDir, type TestDaemon, writeFixtureModules } from './helpers.js';

/** `calc`: a tool with an input_schema and declared metadata; `conf.settings` returns its settings. */
async function writeToolModules(dir: string): Promise<string> {
  await writeFixtureModules(dir);
  await mkdir(join(dir, 'calc'), { recursive: true });
  await writeFile(
    join(dir, 'calc', 'module.json'),
    JSON.stringify({
      id: 'calc',
      name: 'Calculator',
      version: '1.0.0',
      kind: 'tool',
      runtime: { type: 'inprocess', entry: './index.mjs' },
      tools: [
        {
          name: 'add',
          description: 'adds two numbers',
          input_schema: {
            type: 'object',
            required: ['a', 'b'],
            additionalProperties: false,
            properties: { a: { type: 'number' }, b: { type: 'number' } },
          },
          output_schema: { type: 'object', required: ['sum'], properties: { sum: { type: 'number' } } },
          risk_level: 'low',
          capability_level: 'L0',
          side_effects: false,
          idempotent: true,
          context_cost: 40,
        },
      ],
    }),
  );
  await writeFile(
    join(dir, 'calc', 'index.mjs'),
    'export default { tools: { add: ({ a, b }) => ({ sum: a + b }) } };\n',
  );
  await mkdir(join(dir, 'conf'), { recursive: true });
  await writeFile(
    join(dir, 'conf', 'module.json'),
    JSON.stringify({
      id: 'conf',
      name: 'Settings probe',
      version: '1.0.0',
      kind: 'tool',
      runtime: { type: 'inprocess', entry: './index.mjs' },
      tools: [{ name: 'settings', description: 'returns the settings it was built with' }],
    }),
  );
  await writeFile(
    join(dir, 'conf', 'index.mjs'),
    'export default ({ settings }) => ({ tools: { settings: () => settings } });\n',
  );
  return dir;
}

/** A stand-in `fs` module with `backups` and `undo`, to check the routes' plumbing. */
async function writeFakeFs(dir: string): Promise<void> {
  await mkdir(join(dir, 'fs'), { recursive: true });
  await writeFile(
    join(dir, 'fs', 'module.json'),
    JSON.stringify({
      id: 'fs',
      name: 'fake fs',
      version: '1.0.0',
      kind: 'tool',
      runtime: { type: 'inprocess', entry: './index.mjs' },
      tools: [
        { name: 'backups', description: 'list backups', side_effects: false, risk_level: 'low' },
        { name: 'undo', description: 'restore a backup' },
      ],
    }),
  );
  await writeFile(
    join(dir, 'fs', 'index.mjs'),
    `const B = [{ id: 'b2', path: '/w/a.txt', ts: '2026-01-02T00:00:00.000Z', size: 2, kind: 'write', existed: true }];
export default { tools: {
  backups: (args, ctx) => ({ backups: B, total: args.limit ?? 1, caller: ctx.source.kind }),
  undo: (args, ctx) => ({
    restored: { id: args.id ?? 'b2', path: '/w/a.txt', bytes: 2, existed: true, type: 'file' },
    backup_id: 'b3',
    caller: ctx.source.id,
  }),
} };
`,
  );
}

function ids(tools: { id: string }[]): string[] {
  return tools.map((t) => t.id).sort();
}

describe('tool routes', () => {
  let d: TestDaemon;
  let modules: string;
  beforeAll(async () => {
    modules = await writeToolModules(await tempDir('finger-tool-modules-'));
    d = await startDaemon({ modules: { paths: [modules] } });
  });
  afterAll(async () => {
    await d.close();
    await rm(modules, { recursive: true, force: true });
  });

  it('GET /v1/tools lists every tool with its metadata and defaults', async () => {
    const res = await d.call('GET', '/v1/tools');
    expect(res.status).toBe(200);
    expect(ids(res.json.tools)).toEqual([
      'calc.add',
      'conf.settings',
      'echo.echo',
      'fx.echo',
      'fx.fail',
      'fx.sleep',
      'fx.whoami',
      'supervisor.handle',
    ]);
    const add = res.json.tools.find((t: { id: string }) => t.id === 'calc.add');
    expect(add).toMatchObject({
      id: 'calc.add',
      module: 'calc',
      name: 'add',
      risk_level: 'low',
      capability_level: 'L0',
      side_effects: false,
      idempotent: true,
      context_cost: 40,
      provider: 'calc',
      runtime: 'inprocess',
    });
    const echo = res.json.tools.find((t: { id: string }) => t.id === 'echo.echo');
    expect(echo).toMatchObject({ risk_level: 'medium', capability_level: 'L2', side_effects: true, idempotent: false });
  });

  it('GET /v1/tools/:id gives the full schemas and the provider choice; unknown → 404 E_NO_TARGET', async () => {
    const res = await d.call('GET', '/v1/tools/calc.add');
    expect(res.status).toBe(200);
    expect(res.json.tool.input_schema).toEqual({
      type: 'object',
      required: ['a', 'b'],
      additionalProperties: false,
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(res.json.tool.output_schema).toEqual({
      type: 'object',
      required: ['sum'],
      properties: { sum: { type: 'number' } },
    });
    expect(res.json.provider_choice).toEqual({
      name: 'add',
      chosen: 'calc.add',
      candidates: ['calc.add'],
      rule: 'only_provider',
    });
    const missing = await d.call('GET', '/v1/tools/nope.nothing');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('E_NO_TARGET');
  });

  it('POST /v1/tools/:id/run runs the tool for a human; bad args → 400 E_INVALID_ARGS listing each problem', async () => {
    const ok = await d.call('POST', '/v1/tools/calc.add/run', { body: { args: { a: 2, b: 3 } } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ status: 'succeeded', target: 'calc.add', result: { sum: 5 } });
    expect(ok.json.request_id).toEqual(expect.any(String));

    const bad = await d.call('POST', '/v1/tools/calc.add/run', { body: { args: { a: 'two', c: 1 } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('E_INVALID_ARGS');
    expect(bad.json.error.details).toEqual({
      tool: 'calc.add',
      issues: [
        { path: '$.b', message: 'is required' },
        { path: '$.c', message: 'is not an allowed key' },
        { path: '$.a', message: 'must be number' },
      ],
    });

    const body = await d.call('POST', '/v1/tools/calc.add/run', { body: { args: [], extra: 1 } });
    expect(body.status).toBe(400);
    expect(body.json.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'body.args',
      'body.extra',
    ]);

    const noBody = await d.call('POST', '/v1/tools/fx.echo/run');
    expect([noBody.status, noBody.json.result]).toEqual([200, {}]);

    const viewer = await d.token('viewer');
    const denied = await d.call('POST', '/v1/tools/calc.add/run', { token: viewer, body: { args: { a: 1, b: 1 } } });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe('E_FORBIDDEN');
  });

  it('an agent outside its grants gets 403 E_FORBIDDEN and a FIREWALL_VERDICT; after POST /v1/grants it works', async () => {
    const agent = await d.token('agent:executor', 'exec-agent');
    const seen: FingerEvent[] = [];
    const off = d.app.events.subscribe({ types: ['FIREWALL_VERDICT'] }, (e) => seen.push(e));
    try {
      const denied = await d.call('POST', '/v1/tools/calc.add/run', { token: agent, body: { args: { a: 1, b: 2 } } });
      expect(denied.status).toBe(403);
      expect(denied.json.error.code).toBe('E_FORBIDDEN');
      expect(seen).toHaveLength(1);
      expect(seen[0]!.target).toBe('calc.add');
      expect(seen[0]!.data).toMatchObject({
        action: 'deny',
        layer: 'permission',
        tool: 'calc.add',
        role: 'executor',
        principal: { kind: 'agent', id: 'exec-agent' },
        reasons: [expect.any(String)],
      });
      expect(denied.json.error.details).toEqual({ role: 'executor', tool: 'calc.add' });

      const granted = await d.call('POST', '/v1/grants', { body: { role: 'executor', tool: 'calc.*' } });
      expect(granted.status).toBe(201);
      expect(granted.json).toMatchObject({ role: 'executor', tool: 'calc.*' });
      expect(granted.json.grants).toContain('calc.*');
      const stored = await readFile(join(d.home, 'state', 'grants.json'), 'utf8');
      expect(stored).toContain('calc.*');

      const ok = await d.call('POST', '/v1/tools/calc.add/run', { token: agent, body: { args: { a: 1, b: 2 } } });
      expect(ok.status).toBe(200);
      expect(ok.json.result).toEqual({ sum: 3 });
      const list = await d.call('GET', '/v1/grants');
      expect(list.status).toBe(200);
      expect(list.json.grants.executor).toContain('calc.*');

      const revoked = await d.call('DELETE', '/v1/grants', { body: { role: 'executor', tool: 'calc.*' } });
      expect(revoked.status).toBe(200);
      expect(revoked.json).toMatchObject({ role: 'executor', tool: 'calc.*', revoked: true });
      expect(revoked.json.grants).not.toContain('calc.*');
      const again = await d.call('POST', '/v1/tools/calc.add/run', { token: agent, body: { args: { a: 1, b: 2 } } });
      expect(again.status).toBe(403);
      expect(again.json.error.code).toBe('E_FORBIDDEN');
    } finally {
      off();
    }
  });

  it('an agent dispatch through /v1/messages obeys the same grants', async () => {
    const agent = await d.token('agent:reviewer');
    const res = await d.call('POST', '/v1/messages', { token: agent, body: { target: 'echo', payload: { x: 1 } } });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('E_FORBIDDEN');
  });

  it('grant changes: admin only; role must be an agent role; the tool glob is checked', async () => {
    const operator = await d.token('operator');
    const byOp = await d.call('POST', '/v1/grants', { token: operator, body: { role: 'executor', tool: 'x.*' } });
    expect(byOp.status).toBe(403);
    expect(byOp.json.error.code).toBe('E_FORBIDDEN');
    expect((await d.call('GET', '/v1/grants', { token: operator })).status).toBe(200);
    const badRole = await d.call('POST', '/v1/grants', { body: { role: 'admin', tool: 'x.*' } });
    expect(badRole.status).toBe(400);
    expect(badRole.json.error.code).toBe('E_INVALID_ARGS');
    expect(badRole.json.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['body.role']);
    for (const tool of ['', 'fs write', '../etc', 'a/b']) {
      const badGlob = await d.call('POST', '/v1/grants', { body: { role: 'executor', tool } });
      expect([tool, badGlob.status, badGlob.json.error.code]).toEqual([tool, 400, 'E_INVALID_ARGS']);
    }
    const badDelete = await d.call('DELETE', '/v1/grants', { body: { role: 'root', tool: 'x' } });
    expect(badDelete.status).toBe(400);
  });

  it('GET /v1/tools?role=R lists only the tools R is granted; a bad role → 400', async () => {
    const before = await d.call('GET', '/v1/tools?role=supervisor');
    expect(before.status).toBe(200);
    expect(ids(before.json.tools)).not.toContain('calc.add');
    expect((await d.call('POST', '/v1/grants', { body: { role: 'supervisor', tool: 'calc.add' } })).status).toBe(201);
    const after = await d.call('GET', '/v1/tools?role=supervisor');
    expect(ids(after.json.tools)).toEqual([...ids(before.json.tools), 'calc.add'].sort());
    const all = await d.call('GET', '/v1/tools');
    expect(after.json.tools.length).toBeLessThan(all.json.tools.length);
    const bad = await d.call('GET', '/v1/tools?role=root');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('E_INVALID_ARGS');
  });

  it('modules get home, workspace_roots and backups_dir in their settings', async () => {
    const res = await d.call('POST', '/v1/tools/conf.settings/run', { body: { args: {} } });
    expect(res.status).toBe(200);
    expect(res.json.result).toEqual({
      home: d.home,
      workspace_roots: [await realpath(d.workspace)],
      backups_dir: join(d.home, 'backups'),
    });
    expect(d.app.workspaceRoots).toEqual([await realpath(d.workspace)]);
  });

  it('GET /v1/backups and POST /v1/undo answer 404 E_NO_TARGET without the fs module', async () => {
    const list = await d.call('GET', '/v1/backups');
    expect(list.status).toBe(404);
    expect(list.json.error.code).toBe('E_NO_TARGET');
    const undo = await d.call('POST', '/v1/undo', { body: {} });
    expect(undo.status).toBe(404);
    expect(undo.json.error.code).toBe('E_NO_TARGET');
  });
});

describe('tool routes: config and the fs backup routes', () => {
  const cleanup: string[] = [];
  afterAll(async () => {
    for (const p of cleanup) await rm(p, { recursive: true, force: true });
  });

  it('config grants, module settings and extra workspace roots (relative: under the user home) reach the hub', async () => {
    const modules = await writeToolModules(await tempDir('finger-tool-modules-'));
    const outside = await tempDir('finger-ws-');
    const userHome = await tempDir('finger-user-');
    cleanup.push(modules, outside, userHome);
    const d = await startDaemon(
      {
        modules: { paths: [modules], settings: { conf: { max_bytes: 10, home: '/elsewhere' } } },
        workspace: { roots: ['ws', join(outside, 'made', 'here'), '~/ws/../ws'] },
        grants: { executor: ['calc.add'] },
      },
      { env: { HOME: userHome } },
    );
    try {
      const res = await d.call('POST', '/v1/tools/conf.settings/run', { body: { args: {} } });
      const roots = [await realpath(join(userHome, 'ws')), await realpath(join(outside, 'made', 'here'))];
      expect(res.json.result).toEqual({
        home: '/elsewhere',
        workspace_roots: roots,
        backups_dir: join(d.home, 'backups'),
        max_bytes: 10,
      });
      const agent = await d.token('agent:executor');
      const ok = await d.call('POST', '/v1/tools/calc.add/run', { token: agent, body: { args: { a: 1, b: 1 } } });
      expect(ok.status).toBe(200);
      const list = await d.call('GET', '/v1/tools?role=executor');
      expect(ids(list.json.tools)).toContain('calc.add');
    } finally {
      await d.close();
    }
  });

  it('a workspace root that cannot be created fails start with E_INVALID_ARGS naming it', async () => {
    const home = await tempDir();
    const elsewhere = await tempDir('finger-ws-');
    cleanup.push(home, elsewhere);
    await writeFile(join(elsewhere, 'plain-file'), 'x');
    const bad = join(elsewhere, 'plain-file', 'ws');
    const err = await build({
      home,
      config: { log: { level: 'silent' }, modules: { builtin: false }, workspace: { roots: [bad] } },
    }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string; details: unknown },
    );
    expect(err?.code).toBe('E_INVALID_ARGS');
    expect(err?.message).toContain(`workspace root ${bad} cannot be created`);
    expect(err?.details).toMatchObject({ issues: [{ path: '$.workspace.roots[0]' }] });
  });

  it("a viewer's GET /v1/backups that would need an approval is refused at once (403 E_FORBIDDEN), never held", async () => {
    const d = await startDaemon({ modules: { builtin: true } });
    try {
      const base = (await d.app.listen()).url;
      const viewer = await d.token('viewer');
      const operator = await d.token('operator');
      const get = (path: string, token: string) =>
        fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });

      // a held request would not answer before the fetch's own 10 s timeout aborts it
      const answers = await Promise.all(Array.from({ length: 5 }, () => get('/v1/backups?path=/etc/passwd', viewer)));
      for (const res of answers) {
        expect(res.status).toBe(403);
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('E_FORBIDDEN');
        expect(body.error.message).toContain('ask an operator');
      }
      // nothing entered the approval queue
      const approvals = await get('/v1/approvals', d.admin);
      expect(await approvals.json()).toEqual({ approvals: [] });
      expect(d.app.gate.stats().pending).toBe(0);

      // a viewer's plain listing still works; an operator's request runs as before: a person's
      // direct call, not held, answered by the fs module itself (its own workspace check)
      expect((await get('/v1/backups', viewer)).status).toBe(200);
      const byOperator = await get('/v1/backups?path=/etc/passwd', operator);
      expect(byOperator.status).toBe(403);
      expect(((await byOperator.json()) as { error: { message: string } }).error.message).toBe(
        'path "/etc/passwd" is outside the workspace: it resolves outside every workspace root',
      );
      expect(d.app.gate.stats()).toMatchObject({ pending: 0, held: 0 });
    } finally {
      await d.close();
    }
  }, 20_000);

  it('GET /v1/backups and POST /v1/undo run fs.backups and fs.undo as the caller', async () => {
    const modules = await tempDir('finger-tool-modules-');
    cleanup.push(modules);
    await writeFakeFs(modules);
    const d = await startDaemon({ modules: { paths: [modules] } });
    try {
      const list = await d.call('GET', '/v1/backups');
      expect(list.status).toBe(200);
      expect(list.json).toEqual({
        backups: [
          { id: 'b2', path: '/w/a.txt', ts: '2026-01-02T00:00:00.000Z', size: 2, kind: 'write', existed: true },
        ],
        total: 1,
      });
      expect((await d.call('GET', '/v1/backups?limit=7&path=a.txt')).json.total).toBe(7);
      expect((await d.call('GET', '/v1/backups?limit=0')).status).toBe(400);
      const viewer = await d.token('viewer');
      expect((await d.call('GET', '/v1/backups', { token: viewer })).status).toBe(200);
      const undo = await d.call('POST', '/v1/undo', { body: { id: 'b1' } });
      expect(undo.status).toBe(200);
      expect(undo.json).toEqual({
        restored: { id: 'b1', path: '/w/a.txt', bytes: 2, existed: true, type: 'file' },
        backup_id: 'b3',
      });
      const newest = await d.call('POST', '/v1/undo');
      expect(newest.json.restored.id).toBe('b2');
      const byViewer = await d.call('POST', '/v1/undo', { token: viewer, body: {} });
      expect(byViewer.status).toBe(403);
      const agent = await d.token('agent:executor');
      expect((await d.call('POST', '/v1/undo', { token: agent, body: {} })).status).toBe(403);
    } finally {
      await d.close();
    }
  });
});

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '@finger/testkit/core';

import { manifest, startDaemon, type TestDaemon } from './helpers.js';

const ROUTES: ['GET' | 'POST' | 'PUT' | 'DELETE', string][] = [
  ['POST', '/v1/input'],
  ['POST', '/v1/messages'],
  ['GET', '/v1/requests/abc'],
  ['GET', '/v1/requests/abc/events'],
  ['GET', '/v1/events'],
  ['GET', '/v1/modules'],
  ['POST', '/v1/modules'],
  ['DELETE', '/v1/modules/echo'],
  ['GET', '/v1/modules/echo/health'],
  ['GET', '/v1/tokens'],
  ['POST', '/v1/tokens'],
  ['DELETE', '/v1/tokens/x'],
  ['GET', '/v1/tools'],
  ['GET', '/v1/tools/echo.echo'],
  ['POST', '/v1/tools/echo.echo/run'],
  ['GET', '/v1/grants'],
  ['POST', '/v1/grants'],
  ['DELETE', '/v1/grants'],
  ['GET', '/v1/backups'],
  ['POST', '/v1/undo'],
  ['GET', '/v1/audit'],
  ['GET', '/v1/audit/verify'],
  ['GET', '/v1/policy'],
  ['PUT', '/v1/policy'],
  ['POST', '/v1/policy/reset'],
  ['GET', '/v1/policy/effective'],
  ['POST', '/v1/policy/check'],
  ['GET', '/metrics'],
  ['GET', '/docs'],
  ['GET', '/docs/json'],
  ['GET', '/v1/nowhere'],
];

describe('HTTP routes', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.close();
  });

  it('GET /v1/health needs no token, and then names nothing', async () => {
    const res = await d.call('GET', '/v1/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'ok',
      modules: 3, // echo, fx and the ingress supervisor agent
      safety: { state: 'open', locked: false },
    });
  });

  it('GET /v1/health with a valid token answers everything', async () => {
    const res = await d.call('GET', '/v1/health');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'ok',
      version: '0.1.0',
      uptime_s: expect.any(Number),
      pid: process.pid,
      modules: 3,
      home: d.home,
      safety: { state: 'open', locked: false, agents_locked: [], breakers_tripped: {}, agents: [], breakers: {} },
      // whether bubblewrap runs depends on the machine; in auto mode the sandbox is on exactly when it can run
      sandbox: expect.objectContaining({ mode: 'auto', available: expect.any(Boolean) }),
      // FINGER_HOME's storage, and the log's lines (none at level silent)
      storage: {
        full: false,
        failures: [],
        free_bytes: expect.any(Number),
        log: { written: 0, dropped: 0, queued: 0 },
      },
    });
    const sandbox = (res.json as { sandbox: { available: boolean; active: boolean } }).sandbox;
    expect(sandbox.active).toBe(sandbox.available);
  });

  it('every other route without a token → 401 E_UNAUTHENTICATED', async () => {
    const printed = d.app.fastify.printRoutes({ commonPrefix: false });
    for (const [, url] of ROUTES.filter(([, u]) => u !== '/v1/nowhere')) {
      const first = url.split('/').filter(Boolean)[0]!;
      expect(printed).toContain(first);
    }
    for (const [method, url] of ROUTES) {
      const res = await d.call(method, url, {
        token: null,
        ...(method === 'POST' || method === 'PUT' ? { body: {} } : {}),
      });
      expect([method, url, res.status, res.json]).toEqual([
        method,
        url,
        401,
        { error: { code: 'E_UNAUTHENTICATED', message: expect.any(String) } },
      ]);
      const bad = await d.call(method, url, {
        token: 'fgr_forged',
        ...(method === 'POST' || method === 'PUT' ? { body: {} } : {}),
      });
      expect([method, url, bad.status, bad.json.error.code]).toEqual([method, url, 401, 'E_UNAUTHENTICATED']);
    }
  });

  it('role checks: viewer cannot register modules or dispatch; agents may dispatch granted tools; admin-only tokens', async () => {
    const viewer = await d.token('viewer');
    const agent = await d.token('agent:executor');
    const operator = await d.token('operator');
    const reg = await d.call('POST', '/v1/modules', { token: viewer, body: { manifest: manifest('zz', ['a']) } });
    expect(reg.status).toBe(403);
    expect(reg.json.error.code).toBe('E_FORBIDDEN');
    expect((await d.call('POST', '/v1/messages', { token: viewer, body: { target: 'echo' } })).status).toBe(403);
    expect((await d.call('GET', '/v1/tokens', { token: operator })).status).toBe(403);
    expect((await d.call('GET', '/v1/modules', { token: viewer })).status).toBe(200);
    expect((await d.call('GET', '/v1/modules', { token: agent })).status).toBe(403);
    const ungranted = await d.call('POST', '/v1/messages', { token: agent, body: { target: 'fx.echo', payload: {} } });
    expect(ungranted.status).toBe(403);
    expect(ungranted.json.error.code).toBe('E_FORBIDDEN');
    const sent = await d.call('POST', '/v1/messages', { token: agent, body: { target: 'echo', payload: { x: 1 } } });
    expect(sent.status).toBe(200);
    expect(sent.json.result).toEqual({ x: 1 });
  });

  it('unknown route with a token → 404 E_NOT_FOUND', async () => {
    const res = await d.call('GET', '/v1/nowhere');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { code: 'E_NOT_FOUND', message: 'no route GET /v1/nowhere' } });
  });

  it('/v1/input /hub blocking returns the echo with ids and status', async () => {
    const res = await d.call('POST', '/v1/input', { body: { text: '/hub target=echo {"hello":"world"}' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      request_id: expect.any(String),
      correlation_id: expect.any(String),
      status: 'succeeded',
      target: 'echo.echo',
      result: { hello: 'world' },
    });
    expect(res.headers['x-finger-request-id']).toBe(res.json.request_id);
    const rec = await d.call('GET', `/v1/requests/${res.json.request_id}`);
    expect(rec.status).toBe(200);
    expect(rec.json).toMatchObject({
      request_id: res.json.request_id,
      status: 'succeeded',
      result: { hello: 'world' },
      target: 'echo.echo',
    });
  });

  it('/v1/input non-blocking → 202, then GET /v1/requests/:id has the result and the events replay', async () => {
    const res = await d.call('POST', '/v1/input', {
      body: { text: '/hub target=fx.sleep blocking=false {"ms":30}', session_id: 's-1' },
    });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({
      request_id: expect.any(String),
      correlation_id: expect.any(String),
      status: 'running',
      target: 'fx.sleep',
    });
    const id = res.json.request_id as string;
    const rec = await waitFor(
      'the request to finish',
      async () => {
        const r = await d.call('GET', `/v1/requests/${id}`);
        return r.json.status === 'succeeded' ? r : undefined;
      },
      20_000,
      10,
    );
    expect(rec.json).toEqual({
      request_id: id,
      correlation_id: res.json.correlation_id,
      target: 'fx.sleep',
      status: 'succeeded',
      created_at: expect.any(String),
      finished_at: expect.any(String),
      result: { slept: 30 },
      caller: expect.stringMatching(/^human:/),
    });
    const evs = await waitFor(
      'DISPATCH_RESULT',
      async () => {
        const r = await d.call('GET', `/v1/requests/${id}/events`);
        return r.json.events.some((e: { type: string }) => e.type === 'DISPATCH_RESULT') ? r : undefined;
      },
      20_000,
      10,
    );
    expect(evs.json.events.map((e: { type: string }) => e.type)).toEqual([
      'INPUT_RECEIVED',
      'MODE_PARSED',
      'DISPATCH_SENT',
      'FIREWALL_VERDICT', // fx.sleep's default risk (medium) is NOTIFY
      'DISPATCH_RESULT',
    ]);
    for (const e of evs.json.events) {
      expect(e.correlation_id).toBe(res.json.correlation_id);
      expect(e.session_id).toBe('s-1');
    }
    expect(evs.json.events[4].data).toEqual({ ok: true });
    const recent = await d.call('GET', `/v1/events?type=DISPATCH_SENT,DISPATCH_RESULT&request_id=${id}&limit=10`);
    expect(recent.status).toBe(200);
    expect(recent.json.events.map((e: { type: string }) => e.type)).toEqual(['DISPATCH_SENT', 'DISPATCH_RESULT']);
  });

  it('bad /hub syntax → 400 E_BAD_HUB_SYNTAX with position', async () => {
    const res = await d.call('POST', '/v1/input', { body: { text: '/hub target=echo blocking=maybe' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({
      code: 'E_BAD_HUB_SYNTAX',
      message: expect.stringContaining('position 26'),
      details: { position: 26, expected: 'true or false', found: '"maybe"' },
    });
  });

  it('plain text goes to the ingress supervisor (offline router with no model configured)', async () => {
    const res = await d.call('POST', '/v1/input', { body: { text: 'echo hello' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: 'succeeded',
      target: 'echo.echo',
      result: { text: 'hello' },
      route: { decision: 'dispatch_module', target: 'echo.echo', requires_human: false, attempts: 1 },
    });
  });

  it('unknown target → 404 E_NO_TARGET; ambiguous module lists tools; module errors pass through', async () => {
    const res = await d.call('POST', '/v1/messages', { body: { target: 'ghost' } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('E_NO_TARGET');
    const amb = await d.call('POST', '/v1/messages', { body: { target: 'fx', blocking: false } });
    expect(amb.status).toBe(404);
    expect(amb.json.error.details.tools).toEqual(['fx.echo', 'fx.whoami', 'fx.sleep', 'fx.fail']);
    const fail = await d.call('POST', '/v1/messages', { body: { target: 'fx.fail' } });
    expect(fail.status).toBe(502);
    expect(fail.json.error).toEqual({ code: 'E_MODULE_ERROR', message: 'boom' });
    const slow = await d.call('POST', '/v1/input', { body: { text: '/hub target=fx.sleep timeout=20 {"ms":2000}' } });
    expect(slow.status).toBe(504);
    expect(slow.json.error.code).toBe('E_TIMEOUT');
  });

  it('a forged source in /v1/messages is ignored: the module sees the token principal', async () => {
    const op = await d.token('operator', 'alice');
    const res = await d.call('POST', '/v1/messages', {
      token: op,
      body: { target: 'fx.whoami', payload: {}, source: { kind: 'system', id: 'root', roles: ['admin'] } },
    });
    expect(res.status).toBe(200);
    expect(res.json.result.source).toEqual({ kind: 'human', id: 'alice', roles: ['operator'] });
    expect(res.json.result.request_id).toBe(res.json.request_id);
  });

  it('/v1/messages honours caller ids and idempotency', async () => {
    const body = { target: 'fx.whoami', request_id: 'req-fixed-1', correlation_id: 'corr-1' };
    const a = await d.call('POST', '/v1/messages', { body });
    const b = await d.call('POST', '/v1/messages', { body });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ request_id: 'req-fixed-1', correlation_id: 'corr-1' });
    expect(b.json.result).toEqual(a.json.result);
    const conflict = await d.call('POST', '/v1/messages', { body: { ...body, target: 'echo' } });
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('E_CONFLICT');
  });

  it('caller ids that are not header-safe (CR/LF, non-Latin-1) are echoed percent-encoded, the call answers 200', async () => {
    const base = (await d.app.listen()).url;
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const correlation_id = 'corr\r\nset-cookie: x=1 ☃';
    const request_id = 'req-é-%-\u0000-hdr-1';
    const res = await post('/v1/messages', { target: 'echo', payload: { hi: 1 }, request_id, correlation_id });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      request_id,
      correlation_id,
      status: 'succeeded',
      target: 'echo.echo',
      result: { hi: 1 },
    });
    expect(res.headers.get('x-finger-correlation-id')).toBe('corr%0D%0Aset-cookie:%20x=1%20%E2%98%83');
    expect(res.headers.get('x-finger-request-id')).toBe('req-%C3%A9-%25-%00-hdr-1');
    expect(decodeURIComponent(res.headers.get('x-finger-correlation-id')!)).toBe(correlation_id);
    expect(res.headers.get('set-cookie')).toBeNull();
    // the same on the other routes that echo a caller's request_id
    const tool = await post('/v1/tools/echo/run', { args: { a: 1 }, request_id: 'tool-☃-hdr-2' });
    expect(tool.status).toBe(200);
    expect(((await tool.json()) as { request_id: string }).request_id).toBe('tool-☃-hdr-2');
    expect(tool.headers.get('x-finger-request-id')).toBe('tool-%E2%98%83-hdr-2');
    // an id that is already header-safe is echoed as is
    const plain = await post('/v1/messages', { target: 'echo', request_id: 'plain-hdr-3', correlation_id: 'c-3' });
    expect(plain.headers.get('x-finger-request-id')).toBe('plain-hdr-3');
    expect(plain.headers.get('x-finger-correlation-id')).toBe('c-3');
  });

  it('validation errors → 400 E_INVALID_ARGS listing every issue', async () => {
    const res = await d.call('POST', '/v1/messages', { body: { blocking: 'often', timeout_ms: -1, extra: 1 } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('E_INVALID_ARGS');
    const paths = res.json.error.details.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['body.blocking', 'body.extra', 'body.target', 'body.timeout_ms']);
    const q = await d.call('GET', '/v1/events?limit=0&type=NOPE');
    expect(q.status).toBe(400);
    expect(q.json.error.details.issues).toEqual([{ path: 'querystring.limit', message: 'must be >= 1' }]);
    const t = await d.call('GET', '/v1/events?type=NOPE');
    expect(t.status).toBe(400);
    expect(t.json.error.details.issues).toEqual([{ path: 'querystring.type', message: 'unknown event type "NOPE"' }]);
    const bad = await d.app.fastify.inject({
      method: 'POST',
      url: '/v1/input',
      headers: { authorization: `Bearer ${d.admin}`, 'content-type': 'application/json' },
      payload: '{"text":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('E_INVALID_ARGS');
  });

  it('GET /v1/requests/:id for an unknown id → 404', async () => {
    const res = await d.call('GET', '/v1/requests/01UNKNOWN');
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('E_NOT_FOUND');
    expect((await d.call('GET', '/v1/requests/01UNKNOWN/events')).status).toBe(404);
  });

  it('modules: list, register inline and by path, invalid manifest, conflict, health, unregister', async () => {
    const list = await d.call('GET', '/v1/modules');
    expect(list.json.modules.map((m: { id: string }) => m.id).sort()).toEqual(['echo', 'fx', 'supervisor']);

    const modDir = join(d.home, 'fixture-modules', 'echo');
    const inline = await d.call('POST', '/v1/modules', {
      body: { manifest: manifest('echo2', ['echo']), base_dir: modDir },
    });
    expect(inline.status).toBe(201);
    expect(inline.json.module).toMatchObject({ id: 'echo2', source: 'dynamic', healthy: true, base_dir: modDir });
    const call = await d.call('POST', '/v1/messages', { body: { target: 'echo2', payload: { n: 2 } } });
    expect(call.json.result).toEqual({ n: 2 });

    const dup = await d.call('POST', '/v1/modules', { body: { path: join(modDir, 'module.json') } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe('E_CONFLICT');

    const invalid = await d.call('POST', '/v1/modules', { body: { manifest: { id: 'Bad Id', name: 'x' } } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.code).toBe('E_INVALID_MANIFEST');
    expect(invalid.json.error.details.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '$.id' }),
        { path: '$.version', message: 'is required' },
      ]),
    );

    expect((await d.call('POST', '/v1/modules', { body: {} })).json.error.code).toBe('E_INVALID_ARGS');
    expect((await d.call('POST', '/v1/modules', { body: { path: 'relative/module.json' } })).json.error.code).toBe(
      'E_INVALID_ARGS',
    );

    const health = await d.call('GET', '/v1/modules/echo2/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({
      id: 'echo2',
      healthy: true,
      checked_at: expect.any(String),
      consecutive_failures: 0,
    });
    expect((await d.call('GET', '/v1/modules/ghost/health')).status).toBe(404);

    const del = await d.call('DELETE', '/v1/modules/echo2');
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ id: 'echo2', unregistered: true });
    expect((await d.call('DELETE', '/v1/modules/echo2')).status).toBe(404);
    expect((await d.call('POST', '/v1/messages', { body: { target: 'echo2' } })).json.error.code).toBe('E_NO_TARGET');
  });

  it('tokens: create (201, plaintext once), list (no secrets), conflict, bad role, revoke', async () => {
    const created = await d.call('POST', '/v1/tokens', { body: { name: 'ops-1', role: 'operator' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ name: 'ops-1', role: 'operator', token: expect.stringMatching(/^fgr_/) });
    const list = await d.call('GET', '/v1/tokens');
    expect(list.body).not.toContain(created.json.token);
    expect(list.json.tokens).toEqual(
      expect.arrayContaining([{ name: 'ops-1', role: 'operator', created_at: expect.any(String) }]),
    );
    expect((await d.call('POST', '/v1/tokens', { body: { name: 'ops-1', role: 'viewer' } })).status).toBe(409);
    const badRole = await d.call('POST', '/v1/tokens', { body: { name: 'x', role: 'root' } });
    expect(badRole.status).toBe(400);
    expect(badRole.json.error.code).toBe('E_INVALID_ARGS');
    expect((await d.call('GET', '/v1/modules', { token: created.json.token })).status).toBe(200);
    expect((await d.call('DELETE', '/v1/tokens/ops-1')).json).toEqual({ name: 'ops-1', revoked: true });
    expect((await d.call('GET', '/v1/modules', { token: created.json.token })).status).toBe(401);
    expect((await d.call('DELETE', '/v1/tokens/ops-1')).status).toBe(404);
    expect((await d.call('DELETE', '/v1/tokens/admin')).status).toBe(403);
    const disk = await readFile(join(d.home, 'tokens.json'), 'utf8');
    expect(disk).not.toContain(d.admin);
  });

  it('/metrics has hub counters, event and http counters', async () => {
    const viewer = await d.token('viewer');
    const res = await d.call('GET', '/metrics', { token: viewer });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/^# TYPE finger_hub_calls_total counter$/m);
    expect(res.body).toMatch(/^finger_hub_calls_total [1-9]\d*$/m);
    expect(res.body).toMatch(/^finger_hub_calls_failed_total \d+$/m);
    expect(res.body).toMatch(/^finger_hub_modules 3$/m);
    expect(res.body).toMatch(/^finger_events_emitted_total \d+$/m);
    expect(res.body).toMatch(/^finger_http_requests_total\{method="POST",route="\/v1\/input",status="200"\} \d+$/m);
    expect(res.body).toMatch(/^finger_process_resident_memory_bytes \d+$/m);
  });

  it('/docs/json is an OpenAPI document with the routes and bearer security', async () => {
    const res = await d.call('GET', '/docs/json');
    expect(res.status).toBe(200);
    expect(res.json.openapi).toMatch(/^3\./);
    expect(Object.keys(res.json.paths)).toEqual(
      expect.arrayContaining([
        '/v1/health',
        '/v1/input',
        '/v1/messages',
        '/v1/requests/{id}',
        '/v1/modules',
        '/v1/tokens',
        '/metrics',
      ]),
    );
    expect(res.json.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer' },
      session: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'finger_session' }),
    });
    expect(res.json.paths['/v1/messages'].post.requestBody.content['application/json'].schema.required).toEqual([
      'target',
    ]);
    const ui = await d.call('GET', '/docs/');
    expect(ui.status).toBe(200);
  });

  it('writes events to FINGER_HOME/events', async () => {
    await d.app.events.flush();
    const files = await readdir(join(d.home, 'events'));
    expect(files.some((f) => f.endsWith('.jsonl'))).toBe(true);
  });
});

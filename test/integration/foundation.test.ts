import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const FIXTURES = fileURLToPath(new URL('../fixtures/modules/', import.meta.url));
const PYWORKER = fileURLToPath(new URL('../../modules/pyworker/', import.meta.url));

let d: TestDaemon;

beforeAll(async () => {
  d = await startTestDaemon({ config: { modules: { paths: [FIXTURES], builtin: true } } });
});
afterAll(async () => {
  await d?.close();
});

const input = (text: string, token?: string) => d.http('POST', '/v1/input', { text }, token);

function waitRecord(id: string): Promise<any> {
  return waitFor(
    `request ${id} to finish`,
    async () => {
      const r = await d.http('GET', `/v1/requests/${id}`);
      return r.status === 200 && r.body.status !== 'running' ? r.body : undefined;
    },
    10_000,
    25,
  );
}

describe('foundation: daemon + hub over real HTTP, WebSocket and child processes', () => {
  it('starts with echo, pyworker and the fixtures registered', async () => {
    const r = await d.http('GET', '/v1/modules');
    expect(r.status).toBe(200);
    const ids = r.body.modules.map((m: { id: string }) => m.id).sort();
    expect(ids).toEqual([
      'counter',
      'echo',
      'fs',
      'grandchild', // test/fixtures/modules/grandchild (sandbox tree-kill tests)
      'nester',
      'ping',
      'pyworker',
      'remote-probe', // test/fixtures/modules/remote-probe (NATS tests)
      'scratchpad',
      'shell',
      'supervisor', // the ingress supervisor agent
      'web',
      'whoami',
    ]);
  });

  it('echoes a blocking /hub dispatch', async () => {
    const r = await input('/hub target=echo blocking=true {"text":"hi"}');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'succeeded', target: 'echo.echo', result: { text: 'hi' } });
  });

  it('keeps the result of a non-blocking dispatch for GET /v1/requests/:id', async () => {
    const r = await input('/hub target=echo blocking=false {"text":"later"}');
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('running');
    const rec = await waitRecord(r.body.request_id);
    expect(rec).toMatchObject({ request_id: r.body.request_id, status: 'succeeded', result: { text: 'later' } });
  });

  it('shows a WebSocket subscriber the whole path with one correlation_id, and replays it', async () => {
    const ws = await d.events();
    try {
      await ws.subscribe({ types: ['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT'] });
      const r = await input('/hub target=echo {"text":"trace me"}');
      expect(r.status).toBe(200);
      const mine = () =>
        ws.messages.filter((m) => m.type === 'event' && m.event.correlation_id === r.body.correlation_id);
      await ws.waitFor(() => mine().length >= 4, 'four events');
      expect(mine().map((m) => m.event.type)).toEqual([
        'INPUT_RECEIVED',
        'MODE_PARSED',
        'DISPATCH_SENT',
        'DISPATCH_RESULT',
      ]);
      const replay = await d.http('GET', `/v1/requests/${r.body.request_id}/events`);
      expect(replay.status).toBe(200);
      const types = replay.body.events.map((e: { type: string }) => e.type);
      expect(types).toEqual(['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT']);
      expect(new Set(replay.body.events.map((e: { correlation_id: string }) => e.correlation_id))).toEqual(
        new Set([r.body.correlation_id]),
      );
    } finally {
      await ws.close();
    }
  });

  it('refuses depth 5 with E_NESTING_DEPTH', async () => {
    const r = await input('/hub target=nester.d1 {}');
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('E_NESTING_DEPTH');
    expect(r.body.error.details.execution_chain).toEqual([
      'nester.d1',
      'nester.d2',
      'nester.d3',
      'nester.d4',
      'nester.d5',
    ]);
    const ok = await input('/hub target=nester.d2 {}');
    expect(ok.body).toMatchObject({ status: 'succeeded', result: { reached: 6 } });
  });

  it('refuses A → B → A with E_CALL_CYCLE', async () => {
    const r = await input('/hub target=ping.a {}');
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({
      code: 'E_CALL_CYCLE',
      details: { target: 'ping.a', execution_chain: ['ping.a', 'ping.b'] },
    });
  });

  it('answers bad /hub syntax with E_BAD_HUB_SYNTAX and the position', async () => {
    const r = await input('/hub target=echo blocking=perhaps {}');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 26, expected: 'true or false' },
    });
    const r2 = await input('/hub target=echo {"text": }');
    expect(r2.body.error).toMatchObject({ code: 'E_BAD_HUB_SYNTAX', details: { position: 26 } });
  });

  it('refuses a manifest with three errors, listing all three, and registers nothing', async () => {
    const manifest = {
      id: 'Three Errors',
      name: 'bad',
      version: 'v1',
      kind: 'tool',
      runtime: { type: 'stdio', command: ['python3', 'main.py'] },
      tools: [{ name: 'x', description: 'x', capability_level: 'L9' }],
    };
    const r = await d.http('POST', '/v1/modules', { manifest, base_dir: PYWORKER });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('E_INVALID_MANIFEST');
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual([
      '$.id',
      '$.version',
      '$.tools[0].capability_level',
    ]);
    const list = await d.http('GET', '/v1/modules');
    expect(list.body.modules).toHaveLength(13);
  });

  it('ignores a source forged in the body: the principal comes from the token', async () => {
    const r = await d.http('POST', '/v1/messages', {
      target: 'whoami',
      payload: {},
      source: { kind: 'system', id: 'root', roles: ['admin'] },
    });
    expect(r.status).toBe(200);
    expect(r.body.result.source).toEqual({ kind: 'human', id: 'admin', roles: ['admin'] });
  });

  it('refuses every route without a token with E_UNAUTHENTICATED (401)', async () => {
    const routes: [string, string][] = [
      ['POST', '/v1/input'],
      ['POST', '/v1/messages'],
      ['GET', '/v1/requests/x'],
      ['GET', '/v1/requests/x/events'],
      ['GET', '/v1/events'],
      ['GET', '/v1/modules'],
      ['POST', '/v1/modules'],
      ['DELETE', '/v1/modules/echo'],
      ['GET', '/v1/modules/echo/health'],
      ['GET', '/v1/tokens'],
      ['POST', '/v1/tokens'],
      ['DELETE', '/v1/tokens/x'],
      ['GET', '/metrics'],
      ['GET', '/docs/json'],
    ];
    for (const [method, path] of routes) {
      for (const token of [null, 'fgr_not-a-real-token']) {
        const r = await d.http(method, path, method === 'GET' || method === 'DELETE' ? undefined : {}, token);
        expect({ method, path, status: r.status, code: r.body?.error?.code }).toEqual({
          method,
          path,
          status: 401,
          code: 'E_UNAUTHENTICATED',
        });
      }
    }
    expect((await d.http('GET', '/v1/health', undefined, null)).status).toBe(200);
  });

  it('runs 100 concurrent requests with one request_id exactly once, all with the same reply', async () => {
    const before = (await d.http('POST', '/v1/messages', { target: 'counter.get', payload: {} })).body.result.runs;
    const replies = await Promise.all(
      Array.from({ length: 100 }, () =>
        d.http('POST', '/v1/messages', { target: 'counter.inc', payload: {}, request_id: 'once-only-1' }),
      ),
    );
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    const results = replies.map((r) => JSON.stringify(r.body.result));
    expect(new Set(results)).toEqual(new Set([JSON.stringify({ runs: before + 1 })]));
    const after = (await d.http('POST', '/v1/messages', { target: 'counter.get', payload: {} })).body.result.runs;
    expect(after).toBe(before + 1);
  });
});

describe('foundation: stdio module leases and crashes (real python3 child)', () => {
  it('expires a call that outlives its lease with E_LEASE_EXPIRED and releases what it held', async () => {
    const manifest = JSON.parse(await readFile(`${PYWORKER}module.json`, 'utf8'));
    manifest.id = 'pyshort';
    manifest.concurrency = 1;
    for (const t of manifest.tools) if (t.name === 'sleep') t.timeout_ms = 300;
    const reg = await d.http('POST', '/v1/modules', { manifest, base_dir: PYWORKER });
    expect(reg.status).toBe(201);
    try {
      const ws = await d.events();
      await ws.subscribe({ types: ['LEASE_EXPIRED'] });
      const r = await input('/hub target=pyshort.sleep {"ms": 20000}');
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe('E_LEASE_EXPIRED');
      await ws.waitFor((m) => m.some((x) => x.type === 'event' && x.event.target === 'pyshort.sleep'), 'LEASE_EXPIRED');
      await ws.close();
      // the concurrency slot held under the lease is free again: concurrency 1 serves the next call
      const mod = (await d.http('GET', '/v1/modules')).body.modules.find((m: { id: string }) => m.id === 'pyshort');
      expect(mod.inflight).toBe(0);
      const next = await input('/hub target=pyshort.echo {"after":"expiry"}');
      expect(next.body).toMatchObject({ status: 'succeeded', result: { after: 'expiry' } });
    } finally {
      await d.http('DELETE', '/v1/modules/pyshort');
    }
  });

  it('fails calls in flight when the module dies with E_MODULE_CRASHED, then restarts and serves again', async () => {
    const r = await input('/hub target=pyworker.crash {}');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('E_MODULE_CRASHED');
    const again = await input('/hub target=pyworker.echo {"alive":true}');
    expect(again.body).toMatchObject({ status: 'succeeded', result: { alive: true } });
  });
});

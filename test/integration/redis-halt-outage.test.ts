// The kill switch while Redis is down: two daemons share a private redis-server that the test
// kills. A halt on A still works and says so, health says "degraded" (not an error), and once
// Redis is back (empty: no persistence) the halt A made meanwhile reaches B; an unlock on B then
// unlocks A.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { redisServerBinary, RedisServerChild, type TempDir, tempDir, testClusterName } from '@finger/testkit';

import { until } from './redis-helpers.js';

const COUNTER = fileURLToPath(new URL('../fixtures/modules/counter/module.json', import.meta.url));
const bin = redisServerBinary();
if (bin === undefined) {
  const msg = 'redis-server binary not found: the halt-during-outage test cannot run';
  if (process.env.FINGER_REQUIRE_SERVICES === '1') throw new Error(`FINGER_REQUIRE_SERVICES=1 but ${msg}`);
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPED: ${msg}\n${'!'.repeat(78)}\n`);
}

interface Daemon {
  url: string;
  token: string;
}

describe.skipIf(!bin)('a halt while Redis is down (own redis-server)', () => {
  let server: RedisServerChild;
  const homes: TempDir[] = [];
  const apps: FingerApp[] = [];
  const daemons: Daemon[] = [];

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    const cluster = testClusterName('halt');
    for (let i = 0; i < 2; i++) {
      const home = await tempDir(`finger-halt-${i}-`);
      homes.push(home);
      const app = await build({
        home: home.path,
        env: {},
        config: {
          server: { host: '127.0.0.1', port: 0 },
          log: { level: 'silent' },
          modules: { builtin: false, paths: [COUNTER] },
          redis: { url: server.url },
          cluster,
        },
      });
      apps.push(app);
      const { url } = await app.listen();
      daemons.push({ url, token: (await readFile(join(home.path, 'token'), 'utf8')).trim() });
    }
  });
  afterAll(async () => {
    await server?.restart();
    for (const a of apps) await a.close();
    for (const h of homes) await h.remove();
    await server?.stop();
  });

  async function req(d: Daemon, method: string, path: string, body?: unknown) {
    const res = await fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  const call = (d: Daemon) => req(d, 'POST', '/v1/messages', { target: 'counter.get', payload: {} });

  it('halts A, reports degraded health, and reaches B once Redis is back; unlock on B unlocks A', async () => {
    const [a, b] = daemons as [Daemon, Daemon];
    expect((await call(b)).status).toBe(200);
    await server.stop();

    const health = await req(a, 'GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', redis: { connected: false }, safety: { state: 'open' } });

    const halted = await req(a, 'POST', '/v1/halt', { reason: 'outage halt' });
    expect(halted).toMatchObject({ status: 200, body: { phase: 'graceful', state: 'locked' } });
    expect((await call(a)).body.error.code).toBe('E_SAFETY_LOCKOUT');
    const during = await req(a, 'GET', '/v1/health');
    expect(during.body.safety).toMatchObject({ state: 'locked', locked: true });
    expect(during.body.safety.store_error).toMatch(/E_STORE_UNAVAILABLE|redis/);

    await server.restart(); // empty: only A knows of the halt, and writes it when it reconnects
    let refused: string | undefined;
    await until(
      async () => {
        const r = await call(b);
        refused = r.body.error?.code;
        return r.status !== 200;
      },
      'B to be halted by the halt A made during the outage',
      15_000,
    );
    expect(refused).toBe('E_SAFETY_LOCKOUT');

    let unlocked: { status: number; body: Record<string, any> } | undefined;
    await until(
      async () => {
        unlocked = await req(b, 'POST', '/v1/unlock', {});
        return unlocked.status === 200;
      },
      'the unlock on B',
      15_000,
    );
    expect(unlocked?.body).toMatchObject({ unlocked: true });
    await until(async () => (await call(a)).status === 200, 'A to be unlocked by B', 15_000);
  });
});

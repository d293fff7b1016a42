// The kill switch while Redis is down: two daemons share a private redis-server that the test
// kills. A halt on A still works and says so, health says "degraded" (not an error), and once
// Redis is back (empty: no persistence) the halt A made meanwhile reaches B; an unlock on B then
// unlocks A.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { binaryForTests, redisServerBinary, RedisServerChild } from '@finger/testkit';

import { httpCall as req, type RedisTestDaemon as Daemon, startRedisDaemons, until } from './redis-helpers.js';

const bin = binaryForTests(redisServerBinary(), 'the halt-during-outage test', 'no redis-server binary on the PATH');

describe.skipIf(!bin)('a halt while Redis is down (own redis-server)', () => {
  let server: RedisServerChild;
  let cluster: Awaited<ReturnType<typeof startRedisDaemons>> | undefined;
  let daemons: Daemon[] = [];

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    cluster = await startRedisDaemons(2, server.url, 'halt');
    daemons = cluster.daemons;
  });
  afterAll(async () => {
    await server?.restart();
    await cluster?.close();
    await server?.stop();
  });

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
    // an unlock cannot reach the cluster now: refused, and the halt still goes out when Redis is back
    const refused = await req(a, 'POST', '/v1/unlock', {});
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('E_STORE_UNAVAILABLE');
    const during = await req(a, 'GET', '/v1/health');
    expect(during.body.safety).toMatchObject({ state: 'locked', locked: true });
    expect(during.body.safety.store_error).toMatch(/E_STORE_UNAVAILABLE|redis/);

    await server.restart(); // empty: only A knows of the halt, and writes it when it reconnects
    // polled through health, not calls: the firewall's behaviour layer holds a burst of identical calls
    const state = async (d: Daemon) => (await req(d, 'GET', '/v1/health')).body.safety.state as string;
    await until(
      async () => (await state(b)) === 'locked',
      'B to be halted by the halt A made during the outage',
      15_000,
    );
    expect((await call(b)).body.error.code).toBe('E_SAFETY_LOCKOUT');

    const unlocked = await req(b, 'POST', '/v1/unlock', {});
    expect(unlocked).toMatchObject({ status: 200, body: { unlocked: true } });
    await until(async () => (await state(a)) === 'open', 'A to be unlocked by B', 15_000);
    expect((await call(a)).status).toBe(200);
  });
});

// The daemon's Redis wiring through an outage of its own redis-server: DEGRADED both ways,
// health follows, and the daemon never stops for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LocalEventBus, silentLogger } from '@finger/hub';
import type { FingerEvent } from '@finger/protocol';
import { redisServerBinary, RedisServerChild, testRedisPrefix } from '@finger/testkit';

import { type RedisWiring, wireRedis } from '../../packages/daemon/src/distributed/redis-wiring.js';
import { until } from './redis-helpers.js';

const bin = redisServerBinary();
if (bin === undefined && process.env.FINGER_REQUIRE_SERVICES === '1')
  throw new Error('FINGER_REQUIRE_SERVICES=1 but no redis-server binary for the outage test');

describe.skipIf(!bin)('wireRedis through a Redis outage (own redis-server)', () => {
  let server: RedisServerChild;
  let wiring: RedisWiring;
  const events = new LocalEventBus({});
  const degraded: FingerEvent[] = [];

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    events.subscribe({ types: ['DEGRADED'] }, (e) => void degraded.push(e));
    wiring = await wireRedis({
      url: server.url,
      cluster: 'c1',
      prefix: testRedisPrefix(),
      logger: silentLogger,
      events,
    });
  });
  afterAll(async () => {
    await wiring?.close();
    await server?.stop();
    await events.close();
  });

  it('emits DEGRADED when Redis is lost and again when it is back; health follows', async () => {
    expect(wiring.health()).toMatchObject({ connected: true, held_outcomes: 0 });
    expect(degraded).toEqual([]);
    await server.stop();
    await until(() => degraded.length === 1, 'DEGRADED (lost)');
    expect(degraded[0]!.data).toMatchObject({ component: 'redis', degraded: true });
    expect(wiring.health()).toMatchObject({ connected: false, last_error: expect.any(String) });
    await expect(wiring.leases.acquire('k', 'me', 1000)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await server.restart();
    await until(() => degraded.length === 2, 'DEGRADED (back)', 5000);
    expect(degraded[1]!.data).toMatchObject({ component: 'redis', degraded: false });
    expect(wiring.health().connected).toBe(true);
    expect(await wiring.leases.acquire('k', 'me', 1000)).toBe(true);
  });

  it('writes a lockout set while Redis was down (a local halt) to the cluster once Redis is back', async () => {
    const store = await wiring.safetyStore();
    const heard: unknown[] = [];
    store.subscribe((c) => heard.push(c));
    const lockout = { cause: 'halt' as const, reason: 'test', by: 'human:root', at: '2026-11-22T00:00:00Z' };
    await server.stop();
    await until(() => !wiring.health().connected, 'the connection to drop');
    await expect(store.setLockout(lockout)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await server.restart(); // empty: the lockout exists only on this daemon
    await until(
      async () => {
        try {
          return (await store.getLockout()) !== undefined;
        } catch {
          return false;
        }
      },
      'the held lockout to reach Redis',
      5000,
    );
    expect(await store.getLockout()).toEqual(lockout);
    expect(heard).toEqual([]);
  });
});

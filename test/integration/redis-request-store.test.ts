// The Lua scripts of RedisRequestStore against a real redis-server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { RequestRecord } from '@finger/hub';
import { type RedisConnection, RedisRequestStore } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { redisForTest } from './redis-helpers.js';

const url = await redisUrlForTests();

const record = (id: string, target = 'm.t'): RequestRecord => ({
  request_id: id,
  correlation_id: id,
  target,
  status: 'running',
  created_at: '2026-11-22T00:00:00Z',
});

describe.skipIf(!url)('RedisRequestStore scripts (real redis-server)', () => {
  let t: ReturnType<typeof redisForTest>;
  let c1: RedisConnection;
  let a: RedisRequestStore;
  let b: RedisRequestStore;
  beforeEach(async () => {
    t = redisForTest(url!);
    c1 = t.connect();
    const c2 = t.connect();
    expect(await c1.ready(5000)).toBe(true);
    expect(await c2.ready(5000)).toBe(true);
    a = new RedisRequestStore(c1, { running_ttl_ms: 60_000 });
    b = new RedisRequestStore(c2);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await t.cleanup();
  });

  it('creates a record once: the second begin gets the first record back', async () => {
    expect(await a.begin(record('r1'))).toBeUndefined();
    expect(await b.begin(record('r1', 'other.tool'))).toEqual(record('r1'));
    const ttl = await c1.client.pttl(`${t.prefix}req:r1`);
    expect(ttl).toBeGreaterThan(50_000);
  });

  it('finishes only the record it began, keeps it for keep_ms, and wakes waiters elsewhere', async () => {
    expect(await a.begin(record('r2'))).toBeUndefined();
    const waiting = b.awaitOutcome(record('r2'), Date.now() + 10_000);
    await b.finish('r2', { ok: true, result: 1 }, '2026-11-22T00:00:01Z', 5000); // b did not begin it: no-op
    expect((await a.get('r2'))?.status).toBe('running');
    await a.finish('r2', { ok: true, result: { n: 1 } }, '2026-11-22T00:00:01Z', 5000);
    expect(await waiting).toEqual({
      ...record('r2'),
      status: 'succeeded',
      finished_at: '2026-11-22T00:00:01Z',
      result: { n: 1 },
    });
    const ttl = await c1.client.pttl(`${t.prefix}req:r2`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5000);
  });

  it('never overwrites a record another daemon created after this one vanished', async () => {
    expect(await a.begin(record('r3'))).toBeUndefined();
    await c1.client.del(`${t.prefix}req:r3`); // expired (running_ttl_ms passed)
    expect(await b.begin(record('r3'))).toBeUndefined(); // b runs it anew
    await a.finish('r3', { ok: false, error: { code: 'E_TIMEOUT', message: 'late' } }, '2026-11-22T00:00:02Z', 5000);
    expect((await b.get('r3'))?.status).toBe('running');
  });

  it('forgets only its own running record, and a waiter elsewhere then takes the id over', async () => {
    expect(await a.begin(record('r4'))).toBeUndefined();
    const waiting = b.awaitOutcome(record('r4'), Date.now() + 10_000);
    await b.forget('r4'); // not b's: nothing happens
    expect((await a.get('r4'))?.status).toBe('running');
    await a.forget('r4');
    expect(await waiting).toBeUndefined(); // b created it anew and must run the call itself
    expect((await a.get('r4'))?.status).toBe('running');
  });

  it('fails a waiter with E_TIMEOUT at its deadline', async () => {
    expect(await a.begin(record('r5'))).toBeUndefined();
    await expect(b.awaitOutcome(record('r5'), Date.now() + 50)).rejects.toMatchObject({ code: 'E_TIMEOUT' });
  });

  it('bounds the callers waiting at once (E_OVERLOADED)', async () => {
    const small = new RedisRequestStore(c1, { max_waiters: 1 });
    expect(await a.begin(record('r6'))).toBeUndefined();
    const first = small.awaitOutcome(record('r6'), Date.now() + 200);
    await expect(small.awaitOutcome(record('r6'), Date.now() + 200)).rejects.toMatchObject({ code: 'E_OVERLOADED' });
    await expect(first).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    await small.close();
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type RedisConnection, RedisLeaseStore } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { redisForTest, until } from './redis-helpers.js';

const url = await redisUrlForTests();

describe.skipIf(!url)('RedisLeaseStore (real redis-server)', () => {
  let t: ReturnType<typeof redisForTest>;
  let a: RedisLeaseStore;
  let b: RedisLeaseStore;
  let conn: RedisConnection;
  beforeEach(async () => {
    t = redisForTest(url!);
    conn = t.connect();
    a = new RedisLeaseStore(conn);
    const other = t.connect();
    b = new RedisLeaseStore(other);
    expect(await conn.ready(5000)).toBe(true);
    expect(await other.ready(5000)).toBe(true);
  });
  afterEach(async () => t.cleanup());

  it('acquires with SET NX: one holder across two connections', async () => {
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).acquire('job', `h${i}`, 5000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    const holder = await b.holder('job');
    expect(holder).toBe(`h${wins.indexOf(true)}`);
    expect(await conn.client.get(`${t.prefix}lease:job`)).toBe(holder);
  });

  it('extends only for the holder (Lua compare-and-pexpire)', async () => {
    expect(await a.acquire('k', 'me', 1000)).toBe(true);
    expect(await b.extend('k', 'other', 60_000)).toBe(false);
    const before = await conn.client.pttl(`${t.prefix}lease:k`);
    expect(before).toBeLessThanOrEqual(1000);
    expect(await b.extend('k', 'me', 60_000)).toBe(true);
    expect(await conn.client.pttl(`${t.prefix}lease:k`)).toBeGreaterThan(1000);
    expect(await a.extend('missing', 'me', 1000)).toBe(false);
  });

  it('releases only for the holder (Lua check-and-delete)', async () => {
    expect(await a.acquire('k', 'me', 60_000)).toBe(true);
    expect(await b.release('k', 'other')).toBe(false);
    expect(await b.holder('k')).toBe('me');
    expect(await b.release('k', 'me')).toBe(true);
    expect(await b.holder('k')).toBeUndefined();
    expect(await a.release('k', 'me')).toBe(false);
    expect(await b.acquire('k', 'next', 60_000)).toBe(true);
  });

  it('expires a lease whose holder went away; a late holder can neither extend nor release', async () => {
    expect(await a.acquire('k', 'gone', 50)).toBe(true);
    await until(async () => (await b.holder('k')) === undefined, 'lease expiry');
    expect(await a.extend('k', 'gone', 1000)).toBe(false);
    expect(await b.acquire('k', 'new', 60_000)).toBe(true);
    expect(await a.release('k', 'gone')).toBe(false);
    expect(await a.holder('k')).toBe('new');
  });
});

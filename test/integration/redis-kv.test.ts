import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { RedisAuditMirror, type RedisConnection, RedisKv } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { redisForTest, until } from './redis-helpers.js';

const url = await redisUrlForTests();

describe.skipIf(!url)('RedisKv and RedisAuditMirror (real redis-server)', () => {
  let t: ReturnType<typeof redisForTest>;
  let c1: RedisConnection;
  let c2: RedisConnection;
  beforeEach(async () => {
    t = redisForTest(url!);
    c1 = t.connect();
    c2 = t.connect();
    expect(await c1.ready(5000)).toBe(true);
    expect(await c2.ready(5000)).toBe(true);
  });
  afterEach(async () => t.cleanup());

  it('writes JSON documents with their change notice in one step; other stores hear it, the writer does not', async () => {
    const k1 = new RedisKv(c1, 'doc');
    const k2 = new RedisKv(c2, 'doc');
    const heard1: unknown[] = [];
    const heard2: unknown[] = [];
    await k1.subscribe((c) => heard1.push(c));
    await k2.subscribe((c) => heard2.push(c));
    await k1.setJson('policy', { rules: [1, 2] }, { type: 'changed', v: 1 });
    await until(() => heard2.length === 1, 'store 2 to hear the change', 2000);
    expect(heard2).toEqual([{ type: 'changed', v: 1 }]);
    expect(await k2.getJson('policy')).toEqual({ rules: [1, 2] });
    expect(await k2.del('policy', { type: 'deleted' })).toBe(true);
    await until(() => heard1.length === 1, 'store 1 to hear the delete', 2000);
    expect(heard1).toEqual([{ type: 'deleted' }]);
    expect(await k1.getJson('policy')).toBeUndefined();
    expect(await k1.del('policy')).toBe(false);
    await k1.close();
    await k2.close();
  });

  it('keeps a hash of JSON fields; hdel returns the old value and notifies only when it existed', async () => {
    const k1 = new RedisKv(c1, 'h');
    const k2 = new RedisKv(c2, 'h');
    const heard: unknown[] = [];
    await k2.subscribe((c) => heard.push(c));
    await k1.hsetJson('approvals', 's1', { tool: 'fs.write' }, { type: 'set' });
    expect(await k2.hgetAllJson('approvals')).toEqual({ s1: { tool: 'fs.write' } });
    expect(await k1.hdelJson('approvals', 'nope', { type: 'del' })).toBeUndefined();
    expect(await k1.hdelJson('approvals', 's1', { type: 'del' })).toEqual({ tool: 'fs.write' });
    await until(() => heard.length === 2, 'two notices', 2000);
    expect(heard).toEqual([{ type: 'set' }, { type: 'del' }]);
    expect(await k1.incrBy('n', 1.5)).toBe(1.5);
    expect(await k2.incrBy('n', 2)).toBe(3.5);
    await k1.close();
    await k2.close();
  });

  it('mirrors audit entries to a capped stream under the cluster prefix, naming the node', async () => {
    const m = new RedisAuditMirror(c1, 'node-a', { max_len: 10 });
    for (let seq = 1; seq <= 25; seq++) m.push({ seq, ts: '2026-11-22T00:00:00Z' });
    await m.drain();
    expect(m.stats()).toEqual({ mirrored: 25, dropped: 0, failed_batches: 0, queued: 0 });
    const rows = await c2.client.xrange(`${t.prefix}audit`, '-', '+');
    // MAXLEN ~ trims whole nodes: at least the cap is kept, never more than written
    expect(rows.length).toBeGreaterThanOrEqual(10);
    expect(rows.length).toBeLessThanOrEqual(25);
    const last = rows[rows.length - 1]![1];
    expect(last).toEqual(['node', 'node-a', 'entry', JSON.stringify({ seq: 25, ts: '2026-11-22T00:00:00Z' })]);
    await m.close();
  });

  it('bounds the mirror queue while Redis cannot be reached (oldest dropped, counted)', async () => {
    const m = new RedisAuditMirror(c1, 'node-a', { max_queue: 3 });
    await c1.close(); // every write now fails with E_STORE_UNAVAILABLE
    for (let seq = 1; seq <= 5; seq++) m.push({ seq });
    await m.drain();
    expect(m.stats()).toMatchObject({ mirrored: 0, dropped: 2, queued: 3 });
    expect(m.stats().failed_batches).toBeGreaterThanOrEqual(1);
    await m.close();
  });
});

import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MessageHub } from '@finger/hub';
import { RedisRequestStore } from '@finger/hub/redis';
import type { Principal } from '@finger/protocol';
import { redisUrlForTests, waitUntil } from '@finger/testkit';

import { redisForTest } from './redis-helpers.js';

const url = await redisUrlForTests();
const COUNTER = fileURLToPath(new URL('../fixtures/modules/counter/module.json', import.meta.url));
const human: Principal = { kind: 'human', id: 'tester', roles: ['operator'] };

describe.skipIf(!url)('RedisRequestStore: one execution per request_id across daemons (real redis-server)', () => {
  let t: ReturnType<typeof redisForTest>;
  let hubs: MessageHub[];
  let stores: RedisRequestStore[];

  beforeEach(async () => {
    t = redisForTest(url!);
    hubs = [];
    stores = [];
    for (let i = 0; i < 2; i++) {
      const conn = t.connect();
      expect(await conn.ready(5000)).toBe(true);
      const requests = new RedisRequestStore(conn);
      stores.push(requests);
      const hub = new MessageHub({ requests });
      await hub.registry.loadFile(COUNTER);
      hubs.push(hub);
    }
  });
  afterEach(async () => {
    await Promise.all(hubs.map((h) => h.close(100)));
    await t.cleanup();
  });

  const runs = async () =>
    ((await hubs[0]!.request({ target: 'counter.get', payload: {}, source: human })) as { runs: number }).runs;

  it('runs 100 concurrent calls with one request_id, spread over two hubs, exactly once', async () => {
    const before = await runs();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        hubs[i % 2]!.request({ target: 'counter.inc', payload: {}, source: human, request_id: 'once-1' }),
      ),
    );
    expect(new Set(results.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ runs: before + 1 })]));
    expect(await runs()).toBe(before + 1);
    // both hubs saw the id: one ran it, the other only joined or was answered from the store
    const s = hubs.map((h) => h.stats());
    expect(s[0]!.idempotent_hits + s[1]!.idempotent_hits).toBeGreaterThanOrEqual(1);
    const rec = await stores[1]!.get('once-1');
    expect(rec).toMatchObject({
      request_id: 'once-1',
      target: 'counter.inc',
      status: 'succeeded',
      result: { runs: before + 1 },
    });
    // a late duplicate on either hub gets the stored outcome, without running again
    expect(await hubs[1]!.request({ target: 'counter.inc', payload: {}, source: human, request_id: 'once-1' })).toEqual(
      {
        runs: before + 1,
      },
    );
    expect(await runs()).toBe(before + 1);
  });

  it('refuses the same request_id for another target with E_CONFLICT', async () => {
    await hubs[0]!.request({ target: 'counter.inc', payload: {}, source: human, request_id: 'once-2' });
    await expect(
      hubs[1]!.request({ target: 'counter.get', payload: {}, source: human, request_id: 'once-2' }),
    ).rejects.toMatchObject({ code: 'E_CONFLICT' });
  });

  it('lets a refused request_id run later: a pre-dispatch refusal is forgotten on the shared store', async () => {
    await expect(
      hubs[0]!.request({ target: 'counter.nope', payload: {}, source: human, request_id: 'once-3' }),
    ).rejects.toMatchObject({ code: 'E_NO_TARGET' });
    expect(await stores[1]!.get('once-3')).toBeUndefined();
  });

  it('keeps the stored outcome for the idempotency window only (key TTL in Redis)', async () => {
    const hub = new MessageHub({ requests: stores[0]!, limits: { idempotency_window_ms: 1500 } });
    hubs.push(hub);
    await hub.registry.loadFile(COUNTER);
    await hub.request({ target: 'counter.inc', payload: {}, source: human, request_id: 'once-4' });
    const conn = t.connect();
    await conn.ready(5000);
    const ttl = await conn.client.pttl(`${t.prefix}req:once-4`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1500);
  });

  it('fails a joiner whose deadline passes while the call runs elsewhere with E_TIMEOUT', async () => {
    const before = await runs();
    const first = hubs[0]!.request({ target: 'counter.inc', payload: {}, source: human, request_id: 'once-5' });
    // wait until hub 0 has created the record, then join from hub 1 with a deadline shorter than the call
    await waitUntil('hub 0 to create the record', async () => (await stores[1]!.get('once-5')) !== undefined, 5000, 2);
    const late = hubs[1]!.request({
      target: 'counter.inc',
      payload: {},
      source: human,
      request_id: 'once-5',
      timeout_ms: 1,
    });
    await expect(late).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(await first).toEqual({ runs: before + 1 });
    expect(await runs()).toBe(before + 1);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { emptyAgentBreakers, type SafetyChange, SafetyMonitor } from '@finger/firewall';
import { type RedisConnection, RedisKv } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { RedisSafetyStore } from '../../packages/daemon/src/distributed/redis-safety-store.js';
import { redisForTest, until } from './redis-helpers.js';

const url = await redisUrlForTests();
const admin = { kind: 'human', id: 'root', roles: ['admin'] };

describe.skipIf(!url)('RedisSafetyStore: budgets, lockouts, breakers shared by two daemons (real redis-server)', () => {
  let t: ReturnType<typeof redisForTest>;
  let a: RedisSafetyStore;
  let b: RedisSafetyStore;
  let connB: RedisConnection;
  const seenA: SafetyChange[] = [];
  const seenB: SafetyChange[] = [];

  beforeEach(async () => {
    t = redisForTest(url!);
    const stores: RedisSafetyStore[] = [];
    for (const seen of [seenA, seenB]) {
      seen.length = 0;
      const conn = t.connect();
      connB = conn; // the last one made: B's
      expect(await conn.ready(5000)).toBe(true);
      const s = await RedisSafetyStore.open(new RedisKv(conn, 'safety'));
      s.subscribe((c) => seen.push(c));
      stores.push(s);
    }
    [a, b] = stores as [RedisSafetyStore, RedisSafetyStore];
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await t.cleanup();
  });

  it('adds budget counters atomically under concurrency from both stores', async () => {
    const adds = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).incrBy('agent_tokens:x', i % 2 ? 3 : 7)),
    );
    expect(await a.getCounter('agent_tokens:x')).toBe(100 * 3 + 100 * 7);
    // every intermediate total was handed out once: no lost update
    expect(new Set(adds).size).toBe(200);
    expect(Math.max(...adds)).toBe(1000);
    expect(await b.incrBy('agent_tokens:x', 0)).toBe(1000);
    await b.deleteCounter('agent_tokens:x');
    expect(await a.getCounter('agent_tokens:x')).toBe(0);
    await expect(a.incrBy('k', Number.NaN)).rejects.toMatchObject({ code: 'E_INVALID_ARGS' });
  });

  it('makes a lockout set on A visible and notified on B, and a clear on B notified on A', async () => {
    const lockout = {
      agent_id: 'ag-1',
      cause: 'breaker' as const,
      breaker: 'denial' as const,
      reason: 'r',
      by: 'system',
      at: '2026-11-22T00:00:00Z',
    };
    await a.setLockout(lockout);
    expect(seenA).toEqual([{ type: 'lockout_set', lockout }]);
    await until(() => seenB.length === 1, 'B to hear the lockout', 1000);
    expect(seenB).toEqual([{ type: 'lockout_set', lockout }]);
    expect(await b.getLockout('ag-1')).toEqual(lockout);
    expect(await b.getLockout()).toBeUndefined();
    expect(await b.listLockouts()).toEqual([lockout]);

    expect(await b.clearLockout('ag-1', 'human:root')).toEqual(lockout);
    await until(() => seenA.length === 2, 'A to hear the clear', 1000);
    expect(seenA[1]).toEqual({ type: 'lockout_cleared', agent_id: 'ag-1', by: 'human:root' });
    expect(await a.getLockout('ag-1')).toBeUndefined();
    // clearing nothing tells nobody
    expect(await a.clearLockout('ag-1', 'human:root')).toBeUndefined();
    expect(seenB).toHaveLength(2);
  });

  it('shares breaker state and announces its changes', async () => {
    const st = { ...emptyAgentBreakers(), status: 'error_paused' as const };
    await a.setBreakers('ag-2', st);
    expect(await b.getBreakers('ag-2')).toEqual(st);
    expect(await b.listBreakers()).toEqual({ 'ag-2': st });
    await until(() => seenB.some((c) => c.type === 'breakers' && c.agent_id === 'ag-2'), 'B to hear breakers', 1000);
  });

  it('forgets an agent’s breakers on every daemon and says so', async () => {
    await a.setBreakers('ag-3', emptyAgentBreakers());
    await a.deleteBreakers('ag-3');
    expect(await b.getBreakers('ag-3')).toBeUndefined();
    expect(Object.keys(await b.listBreakers())).not.toContain('ag-3');
    await until(
      () => seenB.filter((c) => c.type === 'breakers' && c.agent_id === 'ag-3').length === 2,
      'B to hear both changes',
      1000,
    );
  });

  it('halts daemon B within 1 s of a halt on daemon A, and an unlock on B unlocks A', async () => {
    const ma = await SafetyMonitor.open({ store: a, config: { halt_grace_ms: 10 } });
    const mb = await SafetyMonitor.open({ store: b, config: { halt_grace_ms: 10 } });
    try {
      expect(mb.isLocked()).toBe(false);
      await ma.halt({ actor: admin, reason: 'test' });
      await until(() => mb.isLocked(), 'daemon B to lock', 1000);
      expect(() => mb.assertOpen('any-agent')).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^E_(HALTED|SAFETY_LOCKOUT)$/) }),
      );
      await until(async () => (await mb.state()).system === 'locked', 'B to finish its halt', 2000);
      expect(await mb.unlock({ actor: admin })).toMatchObject({ unlocked: true });
      await until(() => !ma.isLocked(), 'daemon A to unlock', 1000);
      expect(() => ma.assertOpen()).not.toThrow();
    } finally {
      ma.close();
      mb.close();
    }
  });

  it('re-reads the lockouts every period: a set or a clear whose notice was lost is seen within one', async () => {
    const lockout = { cause: 'halt' as const, reason: 'lost notice', by: 'human:root', at: '2026-11-26T00:00:00Z' };
    const conn = t.connect();
    await conn.ready(5000);
    // written on the server with no notice (a daemon that set it during an outage, heard by nobody)
    await conn.client.hset(`${t.prefix}safety:lockouts`, '', JSON.stringify(lockout));
    await until(() => seenB.some((c) => c.type === 'lockout_set'), 'B to re-read the lockouts', 10_000);
    expect(seenB.find((c) => c.type === 'lockout_set')).toEqual({ type: 'lockout_set', lockout });
    await conn.client.hdel(`${t.prefix}safety:lockouts`, '');
    await until(() => seenA.some((c) => c.type === 'lockout_cleared'), 'A to see the clear', 10_000);
    expect(seenA.filter((c) => c.type !== 'lockout_set')).toEqual([{ type: 'lockout_cleared', by: 'redis' }]);
  });

  it('tells a store that missed messages during an outage what changed (re-read on reconnect)', async () => {
    const lockout = { cause: 'manual' as const, reason: 'maintenance', by: 'human:root', at: '2026-11-22T00:00:00Z' };
    // a write on the server that B never heard of (as if published while B was disconnected)
    const conn = t.connect();
    await conn.ready(5000);
    await conn.client.hset(`${t.prefix}safety:lockouts`, '', JSON.stringify(lockout));
    // B's subscriber connection drops and comes back (messages of that gap are lost)
    connB.subscriber().disconnect(true);
    await until(() => seenB.some((c) => c.type === 'lockout_set'), 'B to re-read lockouts after reconnect', 5000);
    expect(seenB.find((c) => c.type === 'lockout_set')).toEqual({ type: 'lockout_set', lockout });
  });
});

// Two daemons built with the same `redis.url` and `cluster`: a request_id runs once across both,
// and both mirror their audit entries into the cluster's stream.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FingerApp } from '@finger/daemon';
import { redisUrlForTests, waitFor, waitUntil } from '@finger/testkit';

import { httpCall as req, type RedisTestDaemon, startRedisDaemons } from './redis-helpers.js';

const url = await redisUrlForTests();

describe.skipIf(!url)('daemons with redis.url share idempotency and mirror their audit (real redis-server)', () => {
  let started: Awaited<ReturnType<typeof startRedisDaemons>> | undefined;
  let daemons: RedisTestDaemon[] = [];
  let apps: FingerApp[] = [];
  let cluster = '';
  let raw: Redis;

  beforeAll(async () => {
    raw = new Redis(url!);
    started = await startRedisDaemons(2, url!, 'redis');
    ({ daemons, cluster, apps } = started);
  });
  afterAll(async () => {
    await started?.close();
    const keys = await raw.keys(`finger:${cluster}:*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
  });

  const post = (d: RedisTestDaemon, body: unknown) =>
    req<{ result?: { runs: number }; error?: { code: string } }>(d, 'POST', '/v1/messages', body);

  it('reports Redis in GET /v1/health: whole with a token, only `connected` without', async () => {
    const body = (await req<{ status: string; redis?: unknown }>(daemons[0]!, 'GET', '/v1/health')).body;
    expect(body.status).toBe('ok');
    expect(body.redis).toMatchObject({ connected: true, prefix: `finger:${cluster}:`, held_outcomes: 0 });
    const probe = (await (await fetch(`${daemons[0]!.url}/v1/health`)).json()) as { redis?: unknown };
    expect(probe.redis).toEqual({ connected: true });
  });

  it('runs 100 concurrent POST /v1/messages with one request_id over both daemons exactly once', async () => {
    const before = (await post(daemons[0]!, { target: 'counter.get', payload: {} })).body.result!.runs;
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        post(daemons[i % 2]!, { target: 'counter.inc', payload: {}, request_id: `rid-${cluster}` }),
      ),
    );
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(replies.map((r) => JSON.stringify(r.body.result)))).toEqual(
      new Set([JSON.stringify({ runs: before + 1 })]),
    );
    expect((await post(daemons[1]!, { target: 'counter.get', payload: {} })).body.result!.runs).toBe(before + 1);
    const rec = JSON.parse((await raw.get(`finger:${cluster}:req:rid-${cluster}`))!);
    expect(rec).toMatchObject({ status: 'succeeded', target: 'counter.inc', result: { runs: before + 1 } });
  });

  it('shares the UserPolicy: a rule added on one daemon is in force on the other', async () => {
    const rule = {
      id: 'no-curl',
      tool: 'shell.exec',
      match: { command: 'curl *' },
      level: 'DENY' as const,
      reason: 'r',
    };
    await apps[0]!.policy.addRule(rule, { actor: { kind: 'human', id: 'test' } });
    await waitUntil(
      'the second daemon to hold the same user policy',
      () => apps[1]!.policy.userDigest() === apps[0]!.policy.userDigest(),
      5000,
      20,
    );
    expect(apps[1]!.policy.show().user.rules).toEqual([rule]);
  });

  it('mirrors both daemons audit entries into finger:<cluster>:audit', async () => {
    const sealed = [];
    for (const a of apps) {
      sealed.push(await a.audit.append({ type: 'token.changed', actor: { kind: 'human', id: 'test' }, details: {} }));
      await a.redis!.mirror.drain();
    }
    const rows = await raw.xrange(`finger:${cluster}:audit`, '-', '+');
    const nodes = new Set(rows.map(([, f]) => f[1]));
    expect(nodes.size).toBe(2);
    // each daemon's entry is in the stream as sealed (hash and all), in its order
    const mirrored = rows.map(([, f]) => JSON.parse(f[3]!) as { hash: string });
    for (const e of sealed) expect(mirrored).toContainEqual(e);
  });

  it('halts daemon B within 1 s of POST /v1/halt on daemon A; POST /v1/unlock on B unlocks A', async () => {
    const call = (i: number) => post(daemons[i]!, { target: 'counter.get', payload: {} });
    expect((await call(1)).status).toBe(200);
    const halted = await req(daemons[0]!, 'POST', '/v1/halt', { reason: 'redis test' });
    expect(halted.status).toBe(200);
    // B is halted within 1 s (polled through health: a burst of identical calls would be held by
    // the firewall's behaviour layer), and refuses calls
    const state = async (i: number) => (await req(daemons[i]!, 'GET', '/v1/health')).body.safety.state as string;
    const seen = await waitFor(
      'daemon B to leave the open state',
      async () => {
        const s = await state(1);
        return s === 'open' ? undefined : s;
      },
      3000,
      20,
    );
    expect(seen).toMatch(/^(halting|locked)$/);
    expect((await call(1)).body.error?.code).toMatch(/^E_(HALTED|SAFETY_LOCKOUT)$/);
    // B finishes its halt, then an admin unlocks on B
    const unlocked = await waitFor(
      'an unlock on B to be taken (B finished its halt)',
      async () => {
        const r = await req(daemons[1]!, 'POST', '/v1/unlock', {});
        return r.status === 200 ? r : undefined;
      },
      10_000,
      50,
    );
    expect(unlocked).toMatchObject({ status: 200, body: { unlocked: true } });
    await waitUntil('daemon A open again', async () => (await state(0)) === 'open', 5000, 20);
    expect((await call(0)).status).toBe(200);
  });
});

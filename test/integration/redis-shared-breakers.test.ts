// Two daemons on one Redis share an agent's breaker state, not only its lockout: the denial
// breaker counts the agent's denials on every daemon, and an unlock made on one daemon starts the
// breakers over on the others too.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { redisUrlForTests } from '@finger/testkit';

import { httpCall, type RedisTestDaemon, startRedisDaemons, until } from './redis-helpers.js';

const url = await redisUrlForTests();

describe.skipIf(!url)('daemons with redis.url share the breakers of an agent (real redis-server)', () => {
  let started: Awaited<ReturnType<typeof startRedisDaemons>> | undefined;
  let admins: RedisTestDaemon[] = [];
  /** The same agent ("ag") on each daemon: a token minted by each daemon. */
  const agents: RedisTestDaemon[] = [];
  let raw: Redis;
  let cluster = '';

  beforeAll(async () => {
    raw = new Redis(url!);
    started = await startRedisDaemons(2, url!, 'brk');
    ({ cluster } = started);
    admins = started.daemons;
    // the counter fixture grants no role: every call of an agent is a denial (E_FORBIDDEN)
    for (const d of admins) {
      const r = await httpCall<{ token: string }>(d, 'POST', '/v1/tokens', { name: 'ag', role: 'agent:executor' });
      expect(r.status).toBe(201);
      agents.push({ ...d, token: r.body.token });
    }
  });
  afterAll(async () => {
    await started?.close();
    const keys = await raw.keys(`finger:${cluster}:*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
  });

  const denied = (i: number) =>
    httpCall<{ error?: { code: string } }>(agents[i]!, 'POST', '/v1/messages', { target: 'counter.inc', payload: {} });
  const lockout = async () => {
    const v = await raw.hget(`finger:${cluster}:safety:lockouts`, 'ag');
    return v === null ? undefined : (JSON.parse(v) as { breaker?: string; reason: string });
  };
  /** Waits until daemon `i` reports `n` denials of the agent (it has taken the other daemon's writes). */
  const seesDenials = (i: number, n: number) =>
    until(async () => {
      const h = await httpCall<{ safety: { breakers: Record<string, { denials: number }> } }>(
        admins[i]!,
        'GET',
        '/v1/health',
      );
      return h.body.safety.breakers.ag?.denials === n;
    }, `daemon ${i} to count ${n} denials`);

  it('trips the denial breaker at the third denial in a row, whichever daemons denied them', async () => {
    expect((await denied(0)).body.error?.code).toBe('E_FORBIDDEN');
    await seesDenials(1, 1);
    expect((await denied(1)).body.error?.code).toBe('E_FORBIDDEN');
    await seesDenials(0, 2);
    expect(await lockout()).toBeUndefined();
    expect((await denied(0)).body.error?.code).toBe('E_FORBIDDEN');
    expect(await lockout()).toMatchObject({ breaker: 'denial', reason: expect.stringMatching(/^3 denials/) });
    await until(async () => (await denied(1)).body.error?.code === 'E_SAFETY_LOCKOUT', 'B to refuse the agent');
  });

  it('starts the breakers over on every daemon when the agent is unlocked on one', async () => {
    const un = await httpCall<{ unlocked: boolean }>(admins[1]!, 'POST', '/v1/unlock', { agent_id: 'ag' });
    expect(un.body.unlocked).toBe(true);
    await seesDenials(0, 0);
    // one denial after the unlock is one, not the fourth in a row
    expect((await denied(0)).body.error?.code).toBe('E_FORBIDDEN');
    expect(await lockout()).toBeUndefined();
    await seesDenials(1, 1);
    expect((await denied(1)).body.error?.code).toBe('E_FORBIDDEN');
    expect(await lockout()).toBeUndefined();
  });
});

// Redis restarted without persistence (its data gone) while two daemons run: the cluster's shared
// safety state and UserPolicy are not silently forgotten. A halt stays in force (only an admin's
// unlock ends it) and the UserPolicy is shared again by the daemons that follow it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FingerApp } from '@finger/daemon';
import { binaryForTests, redisServerBinary, RedisServerChild } from '@finger/testkit';

import { httpCall as req, type RedisTestDaemon as Daemon, startRedisDaemons, until } from './redis-helpers.js';

const bin = binaryForTests(redisServerBinary(), 'the lost-redis-state test', 'no redis-server binary on the PATH');

describe.skipIf(!bin)('Redis loses its data under running daemons (own redis-server, no persistence)', () => {
  let server: RedisServerChild;
  let cluster: Awaited<ReturnType<typeof startRedisDaemons>> | undefined;
  let daemons: Daemon[] = [];
  let apps: FingerApp[] = [];
  let raw: Redis;
  let prefix = '';

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    cluster = await startRedisDaemons(2, server.url, 'lost');
    ({ daemons, apps } = cluster);
    prefix = `finger:${cluster.cluster}:`;
    raw = new Redis(server.url, { maxRetriesPerRequest: 1 });
    raw.on('error', () => undefined);
  });
  afterAll(async () => {
    raw?.disconnect();
    await server?.restart();
    await cluster?.close();
    await server?.stop();
  });

  const call = (d: Daemon) => req(d, 'POST', '/v1/messages', { target: 'counter.get', payload: {} });
  const state = async (d: Daemon) => (await req(d, 'GET', '/v1/health')).body.safety.state as string;

  it('keeps a halt made before the loss: the daemons write it again instead of unlocking', async () => {
    const [a, b] = daemons as [Daemon, Daemon];
    const halted = await req(a, 'POST', '/v1/halt', { reason: 'before the loss' });
    expect(halted).toMatchObject({ status: 200, body: { state: 'locked' } });
    await until(async () => (await state(b)) === 'locked', 'B to be halted');

    await server.stop();
    await server.restart(); // empty: no persistence
    await until(
      async () => (await raw.hget(`${prefix}safety:lockouts`, '').catch(() => null)) !== null,
      'the halt to be written again',
      15_000,
    );
    const lockout = JSON.parse((await raw.hget(`${prefix}safety:lockouts`, ''))!) as { reason: string };
    expect(lockout).toMatchObject({ cause: 'halt', reason: 'before the loss' });
    for (const d of [a, b]) {
      expect(await state(d)).toBe('locked');
      expect((await call(d)).body.error.code).toBe('E_SAFETY_LOCKOUT');
    }

    const unlocked = await req(b, 'POST', '/v1/unlock', {});
    expect(unlocked).toMatchObject({ status: 200, body: { unlocked: true } });
    await until(async () => (await state(a)) === 'open', 'A to be unlocked by B');
    expect((await call(a)).status).toBe(200);
  });

  it('shares the UserPolicy again once Redis is back empty', async () => {
    const rule = { id: 'no-inc', tool: 'counter.inc', level: 'DENY' as const, reason: 'learned' };
    await apps[0]!.policy.addRule(rule, { actor: { kind: 'human', id: 'test' } });
    await until(() => apps[1]!.policy.userDigest() === apps[0]!.policy.userDigest(), 'B to load the policy');

    await server.stop();
    await server.restart(); // empty: no persistence
    await until(
      async () => (await raw.get(`${prefix}firewall:user-policy:version`).catch(() => null)) !== null,
      'the UserPolicy to be shared again',
      15_000,
    );
    expect(JSON.parse((await raw.get(`${prefix}firewall:user-policy`))!)).toMatchObject({ rules: [rule] });
    expect(await raw.get(`${prefix}firewall:user-policy:version`)).toBe(apps[0]!.policy.userDigest());
  });
});

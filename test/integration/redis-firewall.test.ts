// UserPolicy and HumanGate session state shared by two daemons through Redis.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type AuditRecord, PolicyStore, RiskAssessor, SessionState } from '@finger/firewall';
import { silentLogger } from '@finger/hub';
import { RedisKv } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { RedisFirewallSync } from '../../packages/daemon/src/distributed/redis-firewall-sync.js';
import { redisForTest, until } from './redis-helpers.js';

const url = await redisUrlForTests();
const ACTOR = { kind: 'human', id: 'alice' };
const RULE = { id: 'no-curl', tool: 'shell.exec', match: { command: 'curl *' }, level: 'DENY' as const, reason: 'r' };

describe.skipIf(!url)('RedisFirewallSync: UserPolicy and session approvals across daemons (real redis-server)', () => {
  let assessor: RiskAssessor;
  let t: ReturnType<typeof redisForTest>;
  const syncs: RedisFirewallSync[] = [];
  const audit: AuditRecord[] = [];

  beforeAll(async () => {
    assessor = await RiskAssessor.create();
  });
  beforeEach(() => {
    t = redisForTest(url!);
    audit.length = 0;
  });
  afterEach(async () => {
    for (const s of syncs.splice(0)) await s.close();
    await t.cleanup();
  });

  async function daemon() {
    const policy = PolicyStore.load({
      homeDir: '/home/alice',
      assessor,
      audit: { append: async (r: AuditRecord) => void audit.push(r) },
    });
    const sessions = new SessionState(100);
    const conn = t.connect();
    expect(await conn.ready(5000)).toBe(true);
    const sync = await RedisFirewallSync.open(new RedisKv(conn, 'firewall'), policy, sessions, {
      logger: silentLogger,
      available: () => conn.available,
    });
    syncs.push(sync);
    return { policy, sessions, conn };
  }

  it('puts a UserPolicy change made on daemon A in force on daemon B', async () => {
    const a = await daemon();
    const b = await daemon();
    await a.policy.addRule(RULE, { actor: ACTOR });
    await until(() => b.policy.userDigest() === a.policy.userDigest(), 'B to load the new policy', 2000);
    expect(b.policy.show().user.rules).toEqual([RULE]);
    // audited once, on the daemon that made the change
    expect(audit.map((r) => r.type)).toEqual(['policy.changed']);
  });

  it('loads the shared UserPolicy at start (a later daemon takes the cluster policy, not its own)', async () => {
    const a = await daemon();
    await a.policy.addRule(RULE, { actor: ACTOR });
    const c = await daemon();
    expect(c.policy.show().user.rules).toEqual([RULE]);
    expect(c.policy.userDigest()).toBe(a.policy.userDigest());
  });

  it('refuses a change made over a stale policy with E_CONFLICT, audits the failure, then converges', async () => {
    const a = await daemon();
    const b = await daemon();
    // B misses A's notice: its subscriber is cut before A's change, and B changes right after
    b.conn.subscriber().disconnect(false);
    await a.policy.addRule(RULE, { actor: ACTOR });
    await expect(b.policy.addRule({ ...RULE, id: 'other', level: 'CONFIRM' }, { actor: ACTOR })).rejects.toMatchObject({
      code: 'E_CONFLICT',
    });
    expect(audit.at(-1)?.details).toMatchObject({ failed: true });
    await until(() => b.policy.userDigest() === a.policy.userDigest(), 'B to load the newer policy', 2000);
    expect(b.policy.show().user.rules).toEqual([RULE]);
  });

  it('refuses a UserPolicy change with E_STORE_UNAVAILABLE while Redis cannot be written; nothing changes', async () => {
    const a = await daemon();
    const before = a.policy.userDigest();
    await a.conn.close();
    await expect(a.policy.addRule(RULE, { actor: ACTOR })).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    expect(a.policy.userDigest()).toBe(before);
    expect(a.policy.show().user.rules).toEqual([]);
  });

  it('refuses a session approval with E_STORE_UNAVAILABLE while Redis cannot be written', async () => {
    const a = await daemon();
    expect(() => a.sessions.assertShareable?.()).not.toThrow();
    await a.conn.close();
    let code: string | undefined;
    try {
      a.sessions.assertShareable?.();
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).toBe('E_STORE_UNAVAILABLE');
  });

  it('shares session approvals and aborts; a daemon started later loads them', async () => {
    const a = await daemon();
    const b = await daemon();
    a.sessions.approve('s1', {
      tool_id: 'fs.write',
      level: 'APPROVE',
      principal: 'agent:a1',
      by: 'human:alice',
      at: 1,
    });
    await until(
      () => b.sessions.approvalFor('s1', 'fs.write', 'CONFIRM', 'agent:a1') !== undefined,
      'B to see the approval',
      2000,
    );
    expect(b.sessions.approvals('s1')).toEqual([
      { tool_id: 'fs.write', level: 'APPROVE', principal: 'agent:a1', by: 'human:alice', at: 1 },
    ]);
    const c = await daemon();
    expect(c.sessions.approvals('s1')).toHaveLength(1);

    b.sessions.abort('s1');
    await until(() => a.sessions.abortPhase('s1') === 'stopping', 'A to see the abort', 2000);
    expect(a.sessions.approvals('s1')).toEqual([]);
    a.sessions.reset('s1');
    await until(() => b.sessions.abortPhase('s1') === null && c.sessions.abortPhase('s1') === null, 'the reset', 2000);
  });
});

// UserPolicy, HumanGate abort phases and standing approvals shared by daemons through Redis.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  type AuditRecord,
  PolicyStore,
  RiskAssessor,
  SessionState,
  type StandingApproval,
  StandingApprovals,
} from '@finger/firewall';
import { silentLogger } from '@finger/hub';
import { RedisKv } from '@finger/hub/redis';
import { redisUrlForTests } from '@finger/testkit';

import { RedisFirewallSync } from '../../packages/daemon/src/distributed/redis-firewall-sync.js';
import { redisForTest, until } from './redis-helpers.js';

const url = await redisUrlForTests();
const ACTOR = { kind: 'human', id: 'alice' };
const RULE = { id: 'no-curl', tool: 'shell.exec', match: { command: 'curl *' }, level: 'DENY' as const, reason: 'r' };

describe.skipIf(!url)(
  'RedisFirewallSync: UserPolicy, aborts and standing approvals across daemons (real redis-server)',
  () => {
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
      const standing = new StandingApprovals();
      const conn = t.connect();
      expect(await conn.ready(5000)).toBe(true);
      const sync = await RedisFirewallSync.open(
        new RedisKv(conn, 'firewall'),
        policy,
        sessions,
        { logger: silentLogger, available: () => conn.available },
        standing,
      );
      syncs.push(sync);
      return { policy, sessions, standing, conn };
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
      await expect(
        b.policy.addRule({ ...RULE, id: 'other', level: 'CONFIRM' }, { actor: ACTOR }),
      ).rejects.toMatchObject({
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

    it('refuses a standing approval with E_STORE_UNAVAILABLE while Redis cannot be written', async () => {
      const a = await daemon();
      expect(() => a.standing.assertShareable?.()).not.toThrow();
      await a.conn.close();
      let code: string | undefined;
      try {
        a.standing.assertShareable?.();
      } catch (e) {
        code = (e as { code?: string }).code;
      }
      expect(code).toBe('E_STORE_UNAVAILABLE');
    });

    it('shares standing approvals (added, revoked) and aborts; a daemon started later loads them', async () => {
      const a = await daemon();
      const b = await daemon();
      const sa: StandingApproval = {
        id: 'S1',
        tool_id: 'shell.exec',
        shape: { kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: ['test'] }] },
        level: 'CONFIRM',
        principal: 'agent:a1',
        scope: 'session',
        session_id: 's1',
        by: 'alice',
        created_at: new Date().toISOString(),
        approval_id: 'A1',
      };
      a.standing.add(sa);
      await until(() => b.standing.get('S1') !== undefined, 'B to see the standing approval', 2000);
      expect(b.standing.list()).toEqual([sa]);
      const c = await daemon();
      expect(c.standing.list()).toEqual([sa]);
      b.standing.revoke('S1');
      await until(() => a.standing.size === 0 && c.standing.size === 0, 'the revocation to reach A and C', 2000);

      b.sessions.abort('s1');
      await until(() => a.sessions.abortPhase('s1') === 'stopping', 'A to see the abort', 2000);
      a.sessions.reset('s1');
      await until(
        () => b.sessions.abortPhase('s1') === null && c.sessions.abortPhase('s1') === null,
        'the reset',
        2000,
      );
    });
  },
);

// The firewall state that every daemon of a cluster shares through Redis: the UserPolicy (one
// versioned document, changed by compare-and-set so a change made over a stale policy is refused)
// the HumanGate's abort phases (one key per session, with a TTL) and its standing approvals (one
// key per approval, living until it expires).
// The firewall keeps evaluating synchronously on its local copies; this module keeps them in step.

import type {
  PolicyDocument,
  PolicyStore,
  SessionSnapshot,
  SessionState,
  StandingApproval,
  StandingApprovals,
} from '@finger/firewall';
import type { Logger } from '@finger/hub';
import type { RedisKv } from '@finger/hub/redis';
import { FingerError } from '@finger/protocol';

const POLICY = 'user-policy';
const SESSION = 'session:';
const STANDING = 'standing:';

/** A change notice on the `firewall` channel. */
type FirewallChange =
  { type: 'user_policy'; digest: string } | { type: 'session'; session_id: string } | { type: 'standing'; id: string };

/** Tuning of {@link RedisFirewallSync}. */
export interface RedisFirewallSyncOptions {
  logger: Logger;
  /** How long a session's approvals live in Redis after its last change. Default 24 h. */
  session_ttl_ms?: number;
  /** Most sessions loaded at start (and after an outage). Default 10,000. */
  max_sessions?: number;
  /** Whether Redis can take writes now; while it cannot, a standing approval ("always") is refused. */
  available?: () => boolean;
}

/**
 * Keeps one daemon's PolicyStore and SessionState in step with the cluster:
 * - UserPolicy: at start the shared document wins (the first daemon seeds it from its own file);
 *   every change goes through {@link PolicyStore.setUserPersistence} as a compare-and-set on the
 *   policy digest (E_CONFLICT when another daemon changed it first — the newer policy is then
 *   loaded — and E_STORE_UNAVAILABLE while Redis is down: nothing changes); other daemons load it
 *   on the notice.
 * - Sessions: each local approve/abort/reset is written (best effort, in order per session) and
 *   announced; other daemons restore the session from Redis on the notice. While Redis is down a
 *   session approval ("always") is refused with E_STORE_UNAVAILABLE (the hold stays pending). A session reset during
 *   an outage may leave stale approvals on a daemon that missed it until the session changes again.
 * After an outage both are re-read (pub/sub notices of the outage are lost).
 */
export class RedisFirewallSync {
  private readonly ttl: number;
  private readonly max: number;
  private readonly writes = new Map<string, Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private offReconnect: (() => void) | undefined;
  private closed = false;

  private constructor(
    private readonly kv: RedisKv,
    private readonly policy: PolicyStore,
    private readonly sessions: SessionState,
    private readonly standing: StandingApprovals | undefined,
    private readonly o: RedisFirewallSyncOptions,
  ) {
    this.ttl = o.session_ttl_ms ?? 24 * 60 * 60_000;
    this.max = o.max_sessions ?? 10_000;
  }

  /**
   * Loads the shared state and starts following it. Rejects with E_STORE_UNAVAILABLE when Redis
   * cannot be read (the daemon must not start on a policy that may be stale), or E_INVALID_ARGS
   * when the shared UserPolicy does not compile here (a different AdminPolicy).
   */
  static async open(
    kv: RedisKv,
    policy: PolicyStore,
    sessions: SessionState,
    o: RedisFirewallSyncOptions,
    standing?: StandingApprovals,
  ): Promise<RedisFirewallSync> {
    const s = new RedisFirewallSync(kv, policy, sessions, standing, o);
    s.unsubscribe = await kv.subscribe((c) => void s.remote(c as FirewallChange));
    s.offReconnect = kv.onReconnect(() => void s.resync().catch(() => undefined));
    await s.loadPolicy(true);
    await s.loadSessions();
    policy.setUserPersistence({ save: (doc, prev, next) => s.savePolicy(doc, prev, next) });
    sessions.onChange = (id) => s.sessionChanged(id);
    if (standing !== undefined) {
      const before = standing.onChange;
      standing.onChange = (id, a) => {
        before?.(id, a);
        s.standingChanged(id, a);
      };
      s.restoreStandingChange = before;
      standing.assertShareable = () => s.assertShareable();
    }
    return s;
  }

  /** Stops following; local copies stay as they are. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.offReconnect?.();
    this.policy.setUserPersistence(undefined);
    this.sessions.onChange = undefined;
    if (this.standing !== undefined) {
      this.standing.onChange = this.restoreStandingChange;
      this.standing.assertShareable = undefined;
    }
    await Promise.all([...this.writes.values()]);
  }

  /** The standing approvals' `onChange` before this sync chained itself in (put back on close). */
  private restoreStandingChange: StandingApprovals['onChange'];

  private async savePolicy(doc: PolicyDocument, prev: string, next: string): Promise<void> {
    const change: FirewallChange = { type: 'user_policy', digest: next };
    if (await this.kv.casJson(POLICY, prev, next, doc, change)) return;
    // another daemon changed it first: load theirs, refuse ours (the caller may retry on the new one)
    void this.loadPolicy(false).catch(() => undefined);
    throw new FingerError('E_CONFLICT', 'the user policy was changed on another daemon; reload it and retry', {
      reason: 'stale_policy',
    });
  }

  /** Puts the shared UserPolicy in force; `seed`: none shared yet → share this daemon's. */
  private async loadPolicy(seed: boolean): Promise<void> {
    const shared = await this.kv.getVersioned<PolicyDocument>(POLICY);
    if (shared === undefined) {
      if (!seed) return;
      const doc = this.policy.show().user;
      const digest = this.policy.userDigest();
      if (await this.kv.casJson(POLICY, digest, digest, doc)) return;
      return this.loadPolicy(false);
    }
    if (shared.version === this.policy.userDigest()) return;
    const warnings = await this.policy.applyShared(shared.value);
    this.o.logger.info({ digest: shared.version, warnings: warnings.length }, 'user policy loaded from the cluster');
  }

  private async loadSessions(): Promise<void> {
    for (const [key, snap] of await this.kv.scanJson<SessionSnapshot>(SESSION, this.max)) {
      this.sessions.restore(key.slice(SESSION.length), snap);
    }
    if (this.standing === undefined) return;
    for (const [key, a] of await this.kv.scanJson<StandingApproval>(STANDING, this.max)) {
      this.standing.restore(key.slice(STANDING.length), a);
    }
  }

  /** Shares one standing approval (undefined: revoked), in order per approval; it lives in Redis until it expires. */
  standingChanged(id: string, a: StandingApproval | undefined): void {
    if (this.closed) return;
    const change: FirewallChange = { type: 'standing', id };
    const key = STANDING + id;
    const ttl = a?.expires_at !== undefined ? Math.max(1000, Date.parse(a.expires_at) - Date.now()) : this.ttl;
    const prev = this.writes.get(key) ?? Promise.resolve();
    const next = prev
      .then(() =>
        a === undefined ? this.kv.del(key, change).then(() => undefined) : this.kv.setJson(key, a, change, ttl),
      )
      .catch((e: unknown) =>
        this.o.logger.warn({ id, err: (e as Error).message }, 'standing approval not shared (redis)'),
      )
      .finally(() => {
        if (this.writes.get(key) === next) this.writes.delete(key);
      });
    this.writes.set(key, next);
  }

  private assertShareable(): void {
    if (this.o.available?.() === false)
      throw new FingerError(
        'E_STORE_UNAVAILABLE',
        'redis is unavailable: a standing approval could not reach the other daemons; approve once, or retry when redis is back',
        { op: 'standing.approve' },
      );
  }

  private sessionChanged(session_id: string): void {
    if (this.closed) return;
    const snap = this.sessions.snapshot(session_id);
    const change: FirewallChange = { type: 'session', session_id };
    const prev = this.writes.get(session_id) ?? Promise.resolve();
    const next = prev
      .then(() =>
        snap === undefined
          ? this.kv.del(SESSION + session_id, change).then(() => undefined)
          : this.kv.setJson(SESSION + session_id, snap, change, this.ttl),
      )
      .catch((e: unknown) =>
        this.o.logger.warn({ session_id, err: (e as Error).message }, 'session state not shared (redis)'),
      )
      .finally(() => {
        if (this.writes.get(session_id) === next) this.writes.delete(session_id);
      });
    this.writes.set(session_id, next);
  }

  private async remote(c: FirewallChange): Promise<void> {
    if (this.closed) return;
    try {
      if (c.type === 'user_policy') {
        if (c.digest !== this.policy.userDigest()) await this.loadPolicy(false);
      } else if (c.type === 'session' && typeof c.session_id === 'string') {
        this.sessions.restore(c.session_id, await this.kv.getJson<SessionSnapshot>(SESSION + c.session_id));
      } else if (c.type === 'standing' && typeof c.id === 'string' && this.standing !== undefined) {
        this.standing.restore(c.id, await this.kv.getJson<StandingApproval>(STANDING + c.id));
      }
    } catch (e) {
      this.o.logger.warn({ change: c.type, err: (e as Error).message }, 'shared firewall change not applied');
    }
  }

  private async resync(): Promise<void> {
    if (this.closed) return;
    // no shared policy after an outage: Redis lost it (no persistence) — share ours again, or a
    // daemon started later would seed its own, possibly stale, file and the cluster would split
    await this.loadPolicy(true);
    await this.loadSessions();
  }
}

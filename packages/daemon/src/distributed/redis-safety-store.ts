// The SafetyMonitor's state in Redis, shared by every daemon of a cluster: budget counters are
// INCRBY (atomic across daemons), lockouts and breaker states are JSON hash fields, and every
// change is published so a halt or lockout made on one daemon holds on all of them at once.

import { randomUUID } from 'node:crypto';

import type { AgentBreakers, LockoutRecord, SafetyChange, SafetyStateStore } from '@finger/firewall';
import type { Logger } from '@finger/hub';
import type { RedisKv } from '@finger/hub/redis';
import { FingerError } from '@finger/protocol';

/** Field of the system lockout in the lockouts hash (agent lockouts use the agent id). */
const SYSTEM = '';
const LOCKOUTS = 'lockouts';
const BREAKERS = 'breakers';
/**
 * A random id written once into a Redis that holds the cluster's safety state. Missing or
 * changed on a re-read: Redis lost that state (restarted without persistence, flushed, failed
 * over to an empty replica) — the lockouts missing then were not cleared by anyone.
 */
const EPOCH = 'epoch';

function isChange(c: unknown): c is SafetyChange {
  const t = (c as { type?: unknown } | null)?.type;
  return t === 'lockout_set' || t === 'lockout_cleared' || t === 'breakers';
}

/**
 * {@link SafetyStateStore} on Redis (namespace `safety`, via the hub's {@link RedisKv}). Local
 * listeners are told synchronously after a write succeeds, other daemons through pub/sub; after
 * a Redis outage the store re-reads the lockouts and tells its listeners what changed meanwhile
 * (pub/sub messages of an outage are lost). While Redis is unreachable every method rejects with
 * E_STORE_UNAVAILABLE; lockouts already known stay in force in the SafetyMonitor's cache.
 *
 * Durability of lockouts across a restart of Redis itself needs Redis persistence (AOF).
 */
export class RedisSafetyStore implements SafetyStateStore {
  private readonly listeners = new Set<(change: SafetyChange) => void>();
  /** Lockouts as last seen (field → JSON), to tell listeners what changed across an outage. */
  private known = new Map<string, string>();
  /** Lockouts set while Redis was unreachable (a halt holds locally): written when it returns. */
  private readonly unsent = new Map<string, LockoutRecord>();
  private unsubscribe: (() => void) | undefined;
  private retry: NodeJS.Timeout | undefined;
  private periodic: NodeJS.Timeout | undefined;
  /** The re-read running now: one at a time. */
  private syncing: Promise<void> | undefined;
  /** Counts notices from other daemons: a re-read that one overtook is done again, not trusted. */
  private heard = 0;
  private offReconnect: (() => void) | undefined;
  private closed = false;
  /** The {@link EPOCH} this store last saw; undefined before the first read. */
  private epoch: string | undefined;

  private constructor(
    private readonly kv: RedisKv,
    private readonly logger?: Logger,
  ) {}

  /**
   * Subscribes to the change channel (bounded wait when Redis is down: it subscribes on
   * reconnect) and re-reads the lockouts every `resync_ms` (default 2000; 0 = only on reconnect):
   * pub/sub is the fast path, the re-read the truth — a notice lost in a reconnect race (this
   * daemon's subscriber back after another daemon wrote what it set during the outage) or a
   * write that never got through is made good within one period.
   */
  static async open(kv: RedisKv, logger?: Logger, options: { resync_ms?: number } = {}): Promise<RedisSafetyStore> {
    const s = new RedisSafetyStore(kv, logger);
    s.unsubscribe = await kv.subscribe((c) => {
      if (isChange(c)) s.remote(c);
    });
    s.offReconnect = kv.onReconnect(() => void s.resync());
    await s.resync();
    const every = options.resync_ms ?? 2000;
    if (every > 0) {
      s.periodic = setInterval(() => void s.resync(true), every);
      s.periodic.unref();
    }
    return s;
  }

  async incrBy(key: string, delta: number): Promise<number> {
    this.assertOpen();
    if (!Number.isFinite(delta)) throw new FingerError('E_INVALID_ARGS', 'incrBy: delta must be finite');
    return this.kv.incrBy(`counter:${key}`, delta);
  }

  async getCounter(key: string): Promise<number> {
    this.assertOpen();
    return this.kv.getNumber(`counter:${key}`);
  }

  async deleteCounter(key: string): Promise<void> {
    this.assertOpen();
    await this.kv.del(`counter:${key}`);
  }

  async getLockout(agent_id?: string): Promise<LockoutRecord | undefined> {
    this.assertOpen();
    return this.kv.hgetJson<LockoutRecord>(LOCKOUTS, agent_id ?? SYSTEM);
  }

  async listLockouts(): Promise<LockoutRecord[]> {
    this.assertOpen();
    const all = await this.kv.hgetAllJson<LockoutRecord>(LOCKOUTS);
    return Object.keys(all)
      .sort()
      .map((k) => all[k]!);
  }

  async setLockout(lockout: LockoutRecord): Promise<void> {
    this.assertOpen();
    const change: SafetyChange = { type: 'lockout_set', lockout };
    const field = lockout.agent_id ?? SYSTEM;
    try {
      await this.kv.hsetJson(LOCKOUTS, field, lockout, change);
    } catch (e) {
      // the monitor keeps the lockout locally; the cluster gets it once Redis is back
      this.unsent.set(field, structuredClone(lockout));
      throw e;
    }
    this.unsent.delete(field);
    this.known.set(field, JSON.stringify(lockout));
    this.notify(structuredClone(change));
  }

  async clearLockout(agent_id: string | undefined, by: string): Promise<LockoutRecord | undefined> {
    this.assertOpen();
    const change: SafetyChange = { type: 'lockout_cleared', ...(agent_id !== undefined ? { agent_id } : {}), by };
    const field = agent_id ?? SYSTEM;
    // out of the queue while the delete runs (a re-read must not write it back meanwhile); back in
    // it when the delete fails: the unlock did not happen, and the cluster must still get the lockout
    const queued = this.unsent.get(field);
    this.unsent.delete(field);
    let prev: LockoutRecord | undefined;
    try {
      prev = await this.kv.hdelJson<LockoutRecord>(LOCKOUTS, field, change);
    } catch (e) {
      if (queued !== undefined && !this.unsent.has(field)) this.unsent.set(field, queued);
      throw e;
    }
    this.known.delete(agent_id ?? SYSTEM);
    if (prev !== undefined) this.notify(change);
    return prev;
  }

  async getBreakers(agent_id: string): Promise<AgentBreakers | undefined> {
    this.assertOpen();
    return this.kv.hgetJson<AgentBreakers>(BREAKERS, agent_id);
  }

  async setBreakers(agent_id: string, state: AgentBreakers): Promise<void> {
    this.assertOpen();
    const change: SafetyChange = { type: 'breakers', agent_id };
    await this.kv.hsetJson(BREAKERS, agent_id, state, change);
    this.notify(change);
  }

  async deleteBreakers(agent_id: string): Promise<void> {
    this.assertOpen();
    const change: SafetyChange = { type: 'breakers', agent_id };
    if ((await this.kv.hdelJson<AgentBreakers>(BREAKERS, agent_id, change)) !== undefined) this.notify(change);
  }

  async listBreakers(): Promise<Record<string, AgentBreakers>> {
    this.assertOpen();
    return this.kv.hgetAllJson<AgentBreakers>(BREAKERS);
  }

  subscribe(listener: (change: SafetyChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops listening; the RedisKv and its connection belong to the wiring. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    if (this.periodic !== undefined) clearInterval(this.periodic);
    this.listeners.clear();
    this.unsubscribe?.();
    this.offReconnect?.();
  }

  private remote(c: SafetyChange): void {
    this.heard++;
    if (c.type === 'lockout_set') this.known.set(c.lockout.agent_id ?? SYSTEM, JSON.stringify(c.lockout));
    if (c.type === 'lockout_cleared') this.known.delete(c.agent_id ?? SYSTEM);
    // listeners must tell another daemon's breaker write from their own (the monitor reloads it)
    this.notify(c.type === 'breakers' ? { type: 'breakers', agent_id: c.agent_id, remote: true } : c);
  }

  /**
   * After an outage and every `resync_ms`: writes the lockouts set meanwhile (a halt made while
   * Redis was down reaches the cluster), then re-reads the lockouts and tells listeners the
   * differences.
   */
  private resync(quiet = false): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.syncing ??= (async () => {
      // a notice that came while the lockouts were read may be newer than what was read
      // (pub/sub and commands travel on two connections): read again rather than undo it
      for (let i = 0; i < 3 && !this.closed; i++) if (await this.reread(quiet)) return;
    })().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  /** One re-read; false when a notice from another daemon came meanwhile (nothing applied). */
  private async reread(quiet: boolean): Promise<boolean> {
    let now: Record<string, LockoutRecord>;
    const heard = this.heard;
    try {
      for (const [field, lockout] of [...this.unsent]) {
        await this.kv.hsetJson(LOCKOUTS, field, lockout, { type: 'lockout_set', lockout } satisfies SafetyChange);
        this.unsent.delete(field);
        this.known.set(field, JSON.stringify(lockout));
      }
      const [epoch, all] = await Promise.all([this.kv.getString(EPOCH), this.kv.hgetAllJson<LockoutRecord>(LOCKOUTS)]);
      now = all;
      if (epoch === undefined || epoch !== this.epoch) {
        if (this.epoch !== undefined) await this.restoreLost(now);
        this.epoch = await this.kv.claim(EPOCH, randomUUID());
      }
    } catch (e) {
      // the periodic re-read fails on every tick of an outage: the outage itself is reported elsewhere
      if (!quiet) this.logger?.warn({ err: (e as Error).message }, 'safety store: cannot re-read lockouts');
      // the subscriber may be back before the command connection: try again shortly
      if (!this.closed && this.listeners.size > 0 && this.retry === undefined) {
        // quiet: this failure was just logged (or was itself quiet); an outage is not logged every second
        this.retry = setTimeout(() => {
          this.retry = undefined;
          void this.resync(true);
        }, 1000);
        this.retry.unref();
      }
      return true;
    }
    if (this.heard !== heard) return false;
    const before = this.known;
    this.known = new Map(Object.entries(now).map(([k, v]) => [k, JSON.stringify(v)]));
    for (const [k, json] of this.known)
      if (before.get(k) !== json) this.notify({ type: 'lockout_set', lockout: now[k]! });
    for (const k of before.keys())
      if (!this.known.has(k))
        this.notify({ type: 'lockout_cleared', ...(k !== SYSTEM ? { agent_id: k } : {}), by: 'redis' });
    return true;
  }

  /**
   * Redis lost the cluster's safety state: a lockout gone with it was never unlocked (only an
   * admin's unlock clears one), so every lockout this daemon knew of is written again — the
   * cluster stays halted or the agent locked, instead of every daemon unlocking itself.
   */
  private async restoreLost(now: Record<string, LockoutRecord>): Promise<void> {
    const lost = [...this.known].filter(([field]) => now[field] === undefined);
    for (const [field, json] of lost) {
      const lockout = JSON.parse(json) as LockoutRecord;
      await this.kv.hsetJson(LOCKOUTS, field, lockout, { type: 'lockout_set', lockout } satisfies SafetyChange);
      now[field] = lockout;
    }
    if (lost.length > 0)
      this.logger?.warn(
        { lockouts: lost.map(([field]) => (field === SYSTEM ? 'system' : field)) },
        'redis lost the safety state (restarted without persistence?): lockouts this daemon knew were written again',
      );
  }

  private notify(change: SafetyChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch {
        // a listener must not break the store
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new FingerError('E_STORE_UNAVAILABLE', 'the safety store is closed');
  }
}

import { randomUUID } from 'node:crypto';

import { FingerError, isFingerError } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { RequestRecord } from '../hub-types.js';
import { type Logger, silentLogger } from '../logger.js';
import type { RedisConnection } from './redis-client.js';
import type { BeginOptions, RequestOutcome, RequestStore } from './request-store.js';

/** Creates the record unless one exists; returns the existing one (atomic create-if-absent). */
const BEGIN = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])`;
/**
 * Replaces the running record by its outcome only if it is still the one this daemon wrote (or
 * gone: the outcome is better kept than lost), then tells waiting daemons.
 */
const FINISH = `local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;
/** Deletes the record only if it is still the running one this daemon wrote. */
const FORGET = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]); redis.call('PUBLISH', ARGV[2], ARGV[3]); return 1 end
return 0`;

/** Tuning of {@link RedisRequestStore}. */
export interface RedisRequestStoreOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * How long a running record lives if its daemon never finishes it (crash). Until then the id
   * answers "running" and is never executed again. Default 10 minutes.
   */
  running_ttl_ms?: number;
  /** Most callers waiting for other daemons' results at once (E_OVERLOADED past it). Default 10,000. */
  max_waiters?: number;
  /** Most outcomes held while Redis is down, written when it returns. Default 10,000. */
  max_pending?: number;
}

interface Pending {
  began: string;
  done: string;
  keep_ms: number;
}

interface Waiter {
  wake: () => void;
}

/**
 * Request records in Redis (`<prefix>req:<request_id>`), so one caller-supplied `request_id`
 * executes once across every daemon of a cluster. `begin` is an atomic create-if-absent (Lua);
 * a daemon that finds the id running elsewhere waits for the outcome ({@link awaitOutcome}:
 * pub/sub wake-ups plus polling with backoff, bounded by the caller's deadline); `finish` keeps
 * the outcome for the idempotency window.
 *
 * While Redis is unreachable `begin`, `get` and `awaitOutcome` reject with E_STORE_UNAVAILABLE
 * (the hub then refuses the call: never executed on a guess) — except a `fresh` begin (an id made
 * for that one call, which no other daemon can hold): its record is kept here, running, and
 * `get` answers it from here. An outcome that cannot be written is held (bounded) and written when
 * Redis returns; meanwhile the id stays "running" there, so no other daemon runs it again.
 */
export class RedisRequestStore implements RequestStore {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly running_ttl_ms: number;
  private readonly max_waiters: number;
  private readonly max_pending: number;
  private readonly channel: string;
  /** JSON of the running records this daemon began (for compare-and-set). */
  private readonly mine = new Map<string, string>();
  private readonly pending = new Map<string, Pending>();
  /** Running records of fresh ids begun while Redis was unreachable (JSON as in `mine`). */
  private readonly local = new Map<string, string>();
  /** Records a begin may have written although its reply was lost (the call never ran). */
  private readonly orphans = new Map<string, string>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private waiting = 0;
  private subscribed: Promise<void> | undefined;
  private flushTimer: unknown;
  private closed = false;
  private readonly onMessage = (channel: string, id: string) => {
    if (channel !== this.channel) return;
    const set = this.waiters.get(id);
    if (set !== undefined) for (const w of set) w.wake();
  };

  constructor(
    private readonly redis: RedisConnection,
    options: RedisRequestStoreOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.running_ttl_ms = options.running_ttl_ms ?? 10 * 60_000;
    this.max_waiters = options.max_waiters ?? 10_000;
    this.max_pending = options.max_pending ?? 10_000;
    this.channel = redis.key('req-done');
  }

  async begin(record: RequestRecord, options?: BeginOptions): Promise<RequestRecord | undefined> {
    // the owner token tells this daemon's record from an identical-looking one made after it vanished
    const json = JSON.stringify({ ...record, [OWNER]: randomUUID() });
    let r: unknown;
    try {
      r = await this.redis.script('request.begin', BEGIN, [this.k(record.request_id)], [json, this.running_ttl_ms]);
    } catch (e) {
      if (options?.fresh === true && isFingerError(e) && e.code === 'E_STORE_UNAVAILABLE') {
        // nobody else can hold this id: run the call, keep its record here. Should the begin have
        // landed after all, the record there is this one (same owner token), so finish replaces it.
        this.mine.set(record.request_id, json);
        this.local.set(record.request_id, json);
        return undefined;
      }
      // the reply was lost, not necessarily the write: a record we may have made blocks the id
      // until running_ttl_ms, although the call never ran — delete it (if it is ours) once we can
      this.orphan(record.request_id, json);
      throw e;
    }
    if (r === null || r === undefined) {
      this.mine.set(record.request_id, json);
      return undefined;
    }
    return parseRecord(r);
  }

  async finish(request_id: string, outcome: RequestOutcome, finished_at: string, keep_ms: number): Promise<void> {
    const began = this.mine.get(request_id);
    if (began === undefined) return;
    this.mine.delete(request_id);
    this.local.delete(request_id);
    const rec = JSON.parse(began) as RequestRecord; // keeps the owner token: stripped when read
    rec.status = outcome.ok ? 'succeeded' : 'failed';
    rec.finished_at = finished_at;
    if (outcome.ok) rec.result = outcome.result;
    else rec.error = outcome.error;
    const p: Pending = { began, done: JSON.stringify(rec), keep_ms: Math.max(1, Math.ceil(keep_ms)) };
    try {
      await this.write(request_id, p);
    } catch (e) {
      // the module ran: hold the outcome and write it when Redis returns (the id stays "running")
      this.hold(request_id, p, e);
    }
  }

  async get(request_id: string): Promise<RequestRecord | undefined> {
    const held = this.pending.get(request_id);
    if (held !== undefined) return parseRecord(held.done);
    const running = this.local.get(request_id);
    if (running !== undefined) return parseRecord(running);
    const r = await this.redis.run('request.get', (c) => c.get(this.k(request_id)));
    return r === null ? undefined : parseRecord(r);
  }

  async forget(request_id: string): Promise<void> {
    const began = this.mine.get(request_id);
    if (began === undefined) return;
    this.mine.delete(request_id);
    this.local.delete(request_id);
    try {
      await this.redis.script('request.forget', FORGET, [this.k(request_id)], [began, this.channel, request_id]);
    } catch (e) {
      // the call never ran; its id stays "running" until running_ttl_ms (safe: nothing runs twice)
      this.logger.warn({ request_id, err: (e as Error).message }, 'could not forget a refused request');
    }
  }

  /**
   * Waits until the record of `record.request_id`, running on another daemon, finishes, and
   * returns it. When the record vanished meanwhile (its call was refused before dispatch, or it
   * outlived `running_ttl_ms`) this caller creates it anew and gets undefined: it must run the
   * call itself. Rejects with E_TIMEOUT at `deadline`, E_STORE_UNAVAILABLE when Redis fails,
   * E_OVERLOADED past `max_waiters`.
   */
  async awaitOutcome(record: RequestRecord, deadline: number): Promise<RequestRecord | undefined> {
    const id = record.request_id;
    if (this.waiting >= this.max_waiters)
      throw new FingerError('E_OVERLOADED', `too many callers wait for requests running elsewhere`, {
        max_waiters: this.max_waiters,
      });
    this.waiting++;
    const w: Waiter = { wake: () => undefined };
    let set = this.waiters.get(id);
    if (set === undefined) this.waiters.set(id, (set = new Set()));
    set.add(w);
    try {
      await this.subscribe();
      let delay = 25;
      for (;;) {
        const cur = await this.begin(record);
        if (cur === undefined || cur.status !== 'running') return cur;
        const left = deadline - this.clock.now();
        if (left <= 0 || this.closed)
          throw new FingerError('E_TIMEOUT', `request "${id}" is still running elsewhere at the caller's deadline`, {
            request_id: id,
          });
        await new Promise<void>((resolve) => {
          const t = this.clock.setTimeout(() => resolve(), Math.min(delay, left));
          w.wake = () => {
            this.clock.clearTimeout(t);
            resolve();
          };
        });
        delay = Math.min(delay * 2, 1000);
      }
    } finally {
      this.waiting--;
      set.delete(w);
      if (set.size === 0) this.waiters.delete(id);
    }
  }

  /** Outcomes held while Redis was down and not yet written. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Stops waiting and flushing; the connection is shared, its owner closes it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.flushTimer !== undefined) this.clock.clearInterval(this.flushTimer);
    this.flushTimer = undefined;
    for (const set of this.waiters.values()) for (const w of set) w.wake();
    if (this.subscribed !== undefined) {
      const sub = this.redis.subscriber();
      sub.off('message', this.onMessage);
      await sub.unsubscribe(this.channel).catch(() => undefined);
    }
  }

  private k(request_id: string): string {
    return this.redis.key('req', request_id);
  }

  private async write(request_id: string, p: Pending): Promise<void> {
    await this.redis.script(
      'request.finish',
      FINISH,
      [this.k(request_id)],
      [p.began, p.done, p.keep_ms, this.channel, request_id],
    );
  }

  private hold(request_id: string, p: Pending, cause: unknown): void {
    if (this.pending.size >= this.max_pending) {
      // bounded: the oldest held outcome is dropped; its id stays "running" until running_ttl_ms
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.logger.error({ request_id: oldest }, 'dropped a held request outcome (redis down too long)');
    }
    this.pending.set(request_id, p);
    this.logger.warn({ request_id, err: (cause as Error).message }, 'request outcome held until redis returns');
    this.flushTimer ??= this.clock.setInterval(() => void this.flush(), 250);
  }

  private orphan(request_id: string, json: string): void {
    if (this.orphans.size >= this.max_pending) this.orphans.delete(this.orphans.keys().next().value as string);
    this.orphans.set(request_id, json);
    this.flushTimer ??= this.clock.setInterval(() => void this.flush(), 250);
  }

  private async flush(): Promise<void> {
    if (!this.redis.available) return;
    for (const [id, p] of [...this.pending]) {
      try {
        await this.write(id, p);
        this.pending.delete(id);
      } catch {
        return;
      }
    }
    for (const [id, json] of [...this.orphans]) {
      try {
        await this.redis.script('request.forget', FORGET, [this.k(id)], [json, this.channel, id]);
        this.orphans.delete(id);
      } catch {
        return;
      }
    }
    if (this.pending.size === 0 && this.orphans.size === 0 && this.flushTimer !== undefined) {
      this.clock.clearInterval(this.flushTimer);
      this.flushTimer = undefined;
    }
  }

  private subscribe(): Promise<void> {
    if (this.subscribed === undefined) {
      const sub = this.redis.subscriber();
      sub.on('message', this.onMessage);
      // wake-ups are an optimisation over polling: a failed SUBSCRIBE is retried next time
      this.subscribed = sub.subscribe(this.channel).then(
        () => undefined,
        () => {
          sub.off('message', this.onMessage);
          this.subscribed = undefined;
        },
      );
    }
    return this.redis.available ? Promise.race([this.subscribed, delay(200)]) : Promise.resolve();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** Field of the stored JSON naming the begin that made it (never handed out). */
const OWNER = '_owner';

function parseRecord(v: unknown): RequestRecord {
  const r = JSON.parse(String(v)) as RequestRecord & { [OWNER]?: string };
  delete r[OWNER];
  return r;
}

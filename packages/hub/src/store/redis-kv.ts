import { randomUUID } from 'node:crypto';

import { type RedisConnection, storeUnavailable } from './redis-client.js';

/** A refusal by the server's ACL: lasting, waiting does not cure it. */
const NOPERM = /^NOPERM|can't publish to the channel/i;
/** What the start-up check publishes on a change channel: not JSON, so every subscriber ignores it. */
const PROBE = 'probe';

/** Deletes a hash field and tells the other daemons, atomically; returns the old value. */
const HDEL_NOTIFY = `local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then
  redis.call('HDEL', KEYS[1], ARGV[1])
  if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
end
return v`;

/**
 * Compare-and-set of a versioned document (`KEYS[1]` version, `KEYS[2]` JSON): written when no
 * version exists yet or the current one is the expected one, with its notice, atomically.
 */
const CAS = `local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 1`;

/** Sets a key unless it has a value; returns the value in force (atomic set-if-absent). */
const CLAIM = `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`;

/** A change as published: the origin lets a store skip its own echo. */
interface Wire {
  o: string;
  c: unknown;
}

/**
 * Primitives for state that every daemon of a cluster shares, under `<prefix><namespace>:`:
 * JSON documents, JSON hash fields, atomic counters, and change notification over pub/sub
 * (`<prefix><namespace>:changes`). The firewall-side stores (safety state, user policy,
 * session approvals) are built on these in the daemon, so neither the hub nor the firewall
 * needs the other.
 *
 * A write that carries a `notify` change publishes it in the same atomic step (MULTI or Lua);
 * subscribers on other connections receive it, the writer's own subscribers do not (the writer
 * notifies its listeners itself, synchronously). Every method rejects with E_STORE_UNAVAILABLE
 * while Redis is unreachable; pub/sub messages sent during an outage are lost, so a subscriber
 * re-reads its state when `onReconnect` fires.
 */
export class RedisKv {
  /** Identifies this store's own messages on the change channel. */
  readonly origin = randomUUID();
  private readonly channel: string;
  private readonly listeners = new Set<(change: unknown) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private subscribed: Promise<void> | undefined;
  private everReady = false;
  private readonly onMessage = (channel: string, message: string) => {
    if (channel !== this.channel) return;
    let w: Wire;
    try {
      w = JSON.parse(message) as Wire;
    } catch {
      return;
    }
    if (w.o === this.origin) return;
    for (const l of this.listeners) {
      try {
        l(w.c);
      } catch {
        // a listener must not break the subscription
      }
    }
  };
  private readonly onReady = () => {
    if (this.everReady) for (const l of this.reconnectListeners) l();
    this.everReady = true;
  };

  constructor(
    private readonly redis: RedisConnection,
    private readonly namespace: string,
  ) {
    this.channel = this.k('changes');
  }

  /** The full key of `key` in this namespace. */
  k(key: string): string {
    return this.redis.key(this.namespace, key);
  }

  async getJson<T>(key: string): Promise<T | undefined> {
    const v = await this.redis.run(`${this.namespace}.get`, (c) => c.get(this.k(key)));
    return v === null ? undefined : (JSON.parse(v) as T);
  }

  /** Writes a JSON document (`ttl_ms`: expires) and publishes `notify` in the same MULTI. */
  async setJson(key: string, value: unknown, notify?: unknown, ttl_ms?: number): Promise<void> {
    const json = JSON.stringify(value);
    await this.redis.run(`${this.namespace}.set`, async (c) => {
      const m = c.multi();
      if (ttl_ms !== undefined) m.set(this.k(key), json, 'PX', Math.max(1, Math.ceil(ttl_ms)));
      else m.set(this.k(key), json);
      if (notify !== undefined) m.publish(this.channel, this.wire(notify));
      check(await m.exec());
    });
  }

  /** Deletes a key; true when it existed. Publishes `notify` in the same MULTI. */
  async del(key: string, notify?: unknown): Promise<boolean> {
    return this.redis.run(`${this.namespace}.del`, async (c) => {
      const m = c.multi().del(this.k(key));
      if (notify !== undefined) m.publish(this.channel, this.wire(notify));
      const r = check(await m.exec());
      return r[0] === 1;
    });
  }

  /** A versioned document written by {@link casJson}: its version and value, or undefined. */
  async getVersioned<T>(key: string): Promise<{ version: string; value: T } | undefined> {
    const [v, doc] = await this.redis.run(`${this.namespace}.get`, (c) =>
      c.mget(this.k(`${key}:version`), this.k(key)),
    );
    return v == null || doc == null ? undefined : { version: v, value: JSON.parse(doc) as T };
  }

  /**
   * Writes a versioned document only if its current version is `expected` (or it has none yet),
   * publishing `notify` in the same step. False when another writer got there first.
   */
  async casJson(key: string, expected: string, version: string, value: unknown, notify?: unknown): Promise<boolean> {
    const r = await this.redis.script(
      `${this.namespace}.cas`,
      CAS,
      [this.k(`${key}:version`), this.k(key)],
      [expected, version, JSON.stringify(value), this.channel, notify === undefined ? '' : this.wire(notify)],
    );
    return r === 1;
  }

  /** Up to `max` JSON documents whose keys start with `prefix` (SCAN, then MGET), with their keys minus the namespace. */
  async scanJson<T>(prefix: string, max: number): Promise<[string, T][]> {
    return this.redis.run(`${this.namespace}.scan`, async (c) => {
      const base = this.k('');
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await c.scan(cursor, 'MATCH', `${this.k(prefix)}*`, 'COUNT', 500);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0' && keys.length < max);
      const out: [string, T][] = [];
      const take = keys.slice(0, max);
      if (take.length === 0) return out;
      const values = await c.mget(...take);
      take.forEach((k, i) => {
        const v = values[i];
        if (v != null) out.push([k.slice(base.length), JSON.parse(v) as T]);
      });
      return out;
    });
  }

  /** A plain string value; undefined when missing. */
  async getString(key: string): Promise<string | undefined> {
    const v = await this.redis.run(`${this.namespace}.get`, (c) => c.get(this.k(key)));
    return v ?? undefined;
  }

  /**
   * Sets `key` to `value` unless it already has a value, atomically; returns the value in force
   * (`value` when this call set it).
   */
  async claim(key: string, value: string): Promise<string> {
    const r = await this.redis.script(`${this.namespace}.claim`, CLAIM, [this.k(key)], [value]);
    return String(r);
  }

  /** Adds `delta` atomically (INCRBYFLOAT: integers and fractions alike); returns the new value. */
  async incrBy(key: string, delta: number): Promise<number> {
    return this.redis.run(`${this.namespace}.incr`, async (c) => Number(await c.incrbyfloat(this.k(key), delta)));
  }

  /** A counter's value; 0 when missing. */
  async getNumber(key: string): Promise<number> {
    const v = await this.redis.run(`${this.namespace}.get`, (c) => c.get(this.k(key)));
    return v === null ? 0 : Number(v);
  }

  async hgetJson<T>(hash: string, field: string): Promise<T | undefined> {
    const v = await this.redis.run(`${this.namespace}.hget`, (c) => c.hget(this.k(hash), field));
    return v === null ? undefined : (JSON.parse(v) as T);
  }

  /** Every field of a JSON hash. */
  async hgetAllJson<T>(hash: string): Promise<Record<string, T>> {
    const all = await this.redis.run(`${this.namespace}.hgetall`, (c) => c.hgetall(this.k(hash)));
    const out: Record<string, T> = {};
    for (const [f, v] of Object.entries(all)) out[f] = JSON.parse(v) as T;
    return out;
  }

  /** Sets a JSON hash field and publishes `notify` in the same MULTI. */
  async hsetJson(hash: string, field: string, value: unknown, notify?: unknown): Promise<void> {
    await this.redis.run(`${this.namespace}.hset`, async (c) => {
      const m = c.multi().hset(this.k(hash), field, JSON.stringify(value));
      if (notify !== undefined) m.publish(this.channel, this.wire(notify));
      check(await m.exec());
    });
  }

  /** Deletes a hash field, returning its old value; publishes `notify` only when it existed. */
  async hdelJson<T>(hash: string, field: string, notify?: unknown): Promise<T | undefined> {
    const v = await this.redis.script(
      `${this.namespace}.hdel`,
      HDEL_NOTIFY,
      [this.k(hash)],
      [field, this.channel, notify === undefined ? '' : this.wire(notify)],
    );
    return typeof v === 'string' ? (JSON.parse(v) as T) : undefined;
  }

  /** Publishes a change to the other daemons. */
  async publish(change: unknown): Promise<void> {
    await this.redis.run(`${this.namespace}.publish`, (c) => c.publish(this.channel, this.wire(change)));
  }

  /**
   * Calls `listener` with every change another daemon publishes. Resolves once the subscription
   * is active on the server (or after `timeout_ms` when Redis is down: it activates on reconnect).
   * Rejects with E_STORE_UNAVAILABLE when the server's ACL refuses the user the channel (SUBSCRIBE,
   * or a probe PUBLISH of a non-JSON message that every subscriber ignores).
   */
  async subscribe(listener: (change: unknown) => void, timeout_ms = 2000): Promise<() => void> {
    if (this.subscribed === undefined) {
      const sub = this.redis.subscriber();
      sub.on('message', this.onMessage);
      this.everReady = sub.status === 'ready';
      sub.on('ready', this.onReady);
      this.subscribed = sub.subscribe(this.channel).then(() => undefined);
      this.subscribed.catch(() => undefined);
    }
    let refused: Error | undefined;
    await Promise.race([
      this.subscribed.catch((e: unknown) => {
        refused = e instanceof Error ? e : new Error(String(e));
      }),
      new Promise((r) => setTimeout(r, timeout_ms).unref()),
    ]);
    // the ACL may let the user read and write keys but not use the channel: then no change made
    // here would reach the other daemons (a halt included) — refuse now, not at the first halt
    if (refused === undefined && this.redis.available)
      await this.redis
        .run(`${this.namespace}.publish`, (c) => c.publish(this.channel, PROBE))
        .catch((e: unknown) => {
          const cause = (e as { cause?: unknown }).cause;
          refused = cause instanceof Error ? cause : (e as Error);
        });
    if (refused !== undefined && NOPERM.test(refused.message)) {
      const sub = this.redis.subscriber();
      sub.off('message', this.onMessage);
      sub.off('ready', this.onReady);
      this.subscribed = undefined;
      throw storeUnavailable(
        `${this.namespace}.subscribe`,
        refused,
        `${refused.message} — the Redis user may not use the channel "${this.channel}" (allow it in the ACL, e.g. &${this.redis.prefix}*)`,
      );
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `fn` each time the subscriber connection is back after an outage (re-read state then). */
  onReconnect(fn: () => void): () => void {
    this.reconnectListeners.add(fn);
    return () => this.reconnectListeners.delete(fn);
  }

  /** Stops listening; the connection is shared, its owner closes it. */
  async close(): Promise<void> {
    this.listeners.clear();
    this.reconnectListeners.clear();
    if (this.subscribed !== undefined) {
      const sub = this.redis.subscriber();
      sub.off('message', this.onMessage);
      sub.off('ready', this.onReady);
      await sub.unsubscribe(this.channel).catch(() => undefined);
      this.subscribed = undefined;
    }
  }

  private wire(change: unknown): string {
    return JSON.stringify({ o: this.origin, c: change } satisfies Wire);
  }
}

/** The replies of a MULTI; throws the first command error (E_STORE_UNAVAILABLE via run()). */
function check(r: [Error | null, unknown][] | null): unknown[] {
  if (r === null) throw new Error('transaction aborted');
  for (const [e] of r) if (e) throw e;
  return r.map(([, v]) => v);
}

// One Redis connection for the distributed stores: keys under `finger:<cluster>:`, no offline
// queue (a command issued while Redis is down fails at once with E_STORE_UNAVAILABLE instead of
// waiting for a reconnect that may never come), a bounded command timeout, and reconnection with
// backoff so the stores recover by themselves when the server returns.

import { createHash } from 'node:crypto';

import { Redis, type RedisOptions } from 'ioredis';

import { FingerError, isFingerError } from '@finger/protocol';

import { type Logger, silentLogger } from '../logger.js';
import { parseRedisUrl, type RedisUrlParts } from '../redis-url.js';
import { withoutCredentials } from '../url-credentials.js';
import { DB_REFUSED, redisCause } from './redis-cause.js';

/** How {@link RedisConnection} connects. */
export interface RedisConnectionOptions {
  /** `redis://[user:pass@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Cluster name; every key starts with `finger:<cluster>:`. */
  cluster: string;
  /** Replaces the `finger:<cluster>:` prefix (tests use a random one). Must end with `:`. */
  prefix?: string;
  /** A command without a reply after this long fails with E_STORE_UNAVAILABLE. Default 2000 ms. */
  command_timeout_ms?: number;
  /** Connect timeout per attempt. Default 2000 ms. */
  connect_timeout_ms?: number;
  /** Upper bound of the reconnect backoff. Default 1000 ms (so recovery follows the server within ~1 s). */
  max_reconnect_delay_ms?: number;
  logger?: Logger;
}

/** SHA1 of each Lua script, computed once. */
const SHAS = new Map<string, string>();

/** Cluster names become key segments: keep them to a safe alphabet. */
const CLUSTER_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** The ioredis connection options of a parsed URL (no URL string: ioredis's own parser is lenient). */
export function redisTarget(parts: RedisUrlParts): RedisOptions {
  return {
    host: parts.host,
    port: parts.port,
    db: parts.db,
    ...(parts.username !== undefined ? { username: parts.username } : {}),
    ...(parts.password !== undefined ? { password: parts.password } : {}),
    ...(parts.tls ? { tls: {} } : {}),
  };
}

/** A refusal of the server that waiting does not cure (credentials, database index). */
const LASTING = /^(NOAUTH|WRONGPASS)|invalid password/i;

/**
 * A shared Redis connection (plus a lazily made subscriber connection for pub/sub) with the
 * failure behaviour of distributed mode: commands fail fast with E_STORE_UNAVAILABLE while Redis
 * is unreachable, and work again once it is back. Throws E_INVALID_ARGS for a bad cluster name
 * or a malformed URL.
 */
export class RedisConnection {
  readonly client: Redis;
  /** Key prefix, `finger:<cluster>:` by default. */
  readonly prefix: string;
  /** The URL without credentials: what messages and logs show. */
  readonly url: string;
  private readonly parts: RedisUrlParts;
  private sub: Redis | undefined;
  private readonly logger: Logger;
  private closed = false;
  private wasReady = false;
  /** The last connection error, explained ({@link redisCause}). */
  private lastError: string | undefined;
  /** Set when the server refused the URL's database index: no command runs (it would hit db 0). */
  private refused: string | undefined;

  constructor(private readonly options: RedisConnectionOptions) {
    if (!CLUSTER_RE.test(options.cluster))
      throw new FingerError('E_INVALID_ARGS', `cluster name "${options.cluster}" must match ${CLUSTER_RE.source}`, {
        cluster: options.cluster,
      });
    this.parts = parseRedisUrl(options.url);
    this.url = withoutCredentials(options.url);
    this.prefix = options.prefix ?? `finger:${options.cluster}:`;
    this.logger = (options.logger ?? silentLogger).child({ component: 'redis' });
    this.client = this.make(false);
  }

  private make(subscriber: boolean): Redis {
    const maxDelay = this.options.max_reconnect_delay_ms ?? 1000;
    const c = new Redis({
      ...redisTarget(this.parts),
      lazyConnect: true,
      // a subscriber may queue its (idempotent) SUBSCRIBE until connected; commands never queue
      enableOfflineQueue: subscriber,
      // a write whose reply was lost is never sent again behind our back (it may have run)
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: subscriber ? undefined : (this.options.command_timeout_ms ?? 2000),
      connectTimeout: this.options.connect_timeout_ms ?? 2000,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), maxDelay),
      enableReadyCheck: true,
      // commands issued in the same tick go out in one write (many concurrent calls)
      enableAutoPipelining: !subscriber,
    });
    c.on('error', (e: Error) => {
      this.logger.debug({ err: e.message, subscriber }, 'redis connection error');
      if (subscriber) return;
      this.lastError = redisCause(e, this.parts);
      // ioredis goes on with database 0 when its SELECT is refused: refuse every command instead
      if (DB_REFUSED.test(e.message)) this.refused = this.lastError;
    });
    c.on('ready', () => {
      if (!subscriber && this.wasReady) this.logger.info({ prefix: this.prefix }, 'redis reconnected');
      if (!subscriber) this.wasReady = true;
    });
    c.on('end', () => {
      if (!this.closed) this.logger.warn({ subscriber }, 'redis connection ended');
    });
    c.connect().catch(() => undefined);
    return c;
  }

  /** True while the command connection is ready (and on the URL's database). */
  get available(): boolean {
    return !this.closed && this.client.status === 'ready' && this.refused === undefined;
  }

  /** The last connection error seen, explained (`connect ECONNREFUSED … — connection refused: …`). */
  get lastErrorCause(): string | undefined {
    return this.refused ?? this.lastError;
  }

  /** The key `<prefix><parts joined by ':'>`. */
  key(...parts: string[]): string {
    return this.prefix + parts.join(':');
  }

  /**
   * Runs Redis commands; any client failure (down, timeout, connection lost mid-command) becomes
   * E_STORE_UNAVAILABLE (details `{op}`), a FingerError thrown inside `fn` passes unchanged.
   */
  async run<T>(op: string, fn: (c: Redis) => Promise<T>): Promise<T> {
    if (this.closed) throw new FingerError('E_STORE_UNAVAILABLE', `redis store closed (${op})`, { op });
    if (this.refused !== undefined) throw storeUnavailable(op, this.refused, `${this.url}: ${this.refused}`);
    try {
      return await fn(this.client);
    } catch (e) {
      if (isFingerError(e)) throw e;
      // ioredis says "Stream isn't writeable and enableOfflineQueue options is false": say what it means
      if (this.client.status !== 'ready' || (e instanceof Error && e.message.includes('enableOfflineQueue')))
        throw storeUnavailable(op, e, this.notConnected());
      throw storeUnavailable(op, e);
    }
  }

  private notConnected(): string {
    const last = this.lastErrorCause;
    return `not connected to ${this.url}${last !== undefined ? ` (last error: ${last})` : ''}`;
  }

  /**
   * Runs a Lua script by its SHA1 (EVALSHA), loading it with EVAL the first time or after a
   * server restart (NOSCRIPT). Failures as in {@link run}.
   */
  script(op: string, lua: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    let sha = SHAS.get(lua);
    if (sha === undefined) SHAS.set(lua, (sha = createHash('sha1').update(lua).digest('hex')));
    const h = sha;
    return this.run(op, async (c) => {
      try {
        return await c.evalsha(h, keys.length, ...keys, ...args);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
        return c.eval(lua, keys.length, ...keys, ...args);
      }
    });
  }

  /**
   * The subscriber connection (made on first use; resubscribes by itself after a reconnect).
   * Use it only for SUBSCRIBE/PSUBSCRIBE and message listeners.
   */
  subscriber(): Redis {
    this.sub ??= this.make(true);
    return this.sub;
  }

  /**
   * For a start: waits until the command connection is ready (at most `timeout_ms`), then makes
   * sure the server has the URL's database. Rejects with E_STORE_UNAVAILABLE naming the URL
   * (without credentials) and the last cause seen (`redis is unavailable at redis://h:6379: WRONGPASS
   * … — authentication refused: …`); a refusal of the password or the database index ends the
   * wait at once (waiting does not cure it). Leaves the connection open either way.
   */
  async open(timeout_ms: number): Promise<void> {
    const fail = (cause: string | undefined): FingerError =>
      new FingerError(
        'E_STORE_UNAVAILABLE',
        `redis is unavailable at ${this.url}: ${cause ?? `no connection within ${timeout_ms} ms`}`,
        { url: this.url, ...(cause !== undefined ? { cause } : {}) },
      );
    if (this.closed) throw fail('the connection is closed');
    if (this.refused === undefined && this.client.status !== 'ready') {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          this.client.off('ready', done);
          this.client.off('error', onError);
          resolve();
        };
        const onError = (e: Error) => {
          if (LASTING.test(e.message) || DB_REFUSED.test(e.message)) done();
        };
        const t = setTimeout(done, timeout_ms);
        t.unref();
        this.client.on('ready', done);
        this.client.on('error', onError);
      });
    }
    if (this.refused !== undefined || this.client.status !== 'ready') throw fail(this.lastErrorCause);
    if (this.parts.db !== 0) {
      try {
        // ioredis selected it already, but reports a refusal only as an 'error' event: ask again
        await this.client.select(this.parts.db);
      } catch (e) {
        if (e instanceof Error && DB_REFUSED.test(e.message)) this.refused = redisCause(e, this.parts);
        throw fail(this.refused ?? redisCause(e, this.parts));
      }
    }
  }

  /** Waits until the command connection is ready, at most `timeout_ms`; false when it is not. */
  async ready(timeout_ms: number): Promise<boolean> {
    if (this.available) return true;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(t);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const t = setTimeout(() => done(false), timeout_ms);
      t.unref();
      this.client.on('ready', onReady);
    });
  }

  /** Closes both connections; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const quit = async (c: Redis) => {
      try {
        if (c.status === 'ready') await c.quit();
        else c.disconnect();
      } catch {
        c.disconnect();
      }
    };
    await Promise.all([quit(this.client), ...(this.sub ? [quit(this.sub)] : [])]);
  }
}

/**
 * E_STORE_UNAVAILABLE for a failed Redis operation: `redis is unavailable (<op>): <reason>`,
 * `reason` defaulting to the cause's message.
 */
export function storeUnavailable(op: string, cause: unknown, reason?: string): FingerError {
  const text = reason ?? (cause instanceof Error ? cause.message : String(cause));
  return new FingerError('E_STORE_UNAVAILABLE', `redis is unavailable (${op}): ${text}`, { op }, { cause });
}

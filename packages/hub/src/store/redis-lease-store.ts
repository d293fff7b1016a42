import type { LeaseStore } from './lease-store.js';
import type { RedisConnection } from './redis-client.js';

/** Extends only when the caller holds the lease: compare, then PEXPIRE (atomic in Redis). */
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes only when the caller holds the lease: compare, then DEL (atomic in Redis). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Leases in Redis under `<prefix>lease:<key>`: acquire is `SET NX PX`, extension and release are
 * Lua compare-and-act scripts, so only the holder can extend or release and Redis expires a
 * lease whose holder vanished. Every method rejects with E_STORE_UNAVAILABLE while Redis is down.
 */
export class RedisLeaseStore implements LeaseStore {
  constructor(private readonly redis: RedisConnection) {}

  async acquire(key: string, holder: string, ttl_ms: number): Promise<boolean> {
    const r = await this.redis.run('lease.acquire', (c) => c.set(this.k(key), holder, 'PX', ttlOf(ttl_ms), 'NX'));
    return r === 'OK';
  }

  async extend(key: string, holder: string, ttl_ms: number): Promise<boolean> {
    const r = await this.redis.script('lease.extend', EXTEND, [this.k(key)], [holder, ttlOf(ttl_ms)]);
    return r === 1;
  }

  async release(key: string, holder: string): Promise<boolean> {
    const r = await this.redis.script('lease.release', RELEASE, [this.k(key)], [holder]);
    return r === 1;
  }

  async holder(key: string): Promise<string | undefined> {
    const r = await this.redis.run('lease.holder', (c) => c.get(this.k(key)));
    return r ?? undefined;
  }

  /** The connection is shared; its owner closes it. */
  async close(): Promise<void> {}

  private k(key: string): string {
    return this.redis.key('lease', key);
  }
}

/** Redis refuses PX 0 or negative: a lease lives at least 1 ms. */
function ttlOf(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/**
 * Named leases with a holder and a time to live: one holder at a time per key, extended only by
 * its holder, released only by its holder, gone by themselves once they expire. Memory in the
 * embedded setup; Redis in distributed mode (`SET NX PX` + Lua), so a lease holds across daemons.
 *
 * Implementations reject with E_STORE_UNAVAILABLE when their backing store cannot be reached —
 * never with a guess (a lease must not be granted twice because a store was down).
 */
export interface LeaseStore {
  /** Takes `key` for `holder` for `ttl_ms`; false when someone holds it (a holder re-acquiring is refused too). */
  acquire(key: string, holder: string, ttl_ms: number): Promise<boolean>;
  /** Pushes the expiry to `ttl_ms` from now; false unless `holder` holds `key` right now. */
  extend(key: string, holder: string, ttl_ms: number): Promise<boolean>;
  /** Drops the lease; false unless `holder` held it (an expired or foreign lease is left alone). */
  release(key: string, holder: string): Promise<boolean>;
  /** The current holder, or undefined. */
  holder(key: string): Promise<string | undefined>;
  close(): Promise<void>;
}

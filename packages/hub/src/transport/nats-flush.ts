import type { NatsConnection } from 'nats';

/**
 * Writes what nats.js holds for the socket now. nats.js writes a publish from a microtask queued
 * at the first publish of a turn, after the rest of the publishing code and the microtasks queued
 * before it have run (≈ 3–4 µs of a lone call's bookkeeping on each side); a lone request or reply
 * — nothing to batch with — goes out at once instead, and that bookkeeping runs while it travels.
 * The later microtask finds nothing left to write. Uses nats.js's `protocol.flushPending` (nats
 * 2.29, not public API): where a version lacks it this does nothing and the microtask writes.
 */
export function flushNow(nc: NatsConnection): void {
  (nc as unknown as { protocol?: { flushPending?: () => void } }).protocol?.flushPending?.();
}

import type { Clock } from './clock.js';

/** What the lease table calls back when a lease runs out. */
export interface LeaseHolder {
  /** Called once when the lease expires (`expires_at` passed) or the deadline passes. */
  onLeaseExpired(reason: 'lease' | 'deadline'): void;
}

/**
 * Per-call leases in a preallocated slot table swept by one timer — no timer and no map entry
 * per call (a `setTimeout` per call halves hub throughput; see NOTES.md). A slot holds the
 * lease's expiry, the caller's deadline, the holder to notify, and the release callbacks of
 * whatever was acquired under the lease.
 */
export class LeaseTable {
  private expires: Float64Array;
  private deadlines: Float64Array;
  private holders: (LeaseHolder | undefined)[];
  private holdings: ((() => void)[] | undefined)[];
  private gens: Uint32Array;
  private free: number[] = [];
  private high = 0;
  private activeCount = 0;
  private timer: unknown;
  expiredTotal = 0;

  constructor(
    private readonly clock: Clock,
    private readonly sweepMs: number,
    initialSize = 1024,
  ) {
    this.expires = new Float64Array(initialSize);
    this.deadlines = new Float64Array(initialSize);
    this.holders = new Array<LeaseHolder | undefined>(initialSize);
    this.holdings = new Array<(() => void)[] | undefined>(initialSize);
    this.gens = new Uint32Array(initialSize);
  }

  /** Number of leases currently held. */
  get active(): number {
    return this.activeCount;
  }

  /** Starts the sweeper (one interval for the whole table). */
  start(): void {
    if (this.timer === undefined) this.timer = this.clock.setInterval(() => this.sweep(), this.sweepMs);
  }

  /** Stops the sweeper. Leases still held stay in the table. */
  stop(): void {
    if (this.timer !== undefined) this.clock.clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes a slot; returns its index. `expiresAt` ≤ `deadline` is the caller's job. */
  acquire(holder: LeaseHolder, expiresAt: number, deadline: number): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.high === this.expires.length) this.grow();
      slot = this.high++;
    }
    this.expires[slot] = expiresAt;
    this.deadlines[slot] = deadline;
    this.holders[slot] = holder;
    this.activeCount++;
    return slot;
  }

  /** Generation of a slot; changes on every release so stale references can be detected. */
  gen(slot: number): number {
    return this.gens[slot]!;
  }

  /** True when `slot` still holds the lease of generation `gen`. */
  holds(slot: number, gen: number): boolean {
    return this.gens[slot] === gen && this.holders[slot] !== undefined;
  }

  /** Moves a lease's expiry to `ttlMs` from now, never past its deadline. Returns the new expiry. */
  extend(slot: number, ttlMs: number): number {
    const at = Math.min(this.clock.now() + ttlMs, this.deadlines[slot]!);
    this.expires[slot] = at;
    return at;
  }

  /** Expiry time of a held slot. */
  expiresAt(slot: number): number {
    return this.expires[slot]!;
  }

  /** Registers something to release when the lease ends (expiry or normal release). */
  hold(slot: number, release: () => void): void {
    const list = this.holdings[slot];
    if (list === undefined) this.holdings[slot] = [release];
    else list.push(release);
  }

  /** Ends the lease: runs its release callbacks and frees the slot. Idempotent per generation. */
  release(slot: number): void {
    if (this.holders[slot] === undefined) return;
    this.holders[slot] = undefined;
    const list = this.holdings[slot];
    if (list !== undefined) {
      this.holdings[slot] = undefined;
      for (const fn of list) {
        try {
          fn();
        } catch {
          // a release callback must never break the table
        }
      }
    }
    this.gens[slot] = (this.gens[slot]! + 1) >>> 0;
    this.activeCount--;
    this.free.push(slot);
  }

  /** Releases every held lease and returns their holders (shutdown: the caller fails them). */
  releaseAll(): LeaseHolder[] {
    const out: LeaseHolder[] = [];
    for (let i = 0; i < this.high; i++) {
      const holder = this.holders[i];
      if (holder === undefined) continue;
      this.release(i);
      out.push(holder);
    }
    return out;
  }

  /** The holders of every held lease, without releasing them (the kill switch walks them). */
  heldBy(): LeaseHolder[] {
    const out: LeaseHolder[] = [];
    for (let i = 0; i < this.high; i++) {
      const holder = this.holders[i];
      if (holder !== undefined) out.push(holder);
    }
    return out;
  }

  /** Expires every lease whose time has come. Called by the timer; callable directly in tests. */
  sweep(now: number = this.clock.now()): void {
    if (this.activeCount === 0) {
      this.high = 0;
      this.free.length = 0;
      return;
    }
    for (let i = 0; i < this.high; i++) {
      const holder = this.holders[i];
      if (holder === undefined || this.expires[i]! > now) continue;
      const reason = this.deadlines[i]! <= now ? 'deadline' : 'lease';
      this.expiredTotal++;
      this.release(i);
      try {
        holder.onLeaseExpired(reason);
      } catch {
        // the holder reports its own failures
      }
    }
  }

  private grow(): void {
    const n = this.expires.length * 2;
    const e = new Float64Array(n);
    e.set(this.expires);
    this.expires = e;
    const d = new Float64Array(n);
    d.set(this.deadlines);
    this.deadlines = d;
    const g = new Uint32Array(n);
    g.set(this.gens);
    this.gens = g;
    this.holders.length = n;
    this.holdings.length = n;
  }
}

import type { Clock } from '../clock.js';
import type { LeaseStore } from './lease-store.js';

interface Held {
  holder: string;
  until: number;
}

/**
 * Leases in one process (the embedded default). Bounded by `max_leases`: a full store prunes its
 * expired leases and, if still full, refuses new ones (acquire → false) rather than growing.
 */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, Held>();

  constructor(
    private readonly clock: Clock,
    private readonly max_leases = 100_000,
  ) {}

  async acquire(key: string, holder: string, ttl_ms: number): Promise<boolean> {
    if (this.live(key) !== undefined) return false;
    if (this.leases.size >= this.max_leases) {
      this.prune();
      if (this.leases.size >= this.max_leases) return false;
    }
    this.leases.set(key, { holder, until: this.clock.now() + ttl_ms });
    return true;
  }

  async extend(key: string, holder: string, ttl_ms: number): Promise<boolean> {
    const l = this.live(key);
    if (l === undefined || l.holder !== holder) return false;
    l.until = this.clock.now() + ttl_ms;
    return true;
  }

  async release(key: string, holder: string): Promise<boolean> {
    const l = this.live(key);
    if (l === undefined || l.holder !== holder) return false;
    this.leases.delete(key);
    return true;
  }

  async holder(key: string): Promise<string | undefined> {
    return this.live(key)?.holder;
  }

  async close(): Promise<void> {
    this.leases.clear();
  }

  private live(key: string): Held | undefined {
    const l = this.leases.get(key);
    if (l === undefined) return undefined;
    if (l.until <= this.clock.now()) {
      this.leases.delete(key);
      return undefined;
    }
    return l;
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [k, l] of this.leases) if (l.until <= now) this.leases.delete(k);
  }
}

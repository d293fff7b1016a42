import type { Clock } from '../clock.js';
import type { RequestRecord } from '../hub-types.js';
import type { RequestOutcome, RequestStore } from './request-store.js';

interface Entry {
  record: RequestRecord;
  /** Epoch ms after which a finished record is forgotten. */
  until: number;
}

/**
 * Request records in memory, bounded by count (`max_records`: the oldest finished records are
 * evicted first, in batches, from a FIFO of finishing order — no walk over the whole map) and by
 * age (`ttl_ms` after finishing). Running records are never evicted.
 */
export class MemoryRequestStore implements RequestStore {
  private readonly entries = new Map<string, Entry>();
  /** Ids in the order they finished; `head` is the next to evict. */
  private finished: string[] = [];
  private head = 0;

  constructor(
    private readonly clock: Clock,
    private readonly max_records: number,
    private readonly ttl_ms: number,
  ) {}

  async begin(record: RequestRecord): Promise<RequestRecord | undefined> {
    const existing = this.peek(record.request_id);
    if (existing !== undefined) return existing;
    this.entries.set(record.request_id, { record, until: Number.POSITIVE_INFINITY });
    if (this.entries.size > this.max_records) this.evict();
    return undefined;
  }

  async finish(
    request_id: string,
    outcome: RequestOutcome,
    finished_at: string,
    keep_ms: number = this.ttl_ms,
  ): Promise<void> {
    const e = this.entries.get(request_id);
    if (e === undefined) return;
    const r = e.record;
    r.status = outcome.ok ? 'succeeded' : 'failed';
    r.finished_at = finished_at;
    if (outcome.ok) r.result = outcome.result;
    else r.error = outcome.error;
    e.until = this.clock.now() + keep_ms;
    this.finished.push(request_id);
  }

  async get(request_id: string): Promise<RequestRecord | undefined> {
    return this.peek(request_id);
  }

  async forget(request_id: string): Promise<void> {
    this.entries.delete(request_id);
  }

  peek(request_id: string): RequestRecord | undefined {
    const e = this.entries.get(request_id);
    if (e === undefined) return undefined;
    if (e.until <= this.clock.now()) {
      this.entries.delete(request_id);
      return undefined;
    }
    return e.record;
  }

  /** Drops expired records; called periodically by the hub. */
  prune(): void {
    const now = this.clock.now();
    for (const [id, e] of this.entries) if (e.until <= now) this.entries.delete(id);
    // records that left by age (or were forgotten) still have their ids in the FIFO, and under
    // max_records evict() never runs to pass them: drop them, or the FIFO grows by one per call
    if (this.finished.length - this.head > this.entries.size) {
      this.finished = this.finished.slice(this.head).filter((id) => this.entries.has(id));
      this.head = 0;
    } else this.compact();
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.finished = [];
    this.head = 0;
  }

  /** Evicts finished records, oldest first, down to 90% of the bound (so it runs rarely). */
  private evict(): void {
    const target = Math.floor(this.max_records * 0.9);
    while (this.entries.size > target && this.head < this.finished.length) {
      const id = this.finished[this.head++]!;
      const e = this.entries.get(id);
      if (e !== undefined && e.record.status !== 'running') this.entries.delete(id);
    }
    this.compact();
  }

  private compact(): void {
    if (this.head > 4096 && this.head * 2 > this.finished.length) {
      this.finished = this.finished.slice(this.head);
      this.head = 0;
    }
  }
}

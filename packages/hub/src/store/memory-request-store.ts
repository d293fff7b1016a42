import type { Clock } from '../clock.js';
import type { RequestRecord } from '../hub-types.js';
import type { RequestOutcome, RequestStore } from './request-store.js';

interface Entry {
  record: RequestRecord;
  /** Epoch ms after which a finished record is forgotten. */
  until: number;
}

/**
 * Request records in memory, bounded by count (`max_records`, oldest finished records evicted
 * first) and by age (`ttl_ms` after finishing). Running records are never evicted.
 */
export class MemoryRequestStore implements RequestStore {
  private readonly entries = new Map<string, Entry>();

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

  async finish(request_id: string, outcome: RequestOutcome, finished_at: string): Promise<void> {
    const e = this.entries.get(request_id);
    if (e === undefined) return;
    const r = e.record;
    r.status = outcome.ok ? 'succeeded' : 'failed';
    r.finished_at = finished_at;
    if (outcome.ok) r.result = outcome.result;
    else r.error = outcome.error;
    e.until = this.clock.now() + this.ttl_ms;
    // move to the end so eviction order follows finishing order
    this.entries.delete(request_id);
    this.entries.set(request_id, e);
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
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  private evict(): void {
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.max_records) return;
      if (e.record.status !== 'running') this.entries.delete(id);
    }
  }
}

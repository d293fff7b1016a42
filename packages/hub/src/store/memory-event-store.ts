import type { FingerEvent } from '@finger/protocol';

import type { EventFilter } from '../events/event-bus.js';
import { type EventStore, matchesFilter, requestPath } from './event-store.js';

/** Options of {@link MemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Most events kept; the oldest fall off first. Default 10,000. */
  capacity?: number;
}

/**
 * A bounded in-memory ring of events: the default store when nothing is persisted (embedded
 * mode, tests) and the recent-events tail of {@link FileEventStore}. Holds at most `capacity`
 * events; older ones are overwritten and counted in {@link MemoryEventStore.evicted}.
 * The synchronous methods (`add`, `pathOf`, `latest`) exist for callers on a hot path.
 */
export class MemoryEventStore implements EventStore {
  readonly capacity: number;
  private readonly slots: (FingerEvent | undefined)[];
  private start = 0;
  private count = 0;
  private evictedCount = 0;

  constructor(options: MemoryEventStoreOptions = {}) {
    const cap = options.capacity ?? 10_000;
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`capacity must be a positive integer, got ${cap}`);
    this.capacity = cap;
    this.slots = new Array<FingerEvent | undefined>(cap);
  }

  /** Events currently held. */
  get size(): number {
    return this.count;
  }

  /** Events overwritten since creation because the ring was full. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Adds one event synchronously, overwriting the oldest when full. */
  add(event: FingerEvent): void {
    if (this.count < this.capacity) {
      this.slots[(this.start + this.count) % this.capacity] = event;
      this.count++;
    } else {
      this.slots[this.start] = event;
      this.start = (this.start + 1) % this.capacity;
      this.evictedCount++;
    }
  }

  /** Iterates the held events, oldest first. */
  *[Symbol.iterator](): IterableIterator<FingerEvent> {
    for (let i = 0; i < this.count; i++) yield this.slots[(this.start + i) % this.capacity]!;
  }

  /** Synchronous {@link EventStore.forRequest} over the held events. */
  pathOf(request_id: string): FingerEvent[] {
    return requestPath(this, request_id);
  }

  /** Synchronous {@link EventStore.recent}: newest matches, returned oldest first. */
  latest(filter: EventFilter, limit: number): FingerEvent[] {
    const out: FingerEvent[] = [];
    if (limit <= 0) return out;
    for (let i = this.count - 1; i >= 0 && out.length < limit; i--) {
      const e = this.slots[(this.start + i) % this.capacity]!;
      if (matchesFilter(e, filter)) out.push(e);
    }
    return out.reverse();
  }

  /** Drops every held event (the evicted count is kept). */
  clear(): void {
    this.slots.fill(undefined);
    this.start = 0;
    this.count = 0;
  }

  append(batch: readonly FingerEvent[]): Promise<void> {
    for (const e of batch) this.add(e);
    return Promise.resolve();
  }

  forRequest(request_id: string): Promise<FingerEvent[]> {
    return Promise.resolve(this.pathOf(request_id));
  }

  recent(filter: EventFilter, limit: number): Promise<FingerEvent[]> {
    return Promise.resolve(this.latest(filter, limit));
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

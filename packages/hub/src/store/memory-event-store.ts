import type { FingerEvent } from '@finger/protocol';

import type { EventFilter } from '../events/event-bus.js';
import { type EventStore, matchesFilter, requestPath } from './event-store.js';

/** What a slot holds for JSON that did not parse as an event (queries skip it). */
const NOT_AN_EVENT: FingerEvent = Object.freeze({
  id: '',
  type: 'DEGRADED',
  ts: '',
  request_id: '',
  correlation_id: '',
  session_id: '',
  workflow_id: '',
  target: '',
  data: {},
}) as FingerEvent;

/** The event of held JSON, or NOT_AN_EVENT when it is not a JSON object with a string id. */
function parseHeld(json: string): FingerEvent {
  try {
    const e = JSON.parse(json) as FingerEvent | null;
    return typeof e === 'object' && e !== null && typeof e.id === 'string' ? e : NOT_AN_EVENT;
  } catch {
    return NOT_AN_EVENT;
  }
}

/** Bytes of JSON an event's slot holds; longer JSON is kept as a string. */
const SLOT_BYTES = 512;
/** Slots per chunk of slot bytes (512 KB). */
const CHUNK_SLOTS = 1024;

type Utf8Writer = Buffer & { utf8Write(s: string, offset: number, length: number): number };
/**
 * `buf.write(s, offset, length, 'utf8')`: Node's Buffer also has the `utf8Write` it ends in,
 * which skips the argument juggling (a measurable share of a ring write); used when present.
 */
const utf8Write: (buf: Buffer, s: string, offset: number, length: number) => number =
  typeof (Buffer.prototype as Partial<Utf8Writer>).utf8Write === 'function'
    ? (buf, s, offset, length) => (buf as Utf8Writer).utf8Write(s, offset, length)
    : (buf, s, offset, length) => buf.write(s, offset, length, 'utf8');

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
 *
 * An event added with its JSON (`add(event, json)`, `append(batch, lines)`) is held as that JSON's
 * UTF-8 bytes in a fixed slot of a buffer (longer JSON as the string), and parsed back when a
 * query first reads it (then kept parsed): a ring of thousands of recent events then keeps
 * nothing on the JS heap per event, where a graph of objects and strings per event would be
 * copied and promoted by every scavenge while events stream through (and a ring of strings
 * too). What a query returns is what the JSON says — as the file store and the wire return it.
 */
export class MemoryEventStore implements EventStore {
  readonly capacity: number;
  /** Per slot: the event, its JSON when too long for the slot's bytes, or undefined when in bytes. */
  private readonly slots: (FingerEvent | string | undefined)[];
  /** Per slot: bytes of JSON held in the slot's bytes (0: none). */
  private readonly lens: Int32Array;
  /** Slot bytes, allocated a chunk of CHUNK_SLOTS slots at a time as the ring fills. */
  private readonly chunks: Buffer[] = [];
  private start = 0;
  private count = 0;
  private evictedCount = 0;

  constructor(options: MemoryEventStoreOptions = {}) {
    const cap = options.capacity ?? 10_000;
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`capacity must be a positive integer, got ${cap}`);
    this.capacity = cap;
    this.slots = new Array<FingerEvent | string | undefined>(cap).fill(undefined);
    this.lens = new Int32Array(cap);
  }

  /** Events currently held. */
  get size(): number {
    return this.count;
  }

  /** Events overwritten since creation because the ring was full. */
  get evicted(): number {
    return this.evictedCount;
  }

  /**
   * Adds one event synchronously, overwriting the oldest when full. `json`, when given, is
   * `JSON.stringify(event)` and is what the ring keeps; `event` may then be undefined (an event
   * that came as JSON and was never parsed: a line that turns out not to be an event when a query
   * reads it is skipped).
   */
  add(event: FingerEvent | undefined, json?: string): void {
    let i: number;
    if (this.count < this.capacity) {
      i = (this.start + this.count) % this.capacity;
      this.count++;
    } else {
      i = this.start;
      this.start = (this.start + 1) % this.capacity;
      this.evictedCount++;
    }
    if (json !== undefined && json.length <= SLOT_BYTES) {
      const chunk = this.chunks[(i / CHUNK_SLOTS) | 0] ?? this.grow(i);
      const n = utf8Write(chunk, json, (i % CHUNK_SLOTS) * SLOT_BYTES, SLOT_BYTES);
      // a write stops short only where the next character (≤ 4 bytes) does not fit: one that
      // left room for another is whole; one that did not is whole if n is the JSON's size
      if (n <= SLOT_BYTES - 4 || n === Buffer.byteLength(json, 'utf8')) {
        this.lens[i] = n;
        this.slots[i] = undefined;
        return;
      }
    }
    this.lens[i] = 0;
    this.slots[i] = json ?? event ?? NOT_AN_EVENT;
  }

  /** Iterates the held events, oldest first. */
  *[Symbol.iterator](): IterableIterator<FingerEvent> {
    for (let i = 0; i < this.count; i++) {
      const e = this.at((this.start + i) % this.capacity);
      if (e !== undefined) yield e;
    }
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
      const e = this.at((this.start + i) % this.capacity);
      if (e !== undefined && matchesFilter(e, filter)) out.push(e);
    }
    return out.reverse();
  }

  /** Drops every held event (the evicted count is kept). */
  clear(): void {
    this.slots.fill(undefined);
    this.lens.fill(0);
    this.start = 0;
    this.count = 0;
  }

  /** The event in slot `i`, parsed (once) when it is held as JSON; undefined when that is not an event. */
  private at(i: number): FingerEvent | undefined {
    const len = this.lens[i]!;
    let item = this.slots[i]!;
    if (len > 0) {
      const off = (i % CHUNK_SLOTS) * SLOT_BYTES;
      item = this.chunks[(i / CHUNK_SLOTS) | 0]!.toString('utf8', off, off + len);
      this.lens[i] = 0;
    }
    if (typeof item === 'string') {
      item = parseHeld(item);
      this.slots[i] = item;
    }
    return item === NOT_AN_EVENT ? undefined : item;
  }

  /** Allocates the chunk of slot bytes that holds slot `i`. */
  private grow(i: number): Buffer {
    const c = (i / CHUNK_SLOTS) | 0;
    const slots = Math.min(CHUNK_SLOTS, this.capacity - c * CHUNK_SLOTS);
    const chunk = Buffer.allocUnsafeSlow(slots * SLOT_BYTES);
    this.chunks[c] = chunk;
    return chunk;
  }

  append(batch: readonly (FingerEvent | undefined)[], lines?: readonly string[]): Promise<void> {
    for (let i = 0; i < batch.length; i++) this.add(batch[i], lines?.[i]);
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

import { Events, type Msg, type NatsConnection, type Subscription } from 'nats';

import type { EventType, FingerEvent } from '@finger/protocol';
import { isEventType } from '@finger/protocol';

import type { EventBus } from '../events/event-bus.js';
import { type Logger, silentLogger } from '../logger.js';
import type { DroppedMessage } from '../transport/nats.js';
import { subscribeChecked } from '../transport/nats-subscribe.js';
import { type ClusterSubjects, clusterSubjects, FRAME_MAGIC, type WireAuth } from '../transport/nats-wire.js';

/** A bus that can deliver events built elsewhere (LocalEventBus.publish). */
export interface PublishingEventBus extends EventBus {
  publish(event: FingerEvent, json?: string): void;
}

/** Options of {@link NatsEventBridge}. */
export interface NatsEventBridgeOptions {
  connection: NatsConnection;
  cluster: string;
  auth: WireAuth;
  bus: PublishingEventBus;
  logger?: Logger;
  onDropped?: (info: DroppedMessage) => void;
  /** Most events waiting to go out; past it new events are not sent (counted). Default 10,000. */
  max_queue?: number;
  /** Most events per NATS message. Default 256. */
  batch_max?: number;
  /** How many recent event ids are remembered for deduplication. Default 20,000. */
  dedup_window?: number;
  /** Only these types are bridged (both ways); default all. */
  types?: readonly EventType[];
  /**
   * Whether cluster events are received (default true). `module serve` processes only send:
   * nothing there reads the cluster's events, their NATS permissions should allow their own
   * module's subject only, and daemons then sign their event batches for daemons alone (one
   * HMAC pass over a batch instead of two).
   */
  receive?: boolean;
}

/** Counters of the bridge. */
export interface EventBridgeStats {
  sent: number;
  received: number;
  duplicates: number;
  dropped_outbound: number;
}

/** Event types a `module serve` process may send; anything else from it is dropped. */
const SERVE_EVENT_TYPES = new Set<string>([
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'LEASE_EXPIRED',
  'DEGRADED',
]);

/**
 * Carries events between the daemons of a cluster on `finger.<cluster>.events.<type>`: local
 * events go out in batches (one signed NATS message per type per tick, at most `batch_max`
 * events), remote ones are published on the local bus with their own id, so a WebSocket
 * subscriber on any daemon sees the whole cluster's events once — duplicates (the same id seen
 * again) are dropped. The outbound queue is bounded and nothing is queued while NATS is down
 * (events emitted then are counted in `dropped_outbound`).
 * Events signed only by a `module serve` process are accepted for module/lease/degraded types only.
 */
export class NatsEventBridge {
  private readonly o: NatsEventBridgeOptions;
  private readonly subjects: ClusterSubjects;
  private readonly logger: Logger;
  private readonly maxQueue: number;
  private readonly batchMax: number;
  private readonly seen: IdWindow;
  private readonly queue = new Map<string, string[]>();
  private queued = 0;
  private scheduled = false;
  /** The remote event onMessage is handing to the bus (which calls onLocal synchronously). */
  private delivering: FingerEvent | undefined = undefined;
  /** False while the connection is down: nothing is queued for a reconnect (nats.js would buffer it). */
  private up = true;
  private sub: Subscription | undefined;
  private unsubscribe: (() => void) | undefined;
  /** How a frame line of this node's own event batches starts. */
  private readonly ownLine: Buffer;
  private readonly counters: EventBridgeStats = { sent: 0, received: 0, duplicates: 0, dropped_outbound: 0 };

  constructor(o: NatsEventBridgeOptions) {
    this.o = o;
    this.subjects = clusterSubjects(o.cluster);
    this.logger = o.logger ?? silentLogger;
    this.maxQueue = o.max_queue ?? 10_000;
    this.batchMax = o.batch_max ?? 256;
    this.seen = new IdWindow(Math.max(1, Math.floor(o.dedup_window ?? 20_000)));
    this.ownLine = Buffer.from(`${FRAME_MAGIC}events ${o.auth.node} `, 'latin1');
  }

  /** Starts both directions. */
  async start(): Promise<void> {
    const checked =
      this.o.receive === false
        ? undefined
        : subscribeChecked(this.o.connection, this.subjects.events, (msg) => this.onMessage(msg), {
            logger: this.logger,
          });
    this.sub = checked?.sub;
    await this.o.connection.flush();
    const refused = checked?.refused();
    if (refused !== undefined) throw refused;
    void this.watchStatus();
    const filter = this.o.types ? { types: this.o.types } : {};
    this.unsubscribe = this.o.bus.subscribe(filter, (event, json) => this.onLocal(event, json));
  }

  stats(): EventBridgeStats {
    return { ...this.counters };
  }

  /** Sends what is queued and stops. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.flush();
    if (!this.o.connection.isClosed()) {
      await this.o.connection.flush().catch(() => undefined);
      this.sub?.unsubscribe();
    }
  }

  private onLocal(event: FingerEvent, json: string): void {
    if (event === this.delivering) return; // came from the cluster (being published by onMessage): not ours to send
    if (!this.up || this.o.connection.isClosed() || this.queued >= this.maxQueue) {
      this.counters.dropped_outbound++;
      return;
    }
    let list = this.queue.get(event.type);
    if (list === undefined) {
      list = [];
      this.queue.set(event.type, list);
    }
    list.push(json);
    this.queued++;
    if (list.length >= this.batchMax) this.sendType(event.type, list);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    for (const [type, list] of this.queue) if (list.length > 0) this.sendType(type, list);
  }

  private sendType(type: string, list: string[]): void {
    const n = list.length;
    // one event JSON per line: the receiver hands each line to its subscribers as it came
    const body = list.join('\n');
    list.length = 0;
    this.queued -= n;
    try {
      // daemons' batches go to daemons only (serve processes do not receive events): no serve signature
      this.o.connection.publish(this.subjects.event(type), this.o.auth.sealJson('events', body, false));
      this.counters.sent += n;
    } catch (e) {
      this.counters.dropped_outbound += n;
      this.logger.warn({ error: (e as Error).message, events: n }, 'events not sent to NATS');
    }
  }

  private onMessage(msg: Msg): void {
    // our own batches come back on the shared subscription: skip them before verifying (a frame
    // merely claiming our node id is dropped either way)
    if (claimsNode(msg.data, this.ownLine)) return;
    const check = this.o.auth.open(msg.data);
    if (!check.ok || check.kind !== 'events') {
      this.o.onDropped?.({ reason: check.ok ? 'not an events message' : check.reason, subject: msg.subject });
      return;
    }
    if (check.node === this.o.auth.node) return;
    const lines = check.text().split('\n');
    for (const line of lines) {
      const e = parseEvent(line);
      if (e === undefined) continue; // e.g. a type this version does not know
      if (check.role === 'serve' && !SERVE_EVENT_TYPES.has(e.type)) {
        this.o.onDropped?.({ reason: `event ${e.type} from a serve process`, subject: msg.subject, node: check.node });
        continue;
      }
      if (!this.seen.add(e.id)) {
        this.counters.duplicates++;
        continue;
      }
      this.counters.received++;
      this.delivering = e;
      try {
        this.o.bus.publish(e, line);
      } finally {
        this.delivering = undefined;
      }
    }
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.o.connection.status()) {
      if (s.type === Events.Disconnect) this.up = false;
      else if (s.type === Events.Reconnect) this.up = true;
    }
  }
}

/** Longest id kept as bytes in an {@link IdWindow} slot (ULIDs are 26). */
const ID_BYTES = 32;

/**
 * The last `size` distinct ids seen, for deduplication: `add` remembers an id unless it is
 * already in the window, and past `size` ids the oldest is forgotten (the same semantics as a
 * Set plus a ring of its ids). Everything lives in arrays sized once: ids of at most 32
 * Latin-1 characters (ULIDs) are copied as bytes into their slot, longer or other ids are kept
 * as strings, and an open-addressing table (linear probing, backward-shift deletion) of slot
 * numbers finds them. Nothing is allocated per id and the window keeps no string alive, so a
 * window of recent ids does not promote one string per event and no hash table is rebuilt as
 * ids come and go (a Set that deletes and adds 20,000 ids does both).
 */
export class IdWindow {
  readonly size: number;
  private readonly bytes: Uint8Array;
  /** Length of the id in each slot when held as bytes; -1 when held in `strs`. */
  private readonly lens: Int16Array;
  private readonly strs: (string | undefined)[];
  private readonly hashes: Uint32Array;
  /** Per table position: slot + 1 (0 = empty), then that id's hash (one cache line for a probe). */
  private readonly table: Int32Array;
  private readonly mask: number;
  private head = 0;
  private count = 0;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`dedup window must be a positive integer, got ${size}`);
    this.size = size;
    this.bytes = new Uint8Array(size * ID_BYTES);
    this.lens = new Int16Array(size);
    this.strs = new Array<string | undefined>(size).fill(undefined);
    this.hashes = new Uint32Array(size);
    let cap = 8;
    while (cap < size * 2) cap *= 2;
    this.table = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  /** Ids currently remembered. */
  get length(): number {
    return this.count;
  }

  /** Whether `id` is in the window. */
  has(id: string): boolean {
    return this.find(id, hashId(id)) >= 0;
  }

  /** Remembers `id` and returns true, or returns false when it is already in the window. */
  add(id: string): boolean {
    const h = hashId(id);
    if (this.find(id, h) >= 0) return false;
    let slot: number;
    if (this.count < this.size) slot = (this.head + this.count++) % this.size;
    else {
      slot = this.head;
      this.remove(slot);
      this.head = (this.head + 1) % this.size;
    }
    this.store(slot, id, h);
    const table = this.table;
    let pos = h & this.mask;
    while (table[pos * 2] !== 0) pos = (pos + 1) & this.mask;
    table[pos * 2] = slot + 1;
    table[pos * 2 + 1] = h | 0;
    return true;
  }

  /** Table position of `id`, or -1. */
  private find(id: string, h: number): number {
    const table = this.table;
    const mask = this.mask;
    const hi = h | 0;
    for (let pos = h & mask; ; pos = (pos + 1) & mask) {
      const v = table[pos * 2]!;
      if (v === 0) return -1;
      if (table[pos * 2 + 1] === hi && this.holds(v - 1, id)) return pos;
    }
  }

  private holds(slot: number, id: string): boolean {
    const len = this.lens[slot]!;
    if (len < 0) return this.strs[slot] === id;
    if (len !== id.length) return false;
    const bytes = this.bytes;
    const base = slot * ID_BYTES;
    for (let i = 0; i < len; i++) if (bytes[base + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private store(slot: number, id: string, h: number): void {
    this.hashes[slot] = h;
    const len = id.length;
    if (len <= ID_BYTES) {
      const bytes = this.bytes;
      const base = slot * ID_BYTES;
      let i = 0;
      for (; i < len; i++) {
        const c = id.charCodeAt(i);
        if (c > 255) break;
        bytes[base + i] = c;
      }
      if (i === len) {
        this.lens[slot] = len;
        return;
      }
    }
    this.lens[slot] = -1;
    this.strs[slot] = id;
  }

  /** Takes a slot's id out of the table (backward-shift deletion: no tombstones). */
  private remove(slot: number): void {
    const table = this.table;
    const mask = this.mask;
    let pos = this.hashes[slot]! & mask;
    while (table[pos * 2] !== slot + 1) pos = (pos + 1) & mask;
    let next = (pos + 1) & mask;
    while (table[next * 2] !== 0) {
      const home = table[next * 2 + 1]! & mask;
      // move the entry at `next` into the hole unless its home lies cyclically in (pos, next]
      if (((next - home) & mask) >= ((next - pos) & mask)) {
        table[pos * 2] = table[next * 2]!;
        table[pos * 2 + 1] = table[next * 2 + 1]!;
        pos = next;
      }
      next = (next + 1) & mask;
    }
    table[pos * 2] = 0;
    this.strs[slot] = undefined;
  }
}

/**
 * A hash of every UTF-16 code unit of `s`: two FNV-1a lanes (even and odd positions, so the
 * multiplications of one do not wait for the other), then mixed (ids often share long prefixes).
 */
function hashId(s: string): number {
  const n = s.length;
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ s.charCodeAt(i + 1), 0x01000193);
  }
  if (i < n) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  let h = a ^ Math.imul(b ^ n, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
}

/** Whether `data` starts with `prefix` (a frame line naming this node). */
function claimsNode(data: Uint8Array, prefix: Buffer): boolean {
  if (data.length < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (data[i] !== prefix[i]) return false;
  return true;
}

/** One event of a batch line, or undefined when the line is not a well-formed event. */
function parseEvent(line: string): FingerEvent | undefined {
  let e: FingerEvent;
  try {
    e = JSON.parse(line) as FingerEvent;
  } catch {
    return undefined;
  }
  if (typeof e?.id !== 'string' || !isEventType(e.type) || typeof e.data !== 'object' || e.data === null)
    return undefined;
  return e;
}

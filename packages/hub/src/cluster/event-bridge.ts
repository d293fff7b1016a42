import { Events, type Msg, type NatsConnection, type Subscription } from 'nats';

import type { EventType, FingerEvent } from '@finger/protocol';
import { jsonLimitError, MAX_WIRE_JSON_DEPTH } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import { type EventHead, parseEvent, readEventHead } from '../events/event-json.js';
import { type Logger, silentLogger } from '../logger.js';
import { IdWindow } from '../transport/id-window.js';
import type { DroppedMessage } from '../transport/nats.js';
import { daemonNodeClaimed, frameRefused } from '../transport/nats-options.js';
import { subscribeChecked } from '../transport/nats-subscribe.js';
import {
  type ClusterSubjects,
  clusterSubjects,
  FRAME_MAGIC,
  utf8Length,
  type WireAuth,
} from '../transport/nats-wire.js';

/** A bus that can deliver events built elsewhere (LocalEventBus.publish and publishJson). */
export interface PublishingEventBus extends EventBus {
  publish(event: FingerEvent, json?: string): void;
  /** Delivers an event known by its head, parsing the JSON only if a subscriber wants the object; false when it is not an event. */
  publishJson(head: EventHead, json: string): boolean;
}

/** Options of {@link NatsEventBridge}. */
export interface NatsEventBridgeOptions {
  connection: NatsConnection;
  cluster: string;
  auth: WireAuth;
  bus: PublishingEventBus;
  logger?: Logger;
  /** Judges the age of relayed unlocks (see {@link MAX_UNLOCK_AGE_MS}). */
  clock?: Clock;
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
  /**
   * Told of every event of these types another daemon sent (signed with the cluster key, never a
   * serve host's), after it was delivered on the local bus: for a daemon that acts on them (a
   * halt relayed when no shared store carries it).
   */
  onDaemonEvent?: { types: readonly EventType[]; handler: (event: FingerEvent, node: string) => void };
  /**
   * Whether `node` was heard signing with the cluster key (a daemon; the registry knows): a batch
   * a serve host signs naming such a node is dropped, so its events cannot pass for that daemon's.
   */
  isDaemonNode?: (node: string) => boolean;
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
 * An UNLOCKED from another daemon (the kill switch relayed without Redis) older than
 * {@link MAX_UNLOCK_AGE_MS} is dropped. A signed batch captured on the network and published again
 * later reaches a daemon that has not seen its event ids — one restarted since, or once other
 * events have pushed them out of the deduplication window — and an old UNLOCKED would undo a later
 * halt. Events are never queued for a later reconnect, so a genuine one arrives within moments of
 * its `ts`; the margin is for clocks that disagree. A HALTED is never dropped for its age: a halt
 * replayed stops work an admin then resumes, a halt lost would leave a daemon running.
 */
const UNLOCKED = 'UNLOCKED';
/** How old an UNLOCKED from another daemon may be (its `ts` against this node's clock). */
export const MAX_UNLOCK_AGE_MS = 60_000;

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
  private readonly clock: Clock;
  private readonly maxQueue: number;
  private readonly batchMax: number;
  private readonly seen: IdWindow;
  private readonly queue = new Map<string, string[]>();
  private queued = 0;
  private scheduled = false;
  /** The JSON of the remote event onMessage is handing to the bus (which calls onLocal synchronously). */
  private delivering: string | undefined = undefined;
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
    this.clock = o.clock ?? systemClock;
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
    this.unsubscribe = this.o.bus.subscribeJson(filter, (json, type) => this.onLocal(json, type));
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

  private onLocal(json: string, type: EventType): void {
    if (json === this.delivering) return; // came from the cluster (being published by onMessage): not ours to send
    if (!this.up || this.o.connection.isClosed() || this.queued >= this.maxQueue) {
      this.counters.dropped_outbound++;
      return;
    }
    let list = this.queue.get(type);
    if (list === undefined) {
      list = [];
      this.queue.set(type, list);
    }
    list.push(json);
    this.queued++;
    if (list.length >= this.batchMax) this.sendType(type, list);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    for (const [type, list] of this.queue) if (list.length > 0) this.sendType(type, list);
  }

  /**
   * Sends the events of one type waiting for the end of the turn: one frame, or several when
   * together they would pass the server's `max_payload` (nats.js refuses such a publish, and the
   * whole batch would be lost). An event that alone does not fit is dropped and counted.
   */
  private sendType(type: string, list: string[]): void {
    const n = list.length;
    this.queued -= n;
    const room = (this.o.connection.info?.max_payload ?? 1024 * 1024) - this.o.auth.lineLength('events', false);
    let chars = n - 1; // the newlines
    for (const line of list) chars += line.length;
    // at most 3 UTF-8 bytes per UTF-16 unit: most batches are known to fit without measuring
    if (chars * 3 <= room) {
      this.publishBatch(type, list);
      list.length = 0;
      return;
    }
    const lines = list.slice();
    list.length = 0;
    let chunk: string[] = [];
    let bytes = 0;
    for (const line of lines) {
      const b = utf8Length(line);
      if (b > room) {
        this.counters.dropped_outbound++;
        this.logger.warn(
          { type, bytes: b, max_payload: room + this.o.auth.lineLength('events', false) },
          "event not sent to NATS: larger than the server's max_payload",
        );
        continue;
      }
      if (chunk.length > 0 && bytes + 1 + b > room) {
        this.publishBatch(type, chunk);
        chunk = [];
        bytes = 0;
      }
      bytes = chunk.length === 0 ? b : bytes + 1 + b;
      chunk.push(line);
    }
    if (chunk.length > 0) this.publishBatch(type, chunk);
  }

  /** Publishes events of one type as one signed frame. */
  private publishBatch(type: string, lines: string[]): void {
    const n = lines.length;
    // one event JSON per line: the receiver hands each line to its subscribers as it came
    const body = n === 1 ? lines[0]! : lines.join('\n');
    try {
      // daemons' batches go to daemons only (serve processes do not receive events): no serve signature
      const subject = this.subjects.event(type);
      this.o.connection.publish(subject, this.o.auth.sealJson(subject, 'events', body, false));
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
    const check = this.o.auth.open(msg.data, msg.subject);
    if (!check.ok || check.kind !== 'events') {
      this.o.onDropped?.(
        check.ok
          ? { reason: 'not an events message', subject: msg.subject, node: check.node }
          : frameRefused(check, msg.subject),
      );
      return;
    }
    if (check.node === this.o.auth.node) return;
    const fromServe = check.role === 'serve';
    if (fromServe && this.o.isDaemonNode?.(check.node) === true) {
      this.o.onDropped?.(daemonNodeClaimed(msg.subject, check.node));
      return;
    }
    for (const line of check.text().split('\n')) this.onLine(line, check.scope, msg.subject, check.node);
  }

  /**
   * One event of a received batch. A daemon's line is known by its head (the bus parses it only
   * for a subscriber that wants the object); a serve process's, or one not in the form daemons
   * write, is parsed and checked here.
   */
  private onLine(received: string, scope: string | undefined, subject: string, node: string): void {
    const fromServe = scope !== undefined;
    const head = fromServe ? undefined : readEventHead(received);
    const e = head === undefined ? parseEvent(received) : undefined;
    const h = head ?? e;
    if (h === undefined) return; // e.g. a type this version does not know
    if (e !== undefined) {
      // written back out (JSON.stringify) and handed to subscribers: nothing past the nesting limit is
      const tooDeep = jsonLimitError(e, 'event', { maxDepth: MAX_WIRE_JSON_DEPTH });
      if (tooDeep !== undefined) {
        this.o.onDropped?.({ reason: tooDeep.message, subject, node });
        return;
      }
    }
    // the event names the node it came from (the one that signed its frame): `origin`, right
    // after the head a daemon writes, so the line keeps that head
    let line: string;
    if (head !== undefined) line = withOrigin(received, head, node);
    else {
      e!.origin = node;
      line = JSON.stringify(e);
    }
    if (fromServe && !SERVE_EVENT_TYPES.has(h.type)) {
      this.o.onDropped?.({ reason: `event ${h.type} from a serve process`, subject, node });
      return;
    }
    if (fromServe && h.type !== 'DEGRADED' && !aboutModule(e!, scope)) {
      // a serve host's key signs for its module: it speaks of no other
      this.o.onDropped?.({
        reason: `event ${h.type} about "${e!.target}" from a serve host of ${scope}`,
        subject,
        node,
      });
      return;
    }
    if (h.type === UNLOCKED) {
      // a line that is not an event is dropped below as invalid
      const ts = (e ?? parseEvent(line))?.ts;
      if (ts !== undefined && !(this.clock.now() - Date.parse(ts) <= MAX_UNLOCK_AGE_MS)) {
        this.o.onDropped?.({ reason: `stale ${h.type} event`, subject, node });
        return;
      }
    }
    // the id is taken before the line is known to be that event (a line that turns out not to be
    // takes it as well: only a daemon can sign one, and a daemon could as well send a real event
    // of that id)
    if (!this.seen.add(h.id)) {
      this.counters.duplicates++;
      return;
    }
    let delivered = true;
    this.delivering = line;
    try {
      if (e !== undefined) this.o.bus.publish(e, line);
      else delivered = this.o.bus.publishJson(h, line);
      const watch = this.o.onDaemonEvent;
      if (delivered && !fromServe && watch !== undefined && watch.types.includes(h.type)) {
        const ev = e ?? parseEvent(line);
        if (ev !== undefined) watch.handler(ev, node);
      }
    } finally {
      this.delivering = undefined;
    }
    if (!delivered) {
      this.o.onDropped?.({ reason: 'invalid event', subject, node });
      return;
    }
    this.counters.received++;
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.o.connection.status()) {
      if (s.type === Events.Disconnect) this.up = false;
      else if (s.type === Events.Reconnect) this.up = true;
    }
  }
}

/** The event line `line` (known by `head`) with `"origin":"<node>"` after its id and type. */
function withOrigin(line: string, head: EventHead, node: string): string {
  const at = HEAD_LENGTH + head.id.length + head.type.length;
  return `${line.slice(0, at)}"origin":${JSON.stringify(node)},${line.slice(at)}`;
}
/** `{"id":"` + `","type":"` + `",`: what a daemon's event line starts with besides its id and type. */
const HEAD_LENGTH = '{"id":"'.length + '","type":"'.length + '",'.length;

/** Whether `target` (a module id or `module.tool`) is of module `module_id`. */
function withinModule(target: string, module_id: string): boolean {
  return target === module_id || (target.startsWith(module_id) && target.charCodeAt(module_id.length) === 0x2e);
}

/** Whether event `e` speaks of module `module_id` only: its target, and the `data.id` a module event names. */
function aboutModule(e: FingerEvent, module_id: string): boolean {
  if (!withinModule(e.target, module_id)) return false;
  const id = (e.data as { id?: unknown } | undefined)?.id;
  return !e.type.startsWith('MODULE_') || typeof id !== 'string' || id === module_id;
}

/** Whether `data` starts with `prefix` (a frame line naming this node). */
function claimsNode(data: Uint8Array, prefix: Buffer): boolean {
  if (data.length < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (data[i] !== prefix[i]) return false;
  return true;
}

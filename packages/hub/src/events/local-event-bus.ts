import { type EventType, type FingerEvent, rfc3339, ulid } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../logger.js';
import type { EventStore } from '../store/event-store.js';
import { MemoryEventStore } from '../store/memory-event-store.js';
import type { EventBus, EventCorrelation, EventFilter, EventListener, JsonEventListener } from './event-bus.js';
import { encodeEvent, type EventHead, parseEvent } from './event-json.js';

/** Options of {@link LocalEventBus}. */
export interface LocalEventBusOptions {
  /** Where events are persisted in batches. Without one, events live in an in-memory ring. */
  store?: EventStore;
  clock?: Clock;
  logger?: Logger;
  /** Delay between an emit and the batch write to the store. Default 50 ms. */
  flush_interval_ms?: number;
  /** Most events waiting for the store; past it the oldest are dropped and counted. Default 50,000. */
  max_buffer?: number;
  /** Size of the in-memory ring used when there is no store. Default 10,000. */
  ring_size?: number;
}

/** Counters of a {@link LocalEventBus}. */
export interface EventBusStats {
  /** Events emitted while open. */
  emitted: number;
  /** Events the store accepted. */
  persisted: number;
  /** Events dropped from a full buffer before reaching the store. */
  dropped: number;
  /** Active subscriptions. */
  subscribers: number;
  /** Batches the store rejected (their events are not on disk). */
  persist_failures: number;
  /** Listener calls that threw (caught and logged). */
  listener_errors: number;
}

interface Subscription {
  /** Exactly one of the two is set. */
  readonly listener: EventListener | undefined;
  readonly jsonListener: JsonEventListener | undefined;
  readonly request_id: string;
  readonly session_id: string;
  readonly correlation_id: string;
  active: boolean;
}

interface Buffered {
  /** Undefined for an event that came as JSON and was never parsed. */
  event: FingerEvent | undefined;
  json: string;
}

/** Whether a subscriber on `subs` needs the event object (it takes one, or filters on a correlation field). */
function wantsObject(subs: readonly Subscription[] | undefined): boolean {
  if (subs === undefined) return false;
  for (const s of subs) {
    if (!s.active) continue;
    if (s.listener !== undefined || s.request_id || s.session_id || s.correlation_id) return true;
  }
  return false;
}

/**
 * The in-process {@link EventBus} (§3.9). `emit` builds the event, serialises it once (only when
 * someone will use the string), calls matching listeners synchronously — a throwing listener is
 * caught and logged and affects nobody else — and queues it for the store; a single unref'd
 * timer writes the queue in batches, so no I/O ever happens on the emitter's call path. The
 * queue is bounded (`max_buffer`): when the store falls behind the oldest events are dropped
 * and counted, the emitter never waits. Listener lookup is by type plus a wildcard list.
 */
export class LocalEventBus implements EventBus {
  private readonly store: EventStore | undefined;
  private readonly ring: MemoryEventStore | undefined;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly flushIntervalMs: number;
  private readonly maxBuffer: number;
  /** Copy-on-write lists: emit iterates a snapshot while (un)subscribe replaces the array. */
  private byType = new Map<EventType, Subscription[]>();
  private wildcard: Subscription[] = [];
  private subscriberCount = 0;
  private buf: (Buffered | undefined)[] = [];
  private bufHead = 0;
  private timer: unknown = null;
  private draining: Promise<void> | null = null;
  private persistFailing = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private counters = { emitted: 0, persisted: 0, dropped: 0, persist_failures: 0, listener_errors: 0 };

  constructor(options: LocalEventBusOptions = {}) {
    this.store = options.store;
    this.ring = options.store ? undefined : new MemoryEventStore({ capacity: options.ring_size ?? 10_000 });
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.flushIntervalMs = options.flush_interval_ms ?? 50;
    this.maxBuffer = Math.max(1, options.max_buffer ?? 50_000);
  }

  /** Counters for health and metrics. */
  stats(): EventBusStats {
    return { ...this.counters, subscribers: this.subscriberCount };
  }

  emit(type: EventType, correlation: EventCorrelation, data: Record<string, unknown> = {}): FingerEvent {
    const event: FingerEvent = {
      id: ulid(),
      type,
      ts: rfc3339(this.clock.now()),
      request_id: correlation.request_id ?? '',
      correlation_id: correlation.correlation_id ?? '',
      session_id: correlation.session_id ?? '',
      workflow_id: correlation.workflow_id ?? '',
      target: correlation.target ?? '',
      data,
    };
    this.deliverNew(event, undefined, true);
    return event;
  }

  /**
   * Delivers and stores an event built elsewhere, keeping its id and timestamp: how events of
   * other daemons (NATS event bridge) reach this daemon's subscribers. Never throws.
   */
  publish(event: FingerEvent, json?: string): void {
    this.deliverNew(event, json, false);
  }

  /**
   * {@link publish} for an event received as JSON whose id and type the caller has read (its
   * head, event-json.ts): the JSON is parsed only when a subscriber wants the object or filters
   * on a correlation field — subscribers of {@link subscribeJson}, the ring and the store take
   * the line as it came. Returns false when it had to be parsed and is not a well-formed event
   * of that id and type (then nothing was delivered or stored). Never throws.
   */
  publishJson(head: EventHead, json: string): boolean {
    if (this.closed) return true;
    const typed = this.byType.get(head.type);
    const wild = this.wildcard;
    if (wantsObject(typed) || wantsObject(wild)) {
      const event = parseEvent(json, head);
      if (event === undefined) return false;
      this.deliverNew(event, json, false);
      return true;
    }
    this.counters.emitted++;
    if (typed !== undefined) this.deliverJson(typed, json, head);
    if (wild.length > 0) this.deliverJson(wild, json, head);
    if (this.store) this.enqueue({ event: undefined, json });
    else this.ring!.add(undefined, json);
    return true;
  }

  /** `built`: the event is emit's own object literal (its fields in order, ids and time safe). */
  private deliverNew(event: FingerEvent, json: string | undefined, built: boolean): void {
    if (this.closed) return;
    this.counters.emitted++;
    const typed = this.byType.get(event.type);
    const wild = this.wildcard;
    const hasListeners = (typed !== undefined && typed.length > 0) || wild.length > 0;
    if (!hasListeners && !this.store) {
      this.ring!.add(event, json);
      return;
    }
    const text = json ?? (built ? (encodeEvent(event) ?? this.serialise(event)) : this.serialise(event));
    if (typed) this.deliver(typed, event, text);
    if (wild.length > 0) this.deliver(wild, event, text);
    // the ring keeps the string (one flat object) rather than the event's graph
    if (this.store) this.enqueue({ event, json: text });
    else this.ring!.add(event, text);
  }

  subscribe(filter: EventFilter, listener: EventListener): () => void {
    return this.addSubscription(filter, listener, undefined);
  }

  subscribeJson(filter: EventFilter, listener: JsonEventListener): () => void {
    return this.addSubscription(filter, undefined, listener);
  }

  private addSubscription(
    filter: EventFilter,
    listener: EventListener | undefined,
    jsonListener: JsonEventListener | undefined,
  ): () => void {
    if (this.closed) return () => undefined;
    const sub: Subscription = {
      listener,
      jsonListener,
      request_id: filter.request_id ?? '',
      session_id: filter.session_id ?? '',
      correlation_id: filter.correlation_id ?? '',
      active: true,
    };
    const types = filter.types && filter.types.length > 0 ? [...new Set(filter.types)] : null;
    if (types) for (const t of types) this.byType.set(t, [...(this.byType.get(t) ?? []), sub]);
    else this.wildcard = [...this.wildcard, sub];
    this.subscriberCount++;
    return () => {
      if (!sub.active) return;
      sub.active = false;
      this.subscriberCount--;
      if (types) {
        for (const t of types) {
          const rest = (this.byType.get(t) ?? []).filter((s) => s !== sub);
          if (rest.length > 0) this.byType.set(t, rest);
          else this.byType.delete(t);
        }
      } else {
        this.wildcard = this.wildcard.filter((s) => s !== sub);
      }
    };
  }

  async replay(request_id: string): Promise<FingerEvent[]> {
    if (!this.store) return this.ring!.pathOf(request_id);
    await this.flush();
    return this.store.forRequest(request_id);
  }

  async recent(filter: EventFilter, limit: number): Promise<FingerEvent[]> {
    if (!this.store) return this.ring!.latest(filter, limit);
    await this.flush();
    return this.store.recent(filter, limit);
  }

  async flush(): Promise<void> {
    if (!this.store) return;
    while (this.buffered() > 0 || this.draining) await this.drain();
    await this.store.flush();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.byType = new Map();
      this.wildcard = [];
      this.subscriberCount = 0;
      if (this.timer !== null) {
        this.clock.clearTimeout(this.timer);
        this.timer = null;
      }
      if (!this.store) return;
      await this.flush();
      await this.store.close();
    })();
    return this.closing;
  }

  private serialise(event: FingerEvent): string {
    try {
      return JSON.stringify(event);
    } catch (err) {
      // Circular or BigInt data: keep the event, replace what cannot be encoded.
      this.logger.warn({ type: event.type, err: String(err) }, 'event data is not serialisable; replaced');
      event.data = { unserialisable: true, reason: String(err) };
      return JSON.stringify(event);
    }
  }

  private deliver(subs: readonly Subscription[], event: FingerEvent, json: string): void {
    for (const s of subs) {
      if (!s.active) continue;
      if (s.request_id && s.request_id !== event.request_id) continue;
      if (s.session_id && s.session_id !== event.session_id) continue;
      if (s.correlation_id && s.correlation_id !== event.correlation_id) continue;
      try {
        if (s.listener !== undefined) s.listener(event, json);
        else s.jsonListener!(json, event.type);
      } catch (err) {
        this.listenerThrew(err, event.type, event.id);
      }
    }
  }

  /** Delivers JSON to subscribers that all take JSON without a correlation filter ({@link wantsObject} false). */
  private deliverJson(subs: readonly Subscription[], json: string, head: EventHead): void {
    for (const s of subs) {
      if (!s.active) continue;
      try {
        s.jsonListener!(json, head.type);
      } catch (err) {
        this.listenerThrew(err, head.type, head.id);
      }
    }
  }

  private listenerThrew(err: unknown, type: EventType, event_id: string): void {
    this.counters.listener_errors++;
    this.logger.warn({ type, event_id, err: String(err) }, 'event listener threw');
  }

  private buffered(): number {
    return this.buf.length - this.bufHead;
  }

  private enqueue(item: Buffered): void {
    if (this.buffered() >= this.maxBuffer) {
      this.buf[this.bufHead++] = undefined;
      this.counters.dropped++;
      if (this.bufHead > 1024 && this.bufHead * 2 > this.buf.length) {
        this.buf = this.buf.slice(this.bufHead);
        this.bufHead = 0;
      }
    }
    this.buf.push(item);
    this.arm();
  }

  private arm(): void {
    if (this.timer !== null || this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, this.flushIntervalMs);
  }

  /** Writes the buffer to the store in batches until it is empty; one drain at a time. */
  private drain(): Promise<void> {
    this.draining ??= this.drainLoop().finally(() => {
      this.draining = null;
      if (this.buffered() > 0) this.arm();
    });
    return this.draining;
  }

  private async drainLoop(): Promise<void> {
    const store = this.store!;
    while (this.buffered() > 0) {
      const items = this.bufHead === 0 ? this.buf : this.buf.slice(this.bufHead);
      this.buf = [];
      this.bufHead = 0;
      const events = new Array<FingerEvent | undefined>(items.length);
      const lines: string[] = new Array<string>(items.length);
      for (let i = 0; i < items.length; i++) {
        events[i] = items[i]!.event;
        lines[i] = items[i]!.json;
      }
      try {
        await store.append(events, lines);
        this.counters.persisted += events.length;
        this.persistFailing = false;
      } catch (err) {
        this.counters.persist_failures++;
        if (!this.persistFailing) {
          this.persistFailing = true;
          this.logger.error(
            { err: String(err), events: events.length },
            'event store append failed; events not persisted',
          );
        }
      }
    }
  }
}

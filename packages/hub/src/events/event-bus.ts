import type { EventType, FingerEvent } from '@finger/protocol';

/** The correlation fields every event carries (taken from the envelope it concerns). */
export interface EventCorrelation {
  request_id?: string;
  correlation_id?: string;
  session_id?: string;
  workflow_id?: string;
  target?: string;
}

/** Which events a subscriber wants. Empty/undefined fields match everything. */
export interface EventFilter {
  types?: readonly EventType[];
  request_id?: string;
  correlation_id?: string;
  session_id?: string;
}

/** A subscriber; receives the event and its JSON serialisation (made once for all subscribers). */
export type EventListener = (event: FingerEvent, json: string) => void;

/**
 * A subscriber that takes only the JSON (e.g. to forward it to a WebSocket client) and the event's
 * type: an event that arrives as JSON from another daemon is then never parsed for it.
 */
export type JsonEventListener = (json: string, type: EventType) => void;

/**
 * Typed events (§3.9): emitted synchronously to subscribers, persisted in batches off the call
 * path to a bounded append-only store, queryable by request id for replay.
 */
export interface EventBus {
  /** Emits an event; never throws, never blocks on I/O. Returns the event built. */
  emit(type: EventType, correlation: EventCorrelation, data?: Record<string, unknown>): FingerEvent;
  /** Subscribes; returns the unsubscribe function. */
  subscribe(filter: EventFilter, listener: EventListener): () => void;
  /**
   * Subscribes for the JSON alone ({@link JsonEventListener}); returns the unsubscribe function.
   * Events reach it exactly as they reach `subscribe`'s listeners.
   */
  subscribeJson(filter: EventFilter, listener: JsonEventListener): () => void;
  /**
   * The whole path of a request: every persisted event whose request_id is `request_id`, plus
   * every event sharing a correlation_id with those, in emission order.
   */
  replay(request_id: string): Promise<FingerEvent[]>;
  /** The most recent events matching `filter`, oldest first, at most `limit`. */
  recent(filter: EventFilter, limit: number): Promise<FingerEvent[]>;
  /** Writes every buffered event to the store. */
  flush(): Promise<void>;
  /** Flushes and closes; idempotent. */
  close(): Promise<void>;
}

import type { FingerEvent } from '@finger/protocol';

import type { EventFilter } from '../events/event-bus.js';

/**
 * Where the EventBus persists events (§3.9). Implementations are bounded: old events fall off
 * so disk and memory use stay fixed. Writers call `append` from one place (the bus's batch
 * timer), never on an emitter's call path.
 */
export interface EventStore {
  /**
   * Stores a batch, in order. `lines`, when given, holds `JSON.stringify(batch[i])` for each
   * event (the bus serialises once and hands the strings on); `batch[i]` is undefined for an
   * event that came as JSON and was never parsed (another daemon's, LocalEventBus.publishJson):
   * then only its line is there. Rejects with E_STORE_UNAVAILABLE when the batch could not be
   * written; the store stays usable.
   */
  append(batch: readonly (FingerEvent | undefined)[], lines?: readonly string[]): Promise<void>;
  /**
   * The whole path of a request, in emission order: every stored event whose `request_id` is
   * `request_id`, plus every event sharing a non-empty `correlation_id` with one of those.
   * An empty `request_id` yields `[]`.
   */
  forRequest(request_id: string): Promise<FingerEvent[]>;
  /** The newest events matching `filter`, returned oldest first, at most `limit`. */
  recent(filter: EventFilter, limit: number): Promise<FingerEvent[]>;
  /** Resolves once every appended batch has been written (or has failed). Never rejects. */
  flush(): Promise<void>;
  /** Flushes and releases files/handles; idempotent. */
  close(): Promise<void>;
}

/**
 * True when `event` passes `filter` (§3.9 subscribe semantics): an undefined or empty field
 * matches everything. Used by stores and by the WebSocket gateway.
 */
export function matchesFilter(event: FingerEvent, filter: EventFilter): boolean {
  if (filter.types !== undefined && filter.types.length > 0 && !filter.types.includes(event.type)) return false;
  if (filter.request_id && filter.request_id !== event.request_id) return false;
  if (filter.session_id && filter.session_id !== event.session_id) return false;
  if (filter.correlation_id && filter.correlation_id !== event.correlation_id) return false;
  return true;
}

/**
 * Picks a request's path out of events in emission order (see {@link EventStore.forRequest}):
 * two passes, first collecting the request's correlation ids, then every event that has the
 * request id or one of those correlation ids.
 */
export function requestPath(events: Iterable<FingerEvent>, request_id: string): FingerEvent[] {
  if (!request_id) return [];
  const cids = new Set<string>();
  for (const e of events) if (e.request_id === request_id && e.correlation_id) cids.add(e.correlation_id);
  const out: FingerEvent[] = [];
  for (const e of events) if (e.request_id === request_id || cids.has(e.correlation_id)) out.push(e);
  return out;
}

/**
 * True when a parsed JSON value has the shape of a {@link FingerEvent}; stores use it to
 * reject corrupt or foreign lines read back from disk.
 */
export function isFingerEventLike(v: unknown): v is FingerEvent {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.id === 'string' &&
    typeof e.type === 'string' &&
    typeof e.ts === 'string' &&
    typeof e.request_id === 'string' &&
    typeof e.correlation_id === 'string' &&
    typeof e.session_id === 'string' &&
    typeof e.workflow_id === 'string' &&
    typeof e.target === 'string' &&
    typeof e.data === 'object' &&
    e.data !== null
  );
}

/**
 * Merges two event lists that may overlap (same `id`), ordered by id — ULIDs made by one
 * process sort in emission order — and keeps the newest `limit` when given. Used when some
 * events exist only in memory because a disk write failed.
 */
export function mergeById(a: readonly FingerEvent[], b: readonly FingerEvent[], limit?: number): FingerEvent[] {
  const byId = new Map<string, FingerEvent>();
  for (const e of a) byId.set(e.id, e);
  for (const e of b) if (!byId.has(e.id)) byId.set(e.id, e);
  const out = [...byId.values()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return limit !== undefined && out.length > limit ? out.slice(out.length - limit) : out;
}

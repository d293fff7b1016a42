// The subscribers of `/v1/events` that share one filter: one bus subscription for all of them, and
// each event framed once and written with the others of its flush window as one batch per client.

import type { EventBus, EventFilter } from '@finger/hub';

import type { WireFilter } from './subscribe-filter.js';
import { type EventBatch, eventPayload, textFrame } from './ws-frames.js';

/** What a group needs of each of its clients. */
export interface GroupMember {
  /** True when the client negotiated a WebSocket extension: it is sent payloads, frame by frame. */
  readonly needsPayloads: boolean;
  /** Takes a batch (writes it, queues it, or counts it dropped). */
  deliver(batch: EventBatch): void;
}

/** What a group uses of its gateway. */
export interface GroupHost {
  /** Pending bytes past which a group flushes at once instead of at the gateway's next flush. */
  readonly flushBytes: number;
  /**
   * Schedules {@link FanoutGroup.flush}: at the next turn of the event loop when the group last
   * flushed (at `lastFlush`, a `performance.now()` time) a whole window ago, else at the end of
   * the window — one timer for every group of the gateway.
   */
  flushLater(group: FanoutGroup, lastFlush: number): void;
  /** The group's last member left: it unsubscribed; forget it. */
  emptied(group: FanoutGroup): void;
}

/** The key of a filter: clients whose filters have the same key share a group. */
export function filterKey(f: WireFilter): string {
  const types = f.types ? [...new Set(f.types)].sort() : [];
  return JSON.stringify([types, f.session_id ?? '', f.request_id ?? '', f.correlation_id ?? '']);
}

/**
 * One filter's clients. The bus calls the group once per matching event (not once per socket);
 * the group frames the event (`ws`'s framer, once) and keeps it until the flush, which joins the
 * window's frames into one Buffer and hands that same batch to every member: a client's cost is
 * one write per flush, and nothing per event. A flush comes at the next turn of the event loop
 * after a quiet window (an event alone waits for nothing), else at the end of the window or once
 * `flushBytes` are pending: a socket is written at most once per window plus once per
 * `flushBytes`, whatever the event rate.
 */
export class FanoutGroup {
  private readonly members = new Set<GroupMember>();
  /** Frames of the current window: header, payload, header, payload… */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  /** When the group last handed out a batch (`performance.now()`). */
  private lastFlush = -Infinity;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly host: GroupHost,
    events: EventBus,
    readonly key: string,
    filter: WireFilter,
  ) {
    const f: EventFilter = {};
    if (filter.types) f.types = filter.types;
    if (filter.session_id) f.session_id = filter.session_id;
    if (filter.request_id) f.request_id = filter.request_id;
    if (filter.correlation_id) f.correlation_id = filter.correlation_id;
    this.unsubscribe = events.subscribeJson(f, this.onEvent);
  }

  /** Bus listener: called synchronously on every matching emit. */
  private readonly onEvent = (json: string): void => {
    const { header, payload } = textFrame(eventPayload(json));
    this.pending.push(header, payload);
    this.pendingBytes += header.length + payload.length;
    if (this.pendingBytes >= this.host.flushBytes) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      this.host.flushLater(this, this.lastFlush);
    }
  };

  /**
   * Joins a client. The window so far is flushed first, so it gets only events emitted after it
   * joined, as a bus subscriber would.
   */
  add(member: GroupMember): void {
    this.flush();
    this.members.add(member);
  }

  /** Removes a client; nothing more reaches it. The last one out unsubscribes the group. */
  remove(member: GroupMember): void {
    if (!this.members.delete(member) || this.members.size > 0) return;
    this.unsubscribe();
    this.pending = [];
    this.pendingBytes = 0;
    this.host.emptied(this);
  }

  /**
   * Hands the window's events to every member as one batch. Called by the gateway's timer, past
   * `flushBytes`, before a member joins, and before a control message to a member (which must
   * follow the events emitted before it).
   */
  flush(): void {
    this.scheduled = false;
    const frames = this.pending;
    if (frames.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    this.lastFlush = performance.now();
    let payloads: Buffer[] | undefined;
    for (const m of this.members) {
      if (!m.needsPayloads) continue;
      payloads = frames.filter((_, i) => i % 2 === 1);
      break;
    }
    const batch: EventBatch = { wire: Buffer.concat(frames), payloads, events: frames.length / 2 };
    for (const m of this.members) m.deliver(batch);
  }
}

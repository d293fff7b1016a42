// One subscriber of `/v1/events`: its bounded queue of event batches, drop counting, slow-consumer
// cut-off and authentication state. The gateway (event-gateway.ts) owns the sockets and the limits.

import type { WebSocket } from 'ws';

import type { ErrorInfo, Principal } from '@finger/protocol';

import { ACCESS, hasRole } from '../auth/auth-hook.js';
import type { FanoutGroup, GroupMember } from './fanout-group.js';
import type { WireFilter } from './subscribe-filter.js';
import { type EventBatch, OPEN, type RawSocket, TEXT } from './ws-frames.js';

/** Close codes used by the gateway. */
export const WS_CLOSE = {
  unauthenticated: 4401,
  forbidden: 4403,
  shutdown: 1001,
  /** The client fell `ws.max_slow_bytes` behind: cut off (reason "slow consumer"). */
  slow_consumer: 4008,
  /** Over `ws.max_sockets` or `ws.max_sockets_per_token` (reason E_OVERLOADED). */
  too_many_sockets: 4429,
} as const;

/** What a client uses of its gateway: the shared counters and the bounds. */
export interface ClientHost {
  readonly counters: {
    events_sent: number;
    events_dropped: number;
    dropped_notices: number;
    slow_closed: number;
    sockets_refused: number;
  };
  readonly maxEvents: number;
  readonly maxBytes: number;
  readonly maxSlowBytes: number;
}

/**
 * One connected client, a member of the {@link FanoutGroup} of its filter. Events reach it as
 * batches (the frames of one flush window, one Buffer shared by every client of the filter): when
 * fewer than `max_buffered_bytes` are in flight (written and not yet acknowledged by a pong) a
 * batch is written at once, in one write; else it waits in a queue bounded by events; when the
 * queue is full new events are dropped and counted until the client has drained everything, then
 * it is told `{"type":"dropped","count":n}`. A client that falls `max_slow_bytes` behind (bytes in
 * flight, queued, and dropped since it caught up) is cut off with close 4008 and its queue freed.
 * Nothing here ever waits for the client, and nothing is done for it per event: a stalled reader
 * costs a few compares per flush, and a cut one none. What it pins is bounded: its socket's bytes
 * (≤ `max_buffered_bytes` plus one batch), and queued batches that are shared with every other
 * client of its filter.
 */
export class EventClient implements GroupMember {
  principal: Principal | undefined;
  /** A browser session's key and principal, waiting for its CSRF token (then kept: sign-out closes). */
  session: { key: string; principal: Principal } | undefined;
  alive = true;
  /** The group of its current subscription. */
  private group: FanoutGroup | undefined;
  /** Event batches (shared) and control messages (strings), in order. */
  private queue: (EventBatch | string | undefined)[] = [];
  private head = 0;
  private dropped = 0;
  /** Events and bytes of the batches in `queue`. */
  private queuedEvents = 0;
  private queuedBytes = 0;
  /** Bytes of the events dropped since the client last caught up. */
  private droppedBytes = 0;
  /** Event bytes written to the socket so far, and how many of them the client has shown it read. */
  private written = 0;
  private acked = 0;
  /** `written` when the last ack ping went out. */
  private pinged = 0;
  /** Cut off (slow) or refused: nothing more is sent. */
  private cut = false;
  /** The principal id counted in the gateway's per-token socket counts. */
  counted: string | undefined;
  private authTimer: NodeJS.Timeout | undefined;
  readonly needsPayloads: boolean;
  /** The TCP socket batches are written to, or undefined to send them frame by frame through ws. */
  private readonly raw: RawSocket | undefined;

  constructor(
    private readonly gw: ClientHost,
    readonly socket: WebSocket,
  ) {
    // an extension (none is offered by default) transforms frames: those clients go through ws
    this.needsPayloads = socket.extensions !== '';
    this.raw = this.needsPayloads ? undefined : (socket as unknown as { _socket?: RawSocket })._socket;
    if (this.raw === undefined) this.needsPayloads = true;
  }

  /** Takes a batch of its group's flush: writes it, queues it, or counts its events dropped. */
  deliver(batch: EventBatch): void {
    if (this.cut || this.socket.readyState !== OPEN) return;
    const gw = this.gw;
    if (this.dropped > 0) return this.drop(batch);
    if (this.head === this.queue.length && this.inFlight() < gw.maxBytes) {
      this.write(batch);
      return;
    }
    if (this.queuedEvents + batch.events > gw.maxEvents) return this.drop(batch);
    this.queue.push(batch);
    this.queuedEvents += batch.events;
    this.queuedBytes += batch.wire.length;
    if (gw.maxSlowBytes > 0 && this.behind() > gw.maxSlowBytes) return this.cutOff();
    if (this.inFlight() < gw.maxBytes) this.pump();
  }

  /**
   * Bytes written that the client has not shown it read: the kernel takes megabytes of a loopback
   * socket whose reader stopped (≈ 4 MB here) before `bufferedAmount` grows, so the socket buffer
   * alone would let a paused client cost full writes for seconds. A ping goes out after every
   * quarter of `max_buffered_bytes` written, carrying the count; the pong (every WebSocket client
   * answers pings, echoing their data, once it has read what came before) acknowledges it.
   */
  private inFlight(): number {
    return Math.max(this.written - this.acked, this.socket.bufferedAmount);
  }

  /** A pong: its data, when it is one of our counts, acknowledges that many bytes read. */
  ponged(data: Buffer): void {
    if (data.length === 0 || data.length > 16) return;
    const n = Number(data.toString('latin1'));
    // only a count we sent moves the mark (a forged one cannot pass what was written)
    if (!Number.isSafeInteger(n) || n <= this.acked || n > this.written) return;
    this.acked = n;
    if (!this.cut && (this.head < this.queue.length || this.dropped > 0)) this.pump();
  }

  /** Counts a batch's events dropped (told once the client has caught up); cuts it past `max_slow_bytes`. */
  private drop(batch: EventBatch): void {
    this.dropped += batch.events;
    this.gw.counters.events_dropped += batch.events;
    this.droppedBytes += batch.wire.length;
    if (this.gw.maxSlowBytes > 0 && this.behind() > this.gw.maxSlowBytes) this.cutOff();
  }

  /**
   * Writes a batch: its wire bytes straight to the TCP socket in one write (the same bytes for
   * every client: server frames are not masked), or frame by frame through ws when an extension
   * was negotiated. Called in order with {@link send}'s control messages, which ws writes
   * synchronously.
   */
  private write(batch: EventBatch): void {
    this.gw.counters.events_sent += batch.events;
    this.written += batch.wire.length;
    if (this.raw !== undefined) this.raw.write(batch.wire, this.onSent);
    else for (const p of batch.payloads ?? []) this.socket.send(p, TEXT, this.onSent);
    if (this.written - this.pinged >= this.gw.maxBytes / 4) {
      this.pinged = this.written;
      try {
        this.socket.ping(String(this.written));
      } catch {
        // closing
      }
    }
  }

  /** Bytes this client is behind: in flight, queued here, and dropped since it caught up. */
  private behind(): number {
    return this.inFlight() + this.queuedBytes + this.droppedBytes;
  }

  /** Cuts a client that fell too far behind: frees its queue, counts it, closes 4008. */
  private cutOff(): void {
    this.cut = true;
    this.gw.counters.slow_closed++;
    this.dispose();
    this.socket.close(WS_CLOSE.slow_consumer, 'slow consumer');
  }

  /** Refuses a socket over a socket limit: an E_OVERLOADED error frame, then close 4429. */
  refuse(message: string): void {
    this.sendError({ code: 'E_OVERLOADED', message });
    this.cut = true;
    this.dispose();
    this.socket.close(WS_CLOSE.too_many_sockets, 'E_OVERLOADED');
  }

  /** Write callback of every frame: the socket made progress, so try to move the queue. */
  private readonly onSent = (err?: Error | null): void => {
    if (err) return;
    if (this.head < this.queue.length || this.dropped > 0) this.pump();
  };

  private pump(): void {
    const socket = this.socket;
    if (socket.readyState !== OPEN) return;
    const max = this.gw.maxBytes;
    while (this.head < this.queue.length && this.inFlight() < max) {
      const item = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      if (typeof item === 'string') socket.send(item, this.onSent);
      else {
        this.queuedEvents -= item.events;
        this.queuedBytes -= item.wire.length;
        this.write(item);
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      this.queuedEvents = 0;
      this.queuedBytes = 0;
      if (this.dropped > 0 && this.inFlight() < max) {
        socket.send(`{"type":"dropped","count":${this.dropped}}`, this.onSent);
        this.gw.counters.dropped_notices++;
        this.dropped = 0;
        this.droppedBytes = 0;
      }
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Sends a control message in order with queued events (never dropped). */
  send(msg: object): void {
    if (this.cut || this.socket.readyState !== OPEN) return;
    // the events its group emitted before this message go first
    this.group?.flush();
    const frame = JSON.stringify(msg);
    if (this.head === this.queue.length && this.dropped === 0) this.socket.send(frame, this.onSent);
    else this.queue.push(frame);
  }

  sendError(error: ErrorInfo): void {
    this.send({
      type: 'error',
      error: {
        code: error.code,
        message: error.message,
        ...(error.details !== undefined ? { details: error.details } : {}),
      },
    });
  }

  fail(code: 'E_UNAUTHENTICATED' | 'E_FORBIDDEN', message: string): void {
    this.sendError({ code, message });
    this.socket.close(code === 'E_UNAUTHENTICATED' ? WS_CLOSE.unauthenticated : WS_CLOSE.forbidden, code);
  }

  /** Ends the session of a revoked token: no event after this, an error frame, then close 4401. */
  revoke(message: string): void {
    this.dispose();
    this.principal = undefined;
    this.session = undefined;
    this.fail('E_UNAUTHENTICATED', message);
  }

  startAuthTimer(ms: number): void {
    const what = this.session ? '{"op":"auth","csrf":…}' : '{"op":"auth","token":…}';
    this.authTimer = setTimeout(() => {
      if (!this.principal) this.fail('E_UNAUTHENTICATED', `no ${what} within ${ms} ms`);
    }, ms);
    this.authTimer.unref();
  }

  authenticated(principal: Principal): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = undefined;
    if (!hasRole(principal, ACCESS.viewer)) {
      this.fail('E_FORBIDDEN', `role ${principal.roles.join(',')} may not read events`);
      return;
    }
    this.principal = principal;
    this.send({ type: 'ready' });
  }

  /**
   * Joins the group of its new filter (after {@link leave} of the old one: a group left empty is
   * gone): `subscribed` is sent first, then only events emitted after it (a group flushes before
   * it takes a member).
   */
  subscribe(group: FanoutGroup, filter: WireFilter): void {
    this.leave();
    this.send({ type: 'subscribed', filter });
    group.add(this);
    this.group = group;
  }

  /** Leaves its group: no event reaches it any more. */
  leave(): void {
    const g = this.group;
    this.group = undefined;
    g?.remove(this);
  }

  dispose(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.leave();
    this.queue = [];
    this.head = 0;
    this.queuedEvents = 0;
    this.queuedBytes = 0;
  }
}

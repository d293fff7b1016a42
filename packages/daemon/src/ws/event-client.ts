// One subscriber of `/v1/events`: its bounded queue, drop counting, slow-consumer cut-off, corked
// writes and authentication state. The gateway (event-gateway.ts) owns the sockets and the limits.

import type { WebSocket } from 'ws';

import type { EventBus, EventFilter } from '@finger/hub';
import type { ErrorInfo, Principal } from '@finger/protocol';

import { ACCESS, hasRole } from '../auth/auth-hook.js';
import type { WireFilter } from './subscribe-filter.js';
import { OPEN, type RawSocket, TEXT } from './ws-frames.js';

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

/** What a client uses of its gateway: the shared counters, the bounds, the shared frames, the flush. */
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
  readonly flushBytes: number;
  /** The frame of an event line (one Buffer per event, shared by every client). */
  frameOf(json: string): Buffer;
  /** The wire bytes of that frame. */
  wireOf(frame: Buffer): Buffer;
  /** Schedules the uncork of this client's socket. */
  flushLater(client: EventClient): void;
}

/**
 * One connected client. Events are forwarded as frames built once per event for every client (a
 * shared Buffer: no per-socket string or UTF-8 encoding); when the socket's buffer is above the
 * byte bound, frames wait in a queue bounded by count; when the queue is full new events are
 * dropped and counted until the client has drained everything, then it is told
 * `{"type":"dropped","count":n}`. A client that falls `max_slow_bytes` behind (bytes in the
 * socket, queued, and dropped since it caught up) is cut off with close 4008 and its queue freed.
 * Nothing here ever waits for the client, so a stalled reader costs the emitter a few compares
 * per event, and a cut one none.
 */
export class EventClient {
  principal: Principal | undefined;
  /** A browser session's key and principal, waiting for its CSRF token (then kept: sign-out closes). */
  session: { key: string; principal: Principal } | undefined;
  alive = true;
  private unsubscribe: (() => void) | undefined;
  /** Event frames (shared Buffers) and control messages (strings), in order. */
  private queue: (Buffer | string | undefined)[] = [];
  private head = 0;
  private dropped = 0;
  /** Bytes of the frames in `queue`. */
  private queuedBytes = 0;
  /** Bytes of the events dropped since the client last caught up. */
  private droppedBytes = 0;
  /** Cut off (slow) or refused: nothing more is sent. */
  private cut = false;
  /** The principal id counted in the gateway's per-token socket counts. */
  counted: string | undefined;
  /** The TCP socket while corked (until the gateway's flush). */
  private corked: { uncork(): void } | false = false;
  /** In the gateway's list of clients to flush. */
  private scheduled = false;
  private authTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly gw: ClientHost,
    readonly socket: WebSocket,
  ) {}

  /** Bus listener: called synchronously on every matching emit. */
  readonly onEvent = (json: string): void => {
    if (this.cut || this.socket.readyState !== OPEN) return;
    const gw = this.gw;
    const s = gw.counters;
    if (this.dropped > 0) {
      this.dropped++;
      s.events_dropped++;
      this.droppedBytes += json.length;
      if (gw.maxSlowBytes > 0 && this.behind() > gw.maxSlowBytes) this.cutOff();
      return;
    }
    const frame = gw.frameOf(json);
    if (this.head === this.queue.length && this.socket.bufferedAmount < gw.maxBytes) {
      this.write(frame);
      s.events_sent++;
      if (this.socket.bufferedAmount >= gw.flushBytes) this.uncork();
      return;
    }
    if (this.queue.length - this.head >= gw.maxEvents) {
      this.dropped = 1;
      s.events_dropped++;
      this.droppedBytes += json.length;
      if (gw.maxSlowBytes > 0 && this.behind() > gw.maxSlowBytes) this.cutOff();
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    if (gw.maxSlowBytes > 0 && this.behind() > gw.maxSlowBytes) return this.cutOff();
    if (this.socket.bufferedAmount < gw.maxBytes) this.pump();
  };

  /**
   * Writes an event frame: the gateway's wire bytes straight to the TCP socket (the same bytes for
   * every client: server frames are not masked), through ws when an extension was negotiated.
   * Called in order with {@link send}'s control messages, which ws writes synchronously.
   */
  private write(frame: Buffer): void {
    const raw = this.rawSocket();
    if (raw === undefined || this.socket.extensions !== '') {
      this.socket.send(frame, TEXT, this.onSent);
      return;
    }
    this.cork();
    raw.write(this.gw.wireOf(frame), this.onSent);
  }

  private rawSocket(): RawSocket | undefined {
    return (this.socket as unknown as { _socket?: RawSocket })._socket;
  }

  /**
   * Holds this tick's frames in the TCP socket until the gateway's next flush (one write of many
   * frames instead of one per frame); `bufferedAmount` still counts them.
   */
  private cork(): void {
    if (this.corked) return;
    const raw = this.rawSocket();
    if (raw === undefined) return;
    raw.cork();
    this.corked = raw;
    if (this.scheduled) return;
    this.scheduled = true;
    this.gw.flushLater(this);
  }

  /** The gateway's flush: writes what {@link cork} held. */
  flushed(): void {
    this.scheduled = false;
    this.uncork();
  }

  /** Writes what {@link cork} held (at the flush, or at once past `flushBytes` held). */
  private uncork(): void {
    const raw = this.corked;
    if (!raw) return;
    this.corked = false;
    raw.uncork();
  }

  /** Bytes this client is behind: in the socket, queued here, and dropped since it caught up. */
  private behind(): number {
    return this.socket.bufferedAmount + this.queuedBytes + this.droppedBytes;
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
    while (this.head < this.queue.length && socket.bufferedAmount < max) {
      const frame = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      if (typeof frame === 'string') socket.send(frame, this.onSent);
      else {
        this.queuedBytes -= frame.length;
        this.write(frame);
        this.gw.counters.events_sent++;
        if (socket.bufferedAmount >= this.gw.flushBytes) this.uncork();
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      this.queuedBytes = 0;
      if (this.dropped > 0 && socket.bufferedAmount < max) {
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

  subscribe(events: EventBus, filter: WireFilter): void {
    this.unsubscribe?.();
    this.send({ type: 'subscribed', filter });
    const f: EventFilter = {};
    if (filter.types) f.types = filter.types;
    if (filter.session_id) f.session_id = filter.session_id;
    if (filter.request_id) f.request_id = filter.request_id;
    if (filter.correlation_id) f.correlation_id = filter.correlation_id;
    this.unsubscribe = events.subscribeJson(f, this.onEvent);
  }

  dispose(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
  }
}

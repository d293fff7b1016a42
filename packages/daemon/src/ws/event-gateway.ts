import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import * as wsLib from 'ws';

import type { EventBus, EventFilter, Logger } from '@finger/hub';
import {
  type ErrorInfo,
  type EventType,
  FingerError,
  isEventType,
  jsonLimitError,
  type Principal,
} from '@finger/protocol';

import { ACCESS, hasRole } from '../auth/auth-hook.js';
import type { SessionStore } from '../auth/session-store.js';
import type { TokenStore } from '../auth/token-store.js';

/** Options of {@link EventGateway}. */
export interface EventGatewayOptions {
  events: EventBus;
  tokens: TokenStore;
  /**
   * Browser sessions: an upgrade authenticated by the session cookie (and the daemon's own Origin)
   * shows the session's CSRF token in `{"op":"auth","csrf":…}` before it is ready.
   */
  sessions?: SessionStore;
  logger: Logger;
  /** Most frames queued per client beyond the socket buffer; past it new events are dropped and counted. */
  max_buffered_events: number;
  /** Socket bytes in flight above which frames are queued instead of written. */
  max_buffered_bytes: number;
  /**
   * Bytes a client may fall behind (socket bytes in flight + queued frames + events dropped since
   * it last caught up) before it is cut off: close 4008, counted in `slow_closed`. 0: never cut.
   */
  max_slow_bytes?: number;
  /** Sockets open at once (authenticated or not); one more is refused with close 4429. 0: no limit. */
  max_sockets?: number;
  /** Sockets open at once per principal (token); one more is refused with close 4429. 0: no limit. */
  max_sockets_per_token?: number;
  /** Ping period; a client that did not answer the previous ping is terminated. */
  heartbeat_ms: number;
  /** How long a client without an Authorization header has to send `{"op":"auth"}`. */
  auth_timeout_ms: number;
  /** The kill switch behind `{"op":"halt"}` (admin or operator); absent: the op is unknown. */
  halt?: (actor: Principal) => Promise<{ phase: string }>;
}

/** Counters for /metrics. */
export interface EventGatewayStats {
  clients: number;
  events_sent: number;
  events_dropped: number;
  dropped_notices: number;
  /** Clients cut off for falling `max_slow_bytes` behind. */
  slow_closed: number;
  /** Sockets refused by `max_sockets` / `max_sockets_per_token`. */
  sockets_refused: number;
}

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

const OPEN = 1;

/** The filter fields a subscriber may set, as echoed in `{"type":"subscribed"}`. */
interface WireFilter {
  types?: EventType[];
  session_id?: string;
  request_id?: string;
  correlation_id?: string;
}

function parseSubscribe(msg: Record<string, unknown>): WireFilter {
  const issues: { path: string; message: string }[] = [];
  const out: WireFilter = {};
  if (msg.types !== undefined) {
    if (!Array.isArray(msg.types)) issues.push({ path: '$.types', message: 'must be an array of event types' });
    else {
      msg.types.forEach((t, i) => {
        if (!isEventType(t)) issues.push({ path: `$.types[${i}]`, message: `unknown event type ${JSON.stringify(t)}` });
      });
      if (msg.types.length > 0) out.types = msg.types as EventType[];
    }
  }
  for (const key of ['session_id', 'request_id', 'correlation_id'] as const) {
    const v = msg[key];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || v.length > 256)
      issues.push({ path: `$.${key}`, message: 'must be a string (≤ 256 chars)' });
    else out[key] = v;
  }
  for (const key of Object.keys(msg)) {
    if (!['op', 'types', 'session_id', 'request_id', 'correlation_id'].includes(key))
      issues.push({ path: `$.${key}`, message: 'is not an allowed key' });
  }
  if (issues.length)
    throw new FingerError(
      'E_INVALID_ARGS',
      `bad subscribe: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      { issues },
    );
  return out;
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
class Client {
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
    private readonly gw: EventGateway,
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

/** ws send options of an event frame: a text frame from a Buffer (no per-socket encoding). */
const TEXT = { binary: false } as const;

/**
 * How long corked event frames wait for more before they are written (one gateway timer, armed
 * only while some socket holds frames): fewer, larger writes per socket for that much latency.
 */
const FLUSH_MS = 10;

/** What the gateway uses of a ws client's TCP socket. */
interface RawSocket {
  cork(): void;
  uncork(): void;
  write(data: Buffer, cb: (err?: Error | null) => void): boolean;
}

/** `ws`'s frame builder (exported by `ws`, not declared by @types/ws). */
const WsSender = (wsLib as unknown as { Sender: { frame(data: Buffer, o: FrameOptions): Buffer[] } }).Sender;
interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}

/**
 * The whole WebSocket frame of a text message (FIN, opcode 1, unmasked, no extension), framed by
 * `ws`'s own `Sender.frame` — the library's framing, not ours — and joined into one buffer so every
 * client's socket gets the same bytes.
 */
function textFrame(payload: Buffer): Buffer {
  return Buffer.concat(WsSender.frame(payload, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }));
}

/**
 * The WebSocket gateway of `/v1/events` (§3.9, http-api.md): authentication by header or first
 * message, `subscribe` filters, per-client bounded buffering with `dropped` notices, and a
 * heartbeat that terminates clients which stop answering pings.
 */
export class EventGateway {
  readonly counters = { events_sent: 0, events_dropped: 0, dropped_notices: 0, slow_closed: 0, sockets_refused: 0 };
  readonly maxEvents: number;
  readonly maxBytes: number;
  readonly maxSlowBytes: number;
  /** Bytes a corked socket may hold before it is written at once (half the socket bound, ≤ 64 KiB). */
  readonly flushBytes: number;
  private readonly clients = new Set<Client>();
  /** Open sockets per principal id (authenticated clients). */
  private readonly perToken = new Map<string, number>();
  /** Clients corked since the last flush (each once), and whether a flush is scheduled. */
  private toFlush: Client[] = [];
  private flushing = false;
  /** The last event line framed, and its frame: every client of one emit shares it. */
  private lastJson: string | undefined;
  private lastFrame: Buffer = Buffer.alloc(0);
  private wireFor: Buffer | undefined;
  private wire: Buffer = Buffer.alloc(0);
  private readonly heartbeat: NodeJS.Timeout;
  private readonly stopRevoked: () => void;
  private readonly stopSessionEnded: () => void;
  private closed = false;

  constructor(private readonly o: EventGatewayOptions) {
    this.maxEvents = o.max_buffered_events;
    this.maxBytes = o.max_buffered_bytes;
    this.maxSlowBytes = o.max_slow_bytes ?? 0;
    this.flushBytes = Math.min(64 * 1024, Math.floor(o.max_buffered_bytes / 2));
    this.heartbeat = setInterval(() => this.beat(), o.heartbeat_ms);
    this.heartbeat.unref();
    this.stopRevoked = o.tokens.onRevoked((name) => this.revoked(name));
    this.stopSessionEnded = o.sessions?.onEnded((key) => this.sessionEnded(key)) ?? (() => undefined);
  }

  /**
   * The frame of an event line, built once per event: the bus hands every subscriber of one emit
   * the same line, so all clients (whatever their filter) share one Buffer.
   */
  frameOf(json: string): Buffer {
    if (json !== this.lastJson) {
      this.lastJson = json;
      this.lastFrame = Buffer.from('{"type":"event","event":' + json + '}');
    }
    return this.lastFrame;
  }

  /** Schedules the uncork of a client's socket (one flush for all, {@link FLUSH_MS} later). */
  flushLater(client: Client): void {
    this.toFlush.push(client);
    if (this.flushing) return;
    this.flushing = true;
    setTimeout(this.flush, FLUSH_MS).unref();
  }

  private readonly flush = (): void => {
    const list = this.toFlush;
    this.toFlush = [];
    this.flushing = false;
    for (const c of list) c.flushed();
  };

  /** The wire bytes of the last frame (built once per event, for the clients written raw). */
  wireOf(frame: Buffer): Buffer {
    if (frame !== this.wireFor) {
      this.wireFor = frame;
      this.wire = textFrame(frame);
    }
    return this.wire;
  }

  /** The `wsHandler` of `GET /v1/events`. `request.principal` is set when a valid header came with the upgrade. */
  handle(socket: WebSocket, request: FastifyRequest): void {
    const client = new Client(this, socket);
    if (this.closed) {
      socket.close(WS_CLOSE.shutdown, 'daemon shutting down');
      return;
    }
    const max = this.o.max_sockets ?? 0;
    if (max > 0 && this.clients.size >= max) {
      this.counters.sockets_refused++;
      client.refuse(`too many WebSocket clients (ws.max_sockets ${max})`);
      return;
    }
    this.clients.add(client);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('close', () => {
      client.dispose();
      this.clients.delete(client);
      this.uncount(client);
    });
    socket.on('message', (data, isBinary) => this.onMessage(client, data, isBinary));
    if (request.sessionKey && request.principal) {
      client.session = { key: request.sessionKey, principal: request.principal };
      client.startAuthTimer(this.o.auth_timeout_ms);
    } else if (request.principal) this.authenticated(client, request.principal);
    else if (request.headers.authorization) client.fail('E_UNAUTHENTICATED', 'invalid bearer token');
    else client.startAuthTimer(this.o.auth_timeout_ms);
  }

  /**
   * A client proved who it is: refused (4429) past `max_sockets_per_token` sockets of that
   * principal, else counted and ready.
   */
  private authenticated(client: Client, principal: Principal): void {
    const max = this.o.max_sockets_per_token ?? 0;
    const n = this.perToken.get(principal.id) ?? 0;
    if (max > 0 && n >= max) {
      this.counters.sockets_refused++;
      client.refuse(`too many WebSocket clients for "${principal.id}" (ws.max_sockets_per_token ${max})`);
      return;
    }
    this.perToken.set(principal.id, n + 1);
    client.counted = principal.id;
    client.authenticated(principal);
  }

  private uncount(client: Client): void {
    const id = client.counted;
    if (id === undefined) return;
    client.counted = undefined;
    const n = (this.perToken.get(id) ?? 1) - 1;
    if (n > 0) this.perToken.set(id, n);
    else this.perToken.delete(id);
  }

  /** Counters for /metrics. */
  stats(): EventGatewayStats {
    return { clients: this.clients.size, ...this.counters };
  }

  /** Stops the heartbeat and closes every client (1001). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.stopRevoked();
    this.stopSessionEnded();
    for (const c of this.clients) {
      c.dispose();
      c.socket.close(WS_CLOSE.shutdown, 'daemon shutting down');
    }
    this.clients.clear();
    this.perToken.clear();
  }

  private onMessage(client: Client, data: unknown, isBinary: boolean): void {
    let msg: Record<string, unknown>;
    try {
      if (isBinary) throw new Error('binary frame');
      const v: unknown = JSON.parse(String(data));
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
      msg = v as Record<string, unknown>;
    } catch {
      client.sendError({ code: 'E_INVALID_ARGS', message: 'messages must be JSON objects with an "op"' });
      return;
    }
    const tooDeep = jsonLimitError(msg, 'message');
    if (tooDeep) {
      client.sendError(tooDeep.toJSON());
      return;
    }
    if (!client.principal && client.session) {
      const { key, principal } = client.session;
      if (msg.op !== 'auth') return client.fail('E_UNAUTHENTICATED', 'authenticate first: {"op":"auth","csrf":…}');
      const ok = typeof msg.csrf === 'string' && this.o.sessions?.checkCsrf(key, msg.csrf) === true;
      if (!ok) return client.fail('E_UNAUTHENTICATED', 'invalid csrf token for this session');
      if (!this.o.sessions?.isLive(key)) return client.fail('E_UNAUTHENTICATED', 'the browser session has ended');
      this.authenticated(client, principal);
      return;
    }
    if (!client.principal) {
      if (msg.op !== 'auth') return client.fail('E_UNAUTHENTICATED', 'authenticate first: {"op":"auth","token":…}');
      const principal = typeof msg.token === 'string' ? this.o.tokens.authenticate(msg.token) : undefined;
      if (!principal) return client.fail('E_UNAUTHENTICATED', 'invalid token');
      this.authenticated(client, principal);
      return;
    }
    try {
      switch (msg.op) {
        case 'subscribe':
          client.subscribe(this.o.events, parseSubscribe(msg));
          return;
        case 'auth':
          client.sendError({ code: 'E_INVALID_ARGS', message: 'already authenticated' });
          return;
        case 'halt':
          if (this.o.halt) return this.halt(client, this.o.halt);
          client.sendError({ code: 'E_INVALID_ARGS', message: 'unknown op "halt" (no kill switch here)' });
          return;
        default:
          client.sendError({
            code: 'E_INVALID_ARGS',
            message: `unknown op ${JSON.stringify(msg.op)} (expected "subscribe")`,
          });
      }
    } catch (e) {
      const err = e as FingerError;
      client.sendError({ code: err.code ?? 'E_INTERNAL', message: err.message, details: err.details });
    }
  }

  /** `{"op":"halt"}` → `{"type":"halted","phase"}`, or an error frame (E_FORBIDDEN below operator). */
  private halt(client: Client, halt: (actor: Principal) => Promise<{ phase: string }>): void {
    const principal = client.principal!;
    if (!hasRole(principal, ACCESS.operator))
      return client.sendError({ code: 'E_FORBIDDEN', message: 'halt needs the admin or operator role' });
    halt(principal).then(
      (r) => client.send({ type: 'halted', phase: r.phase }),
      (e: unknown) => {
        const err = e as FingerError;
        client.sendError({ code: err.code ?? 'E_INTERNAL', message: err.message });
      },
    );
  }

  /**
   * A token was revoked: every client authenticated with it (the principal's id is the token's
   * name, unique) stops receiving at once — its subscription and anything still queued for it are
   * dropped — is told E_UNAUTHENTICATED and closed with 4401.
   */
  private revoked(name: string): void {
    for (const c of this.clients) {
      if (c.principal?.id !== name) continue;
      this.o.logger.info({ principal: name }, 'token revoked; closing its websocket');
      c.revoke(`the token "${name}" was revoked`);
    }
  }

  /** A browser session ended (sign-out, expiry, eviction): its sockets close like a revoked token's. */
  private sessionEnded(key: string): void {
    for (const c of this.clients) {
      if (c.session?.key !== key) continue;
      c.revoke('the browser session has ended');
    }
  }

  private beat(): void {
    for (const c of this.clients) {
      // an open console keeps its session in use; one that expired (absolute lifetime) is closed
      // (an expired one ends here: sessionEnded closes its sockets)
      if (c.session && c.principal && this.o.sessions && !this.o.sessions.isLive(c.session.key, true)) continue;
      if (!c.alive) {
        this.o.logger.debug({ principal: c.principal?.id }, 'websocket client missed a heartbeat; terminating');
        c.dispose();
        this.clients.delete(c);
        this.uncount(c);
        c.socket.terminate();
        continue;
      }
      c.alive = false;
      try {
        c.socket.ping();
      } catch {
        // socket already closing
      }
    }
  }
}

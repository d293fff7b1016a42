import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';

import type { EventBus, Logger } from '@finger/hub';
import { type FingerError, jsonLimitError, type Principal } from '@finger/protocol';

import { ACCESS, hasRole } from '../auth/auth-hook.js';
import type { SessionStore } from '../auth/session-store.js';
import type { TokenStore } from '../auth/token-store.js';
import { EventClient, WS_CLOSE } from './event-client.js';
import { FanoutGroup, filterKey, type GroupHost } from './fanout-group.js';
import { parseSubscribe, type WireFilter } from './subscribe-filter.js';

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
  /**
   * Bytes in flight (written and not yet acknowledged by the client's pong to a counting ping)
   * above which batches are queued instead of written.
   */
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

export { WS_CLOSE } from './event-client.js';

/**
 * The flush window: a group that flushed less than this long ago keeps new events until the
 * window ends (one gateway timer, armed only while some group holds events), so a busy stream
 * costs each socket at most one write per window — each write to a loopback socket costs ≈ 5–7 µs
 * of CPU here whatever its size, so at 10 ms (≈ 100 writes/s/socket) 500 subscribers took ≈ 0.3
 * of a core. A group idle for a window flushes at the next turn instead: an event alone is not
 * delayed.
 */
const FLUSH_MS = 50;

/**
 * The WebSocket gateway of `/v1/events` (§3.9, http-api.md): authentication by header or first
 * message, `subscribe` filters, per-client bounded buffering with `dropped` notices, and a
 * heartbeat that terminates clients which stop answering pings.
 */
export class EventGateway implements GroupHost {
  readonly counters = { events_sent: 0, events_dropped: 0, dropped_notices: 0, slow_closed: 0, sockets_refused: 0 };
  readonly maxEvents: number;
  readonly maxBytes: number;
  readonly maxSlowBytes: number;
  /** Bytes of events a group may hold before it is flushed at once (a quarter of the socket bound, ≤ 256 KiB). */
  readonly flushBytes: number;
  private readonly clients = new Set<EventClient>();
  /** Open sockets per principal id (authenticated clients). */
  private readonly perToken = new Map<string, number>();
  /** The clients of each distinct filter ({@link filterKey}): one bus subscription per filter. */
  private readonly groups = new Map<string, FanoutGroup>();
  /** Groups to flush at the end of the window, and whether that timer is armed. */
  private toFlush: FanoutGroup[] = [];
  private flushing = false;
  /** Groups to flush at the next turn, and whether that is scheduled. */
  private toFlushSoon: FanoutGroup[] = [];
  private flushingSoon = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly stopRevoked: () => void;
  private readonly stopSessionEnded: () => void;
  private closed = false;

  constructor(private readonly o: EventGatewayOptions) {
    this.maxEvents = o.max_buffered_events;
    this.maxBytes = o.max_buffered_bytes;
    this.maxSlowBytes = o.max_slow_bytes ?? 0;
    this.flushBytes = Math.min(256 * 1024, Math.floor(o.max_buffered_bytes / 4));
    this.heartbeat = setInterval(() => this.beat(), o.heartbeat_ms);
    this.heartbeat.unref();
    this.stopRevoked = o.tokens.onRevoked((name) => this.revoked(name));
    this.stopSessionEnded = o.sessions?.onEnded((key) => this.sessionEnded(key)) ?? (() => undefined);
  }

  /** Schedules a group's flush: at the next turn after a quiet window, else {@link FLUSH_MS} later. */
  flushLater(group: FanoutGroup, lastFlush: number): void {
    if (performance.now() - lastFlush >= FLUSH_MS) {
      this.toFlushSoon.push(group);
      if (this.flushingSoon) return;
      this.flushingSoon = true;
      setImmediate(this.flushSoon).unref();
      return;
    }
    this.toFlush.push(group);
    if (this.flushing) return;
    this.flushing = true;
    setTimeout(this.flush, FLUSH_MS).unref();
  }

  private readonly flush = (): void => {
    const list = this.toFlush;
    this.toFlush = [];
    this.flushing = false;
    for (const g of list) g.flush();
  };

  private readonly flushSoon = (): void => {
    const list = this.toFlushSoon;
    this.toFlushSoon = [];
    this.flushingSoon = false;
    for (const g of list) g.flush();
  };

  /** A group's last client left. */
  emptied(group: FanoutGroup): void {
    if (this.groups.get(group.key) === group) this.groups.delete(group.key);
  }

  /** The group of a filter, made (and subscribed to the bus) by its first client. */
  private groupFor(filter: WireFilter): FanoutGroup {
    const key = filterKey(filter);
    let g = this.groups.get(key);
    if (g === undefined) {
      g = new FanoutGroup(this, this.o.events, key, filter);
      this.groups.set(key, g);
    }
    return g;
  }

  /** The `wsHandler` of `GET /v1/events`. `request.principal` is set when a valid header came with the upgrade. */
  handle(socket: WebSocket, request: FastifyRequest): void {
    const client = new EventClient(this, socket);
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
    socket.on('pong', (data) => {
      client.alive = true;
      client.ponged(data);
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
  private authenticated(client: EventClient, principal: Principal): void {
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

  private uncount(client: EventClient): void {
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

  private onMessage(client: EventClient, data: unknown, isBinary: boolean): void {
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
          {
            const filter = parseSubscribe(msg);
            // left first: the group it leaves may be the one it joins, and gone once empty
            client.leave();
            client.subscribe(this.groupFor(filter), filter);
          }
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
  private halt(client: EventClient, halt: (actor: Principal) => Promise<{ phase: string }>): void {
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

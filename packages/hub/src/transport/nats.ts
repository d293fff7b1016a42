import { randomFillSync } from 'node:crypto';

import { createInbox, Events, type Msg, type NatsConnection, type Subscription } from 'nats';

import type { Envelope, Principal } from '@finger/protocol';
import { FingerError, toErrorInfo } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../logger.js';
import { moduleOf } from './in-process.js';
import { MAX_BATCH, parseBatch, WireBatch } from './nats-batch.js';
import { encodeRequest, readReply } from './nats-envelope.js';
import { flushNow } from './nats-flush.js';
import { frameRefused, type NatsTransportOptions } from './nats-options.js';
import { Pending, PromiseSink, RequestCanceller } from './nats-pending.js';
import { NatsServeSide, reportDropped, reportRefused } from './nats-serve.js';
import { permissionRefusal, subscribeChecked } from './nats-subscribe.js';
import {
  type ClusterSubjects,
  clusterSubjects,
  decodeJson,
  type OpenedFrame,
  type ServeScope,
  utf8Length,
  type WireAuth,
} from './nats-wire.js';
import type { ReplySink } from './reply-sink.js';
import type { RequestHooks, Transport, TransportHandler, Unserve } from './transport.js';

export type { DroppedMessage, NatsTransportOptions } from './nats-options.js';

/**
 * The hub's {@link Transport} over NATS (DESIGN §3.14). `serve(module)` subscribes to
 * `finger.<cluster>.call.<module>` in the queue group of that module (replicas share the load)
 * and flushes the subscription before resolving, so a module announced afterwards never loses
 * its first call. `request()` publishes the signed envelope with a reply subject on one shared
 * inbox and resolves with the reply envelope; progress and lease extensions arrive on the same
 * inbox, cancels go out on `finger.<cluster>.cancel`.
 *
 * Failures never hang: a request larger than the server's max_payload fails at once with
 * E_INVALID_ARGS; while the connection is down, or when nobody serves the module (NATS "no
 * responders"), with E_NO_TARGET; past the envelope's deadline with E_TIMEOUT (one sweep timer,
 * not a timer per call); past `max_pending` outstanding requests with E_OVERLOADED. Nothing is
 * buffered for a later reconnect. Messages failing authentication or envelope validation are
 * dropped and reported to `onDropped`; a request signed by a `module serve` process is refused
 * with E_FORBIDDEN (serve processes may only answer).
 */
export class NatsTransport implements Transport {
  readonly name = 'nats';
  readonly subjects: ClusterSubjects;
  private readonly nc: NatsConnection;
  private readonly auth: WireAuth;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly o: NatsTransportOptions;
  /** The serving side: the modules this process serves on NATS. */
  private readonly server: NatsServeSide;
  private readonly pending = new Map<string, Pending>();
  private readonly maxPending: number;
  private inbox: string | undefined;
  private inboxSub: Subscription | undefined;
  private readonly tokens = new ReplyTokens();
  /** Requests waiting for the end of this event-loop turn, by module. */
  private readonly batches = new Map<string, WireBatch>();
  private batchesScheduled = false;
  private sweep: unknown;
  private up = true;
  private closed = false;

  constructor(o: NatsTransportOptions) {
    this.o = o;
    this.nc = o.connection;
    this.auth = o.auth;
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger ?? silentLogger;
    this.subjects = clusterSubjects(o.cluster);
    this.maxPending = o.max_pending ?? 10_000;
    this.server = new NatsServeSide({
      o,
      subjects: this.subjects,
      clock: this.clock,
      logger: this.logger,
      connected: () => this.connected,
    });
    void this.watchStatus();
  }

  /** False while the connection is down (requests then fail fast with E_NO_TARGET). */
  get connected(): boolean {
    return this.up && !this.nc.isClosed();
  }

  /** Outstanding requests sent and requests being served, for metrics. */
  stats(): { pending: number; serving: number } {
    return { pending: this.pending.size, serving: this.server.serving };
  }

  serve(target: string, handler: TransportHandler): Promise<Unserve> {
    if (this.closed) return Promise.reject(new FingerError('E_PROVIDER_CLOSED', 'transport is closed'));
    return this.server.serve(target, handler);
  }

  request(request: Envelope, hooks?: RequestHooks): Promise<Envelope> {
    return new Promise<Envelope>((resolve, reject) => this.send(request, new PromiseSink(resolve, reject, hooks)));
  }

  /**
   * request() for a caller that settles by callback ({@link ReplySink}: the hub's calls to a
   * `{type: "nats"}` module): the reply envelope or the failure goes to `sink`, with the same
   * errors as request(). Never throws: what fails at once reaches `sink.onFailed` from a microtask.
   */
  send(request: Envelope, sink: ReplySink): void {
    let failure: FingerError | undefined;
    try {
      failure = this.trySend(request, sink);
    } catch (e) {
      // a payload JSON cannot encode (a BigInt, a cycle): answered as the module host answers a throw
      failure = FingerError.fromInfo(toErrorInfo(e));
    }
    if (failure !== undefined) {
      const e = failure;
      queueMicrotask(() => sink.onFailed(e));
    }
  }

  /** Sends `request` or says why it cannot go out. */
  private trySend(request: Envelope, sink: ReplySink): FingerError | undefined {
    if (this.closed) return new FingerError('E_PROVIDER_CLOSED', 'transport is closed');
    const target = request.target;
    if (!this.connected)
      return new FingerError('E_NO_TARGET', `NATS is unavailable: cannot reach "${target}"`, { target });
    if (this.pending.size >= this.maxPending)
      return new FingerError('E_OVERLOADED', `too many outstanding NATS requests (${this.maxPending})`, { target });
    const module_id = moduleOf(target);
    const forServe: ServeScope = (this.o.servedByServe?.(module_id) ?? true) ? module_id : false;
    if (this.inbox === undefined) this.openInbox();
    let token = this.tokens.next();
    while (this.pending.has(token)) token = this.tokens.next();
    const line = `${token} ${encodeRequest(request)}`;
    const lineBytes = utf8Length(line);
    const frameLine = this.auth.lineLength('request', forServe);
    const max = this.nc.info?.max_payload ?? 1024 * 1024;
    if (frameLine + lineBytes > max) {
      const bytes = frameLine + lineBytes;
      return new FingerError('E_INVALID_ARGS', `request of ${bytes} bytes exceeds the NATS max_payload (${max})`, {
        target,
        bytes,
        max_payload: max,
      });
    }
    this.track(token, request, sink);
    if (this.sweep === undefined)
      this.sweep = this.clock.setInterval(() => this.sweepDeadlines(), this.o.sweep_ms ?? 25);
    let batch = this.batches.get(module_id);
    if (batch === undefined && this.pending.size === 1 && !this.batchesScheduled) {
      // nothing else outstanding, nothing to batch with: no wait for the end of the turn
      const subject = this.subjects.call(module_id);
      const frame = this.auth.sealJson(subject, 'request', line, forServe, lineBytes);
      try {
        this.nc.publish(subject, frame, { reply: `${this.inbox}.${token}` });
        flushNow(this.nc);
      } catch (e) {
        this.pending.delete(token);
        return new FingerError('E_NO_TARGET', `NATS publish failed: ${(e as Error).message}`, { target }, { cause: e });
      }
      return undefined;
    }
    // Requests to one module made in one turn of the event loop leave as one frame (nats-batch.ts).
    if (
      batch !== undefined &&
      (batch.forServe !== forServe || batch.tokens.length >= MAX_BATCH || frameLine + batch.bytesWith(lineBytes) > max)
    ) {
      this.sendBatch(batch);
      batch = undefined;
    }
    if (batch === undefined) {
      batch = new WireBatch(this.subjects.call(module_id), forServe);
      this.batches.set(module_id, batch);
    }
    batch.add(token, line, lineBytes);
    if (!this.batchesScheduled) {
      this.batchesScheduled = true;
      setImmediate(this.flushBatches);
    }
    return undefined;
  }

  serves(target: string): boolean {
    return this.server.serves(moduleOf(target));
  }

  /** Throws E_FORBIDDEN when the NATS server would not let this node serve `target` (see NatsServe.check). */
  checkServe(target: string): Promise<void> {
    return this.server.check(moduleOf(target));
  }

  /**
   * Stops serving (requests being served may answer for up to `drain_ms`), fails outstanding
   * requests with E_PROVIDER_CLOSED and, when it owns the connection, drains it. Idempotent.
   */
  async close(drain_ms = this.o.drain_ms ?? 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const subs = [...this.server.stop(), this.inboxSub];
    // calls taken from the wire may still answer (bounded by drain_ms) …
    const end = Date.now() + drain_ms;
    while (this.server.serving > 0 && Date.now() < end && !this.nc.isClosed())
      await new Promise((r) => setTimeout(r, 10));
    // … and those that did not are answered now: their callers need not wait for their deadlines
    if (this.server.serving > 0 && !this.nc.isClosed())
      this.server.abandon({
        code: 'E_PROVIDER_CLOSED',
        message: `node ${this.o.auth.node} stopped ${drain_ms} ms after its shutdown began, before the call answered`,
      });
    this.server.replies.flush(); // replies of the last turn go out before the connection drains
    this.batches.clear(); // requests not sent yet fail below with the others
    if (this.sweep !== undefined) this.clock.clearInterval(this.sweep);
    this.sweep = undefined;
    for (const [token, p] of this.pending) {
      this.pending.delete(token);
      p.reject(new FingerError('E_PROVIDER_CLOSED', `transport closed before "${p.target}" answered`));
    }
    if (this.nc.isClosed()) return;
    if (this.o.ownsConnection) {
      await this.nc.drain().catch(() => undefined);
      return;
    }
    for (const s of subs) if (s) s.unsubscribe();
  }

  // ---- caller side ----

  /** Registers an outstanding request and gives its sink a canceller. */
  private track(token: string, request: Envelope, sink: ReplySink): void {
    sink.canceller = new RequestCanceller(this, request.id, moduleOf(request.target));
    this.pending.set(token, new Pending(sink, request));
  }

  private readonly flushBatches = (): void => {
    this.batchesScheduled = false;
    if (this.batches.size === 0) return;
    const all = [...this.batches.values()];
    this.batches.clear();
    for (const b of all) this.sendBatch(b);
  };

  /** Publishes one batch; its requests fail with E_NO_TARGET when it cannot go out. */
  private sendBatch(b: WireBatch): void {
    const tokens = b.tokens;
    const first = this.pending.get(tokens[0]!);
    let failure: string | undefined;
    if (!this.connected) failure = 'NATS is unavailable';
    else {
      try {
        const frame = this.auth.sealJson(b.subject, 'request', b.body(), b.forServe, b.bytes);
        this.nc.publish(b.subject, frame, { reply: `${this.inbox}.${tokens[0]}` });
        if (tokens.length > 1 && first !== undefined) first.batch = tokens;
        return;
      } catch (e) {
        failure = `NATS publish failed: ${(e as Error).message}`;
      }
    }
    const failed: Pending[] = [];
    for (const t of tokens) {
      const p = this.pending.get(t);
      if (p === undefined) continue;
      this.pending.delete(t);
      failed.push(p);
    }
    // from a microtask: send() may be on the stack (a full batch goes out before the next request
    // joins one), and a sink settled now could send a request into the batch map it is changing
    queueMicrotask(() => {
      for (const p of failed) {
        const target = p.target;
        p.reject(new FingerError('E_NO_TARGET', `${failure}: cannot reach "${target}"`, { target }));
      }
    });
  }

  private openInbox(): void {
    const inbox = createInbox();
    const prefix = inbox.length + 1;
    this.inbox = inbox;
    this.inboxSub = subscribeChecked(this.nc, `${inbox}.*`, (msg) => this.onReply(msg.subject.slice(prefix), msg), {
      logger: this.logger,
      onRefused: (e) => this.onInboxRefused(inbox, e),
    }).sub;
  }

  /**
   * The server refused this process's reply inbox (its NATS user may not subscribe to `_INBOX.>`):
   * no reply can arrive, so the outstanding requests fail now with E_FORBIDDEN instead of at their
   * deadlines, and the next request opens a new inbox (failing the same way until the permission
   * is granted).
   */
  private onInboxRefused(inbox: string, e: FingerError): void {
    if (this.inbox !== inbox) return;
    this.inbox = undefined;
    this.inboxSub = undefined;
    for (const [token, p] of this.pending) {
      this.pending.delete(token);
      p.reject(e);
    }
  }

  private onReply(token: string, msg: Msg): void {
    // NATS "no responders": an empty status message (the only one with headers on this inbox)
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      const p = this.pending.get(token);
      if (p === undefined) return;
      for (const t of p.batch ?? [token]) {
        const q = this.pending.get(t);
        if (q === undefined) continue;
        this.pending.delete(t);
        const target = q.target;
        q.reject(new FingerError('E_NO_TARGET', `no node serves "${target}" in the cluster`, { target }));
      }
      return;
    }
    const check = this.auth.open(msg.data, msg.subject);
    if (!check.ok) {
      if (!check.quiet) reportRefused(this.logger, this.o.onDropped, frameRefused(check, msg.subject));
      return;
    }
    if (check.kind === 'reply') {
      this.onReplies(check.text(), msg, check);
      return;
    }
    const p = this.pending.get(token);
    if (p === undefined) return;
    if (!this.signedFor(check, p, msg)) return;
    if (check.kind === 'progress') {
      const d = decodeJson(check.text()) as { message?: unknown; fraction?: unknown } | undefined;
      if (typeof d?.message === 'string')
        p.sink?.onProgress?.(d.message, typeof d.fraction === 'number' ? d.fraction : undefined);
    } else if (check.kind === 'lease') {
      const d = decodeJson(check.text()) as { ttl_ms?: unknown } | undefined;
      if (typeof d?.ttl_ms === 'number' && d.ttl_ms > 0) p.sink?.onLeaseExtend?.(d.ttl_ms);
    }
  }

  /**
   * Whether a serve host's message about call `p` is signed for the called module: a host of
   * another module cannot answer, extend or report progress on it. A daemon's always is.
   */
  private signedFor(check: OpenedFrame, p: Pending, msg: Msg): boolean {
    if (check.scope === undefined || check.scope === moduleOf(p.target)) return true;
    this.dropped(`${check.kind} signed for module ${check.scope} to a call of "${p.target}"`, msg, check.node);
    return false;
  }

  /** A reply frame: the replies of one turn to this process, one `<token> <json>` line each. */
  private onReplies(body: string, msg: Msg, check: OpenedFrame): void {
    const node = check.node;
    const parts = parseBatch(body);
    if (parts === undefined) {
      this.dropped('invalid reply batch', msg, node);
      return;
    }
    for (const part of parts) {
      const p = this.pending.get(part.token);
      if (p === undefined || !this.signedFor(check, p, msg)) continue;
      const env = readReply(part.json, p.request!);
      if (env === undefined) {
        this.dropped('invalid reply envelope', msg, node);
        continue;
      }
      if (!answersFor(env.source, p.target, node)) {
        this.dropped(`reply from ${env.source.kind} "${env.source.id}" to a call of "${p.target}"`, msg, node);
        continue;
      }
      this.pending.delete(part.token);
      p.resolve(env);
    }
  }

  private sweepDeadlines(): void {
    if (this.pending.size === 0) {
      this.clock.clearInterval(this.sweep);
      this.sweep = undefined;
      return;
    }
    const now = this.clock.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(token);
      const target = p.target;
      this.sendCancel(p.id, moduleOf(target), 'E_TIMEOUT');
      p.reject(new FingerError('E_TIMEOUT', `call to "${target}" over NATS passed its deadline`, { target }));
    }
  }

  /**
   * Fails every outstanding request to module `module_id` with `error` (no node serving it has
   * been heard of for the cluster's unhealthy time, or this node lost NATS that long: no reply
   * will come) and sends their cancels, for a node that is still there. Returns how many.
   */
  failModule(module_id: string, error: FingerError): number {
    let n = 0;
    for (const [token, p] of this.pending) {
      if (moduleOf(p.target) !== module_id) continue;
      this.pending.delete(token);
      this.sendCancel(p.id, module_id, error.code);
      p.reject(error);
      n++;
    }
    return n;
  }

  /** Sends a cancel for every outstanding request to module `module_id` (its runtime closed). */
  cancelModule(module_id: string, reason: string): void {
    for (const p of this.pending.values())
      if (moduleOf(p.target) === module_id) this.sendCancel(p.id, module_id, reason);
  }

  /** Sends a cancel for request `id` to module `module_id` (its canceller). */
  cancelRequest(id: string, module_id: string, reason: string): void {
    this.sendCancel(id, module_id, reason);
  }

  private sendCancel(id: string, module_id: string, reason: string): void {
    if (this.batchesScheduled) {
      // the request may still wait in a batch: the cancel follows it out (setImmediate runs in order)
      setImmediate(() => this.publishCancel(id, module_id, reason));
      return;
    }
    this.publishCancel(id, module_id, reason);
  }

  /** One cancel subject for the cluster; signed for the module's serve hosts (others ignore it). */
  private publishCancel(id: string, module_id: string, reason: string): void {
    if (!this.connected) return;
    try {
      const body = JSON.stringify({ id, reason });
      this.nc.publish(this.subjects.cancel, this.auth.sealJson(this.subjects.cancel, 'cancel', body, module_id));
    } catch {
      // best effort: the server's own lease bounds the call
    }
  }

  private dropped(reason: string, msg: Msg, node?: string): void {
    reportDropped(this.logger, this.o.onDropped, reason, msg, node);
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === Events.Disconnect) this.up = false;
      else if (s.type === Events.Reconnect) this.up = true;
      else {
        const refusal = permissionRefusal(s);
        if (refusal?.operation === 'publish') this.onPublishRefused(refusal.subject);
      }
    }
  }

  /**
   * The server refused a publish (this node's NATS user lacks the permission). A refused call
   * subject means the requests to that module never left: they fail now with E_FORBIDDEN instead
   * of at their deadlines (the next ones are refused the same way, one round trip after sending).
   */
  private onPublishRefused(subject: string): void {
    const prefix = this.subjects.call('');
    if (!subject.startsWith(prefix)) return;
    const module_id = subject.slice(prefix.length);
    const e = new FingerError('E_FORBIDDEN', `NATS refused to publish the call to "${subject}"`, {
      subject,
      module: module_id,
    });
    for (const [token, p] of this.pending) {
      if (moduleOf(p.target) !== module_id) continue;
      this.pending.delete(token);
      p.reject(e);
    }
  }
}

/** Characters of a reply token (32 of the `[0-9a-z]` a token may use: 5 bits each). */
const TOKEN_CHARS = Uint8Array.from('0123456789abcdefghijklmnopqrstuv', (c) => c.charCodeAt(0));
/** Characters of a reply token: 65 random bits (nats-batch.ts allows 16). */
const TOKEN_LEN = 13;
/** Tokens made per draw from the system's random source. */
const TOKENS_PER_DRAW = 256;

/**
 * The reply tokens of a caller's requests: random, never a sequence. A request's reply subject
 * (`<inbox>.<token>`) tells whoever receives it this process's inbox, and a serve host receives
 * the requests of its own module; with tokens it could count on, it could answer the call of
 * another module in flight (naming that module as the reply's source) before the node serving it
 * did. A token is only known to the node that took its request. Made in bulk (one draw from the
 * system's random source and one string per {@link TOKENS_PER_DRAW} tokens), so a call costs a
 * slice of a string, as the sequence number's `toString(36)` did.
 */
class ReplyTokens {
  private pool = '';
  private at = 0;

  next(): string {
    if (this.at + TOKEN_LEN > this.pool.length) {
      const bytes = randomFillSync(Buffer.allocUnsafe(TOKEN_LEN * TOKENS_PER_DRAW));
      for (let i = 0; i < bytes.length; i++) bytes[i] = TOKEN_CHARS[bytes[i]! & 31]!;
      this.pool = bytes.toString('latin1');
      this.at = 0;
    }
    const t = this.pool.slice(this.at, this.at + TOKEN_LEN);
    this.at += TOKEN_LEN;
    return t;
  }
}

/**
 * Whether a reply from the wire names a principal that may answer a call to `target`: the
 * target's module (its module host answers), or the system principal of the node that signed
 * the reply (its transport's own errors: past the deadline, overloaded, no such module), in
 * either case without roles. A member of the cluster cannot make a reply speak for a person, an
 * agent or another module: nothing read from the wire carries a principal the firewall did
 * not see.
 */
export function answersFor(source: Principal, target: string, node: string): boolean {
  if (source.roles.length !== 0) return false;
  if (source.kind === 'module') return source.id === moduleOf(target);
  return source.kind === 'system' && source.id === node;
}

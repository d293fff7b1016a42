import type { Msg, NatsConnection, Subscription } from 'nats';

import type { Envelope } from '@finger/protocol';
import { FingerError, isFingerError, toErrorInfo } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { IdWindow } from './id-window.js';
import { inboxOf, parseBatch } from './nats-batch.js';
import { InflightCalls, NatsServerChannel } from './nats-channel.js';
import { readRequest } from './nats-envelope.js';
import { type DroppedMessage, frameRefused, type NatsTransportOptions } from './nats-options.js';
import { ReplyOutbox } from './nats-outbox.js';
import { type CheckedSubscription, subscribeChecked } from './nats-subscribe.js';
import { type ClusterSubjects, decodeJson, type OpenedFrame, type ServeScope, type WireAuth } from './nats-wire.js';
import type { TransportHandler, Unserve } from './transport.js';

/** Reports a dropped message to the log and to `onDropped` (both sides of the transport). */
export function reportDropped(
  logger: Logger,
  onDropped: ((info: DroppedMessage) => void) | undefined,
  reason: string,
  msg: Msg,
  node?: string,
  role?: string,
  claimed_node?: string,
): void {
  const info: DroppedMessage = { reason, subject: msg.subject };
  if (node !== undefined) info.node = node;
  if (role !== undefined) info.role = role;
  if (claimed_node !== undefined) info.claimed_node = claimed_node;
  logger.warn(info, 'NATS message dropped');
  onDropped?.(info);
}

/** Reports a frame {@link WireAuth.open} refused ({@link frameRefused}) to the log and to `onDropped`. */
export function reportRefused(
  logger: Logger,
  onDropped: ((info: DroppedMessage) => void) | undefined,
  info: DroppedMessage,
): void {
  logger.warn(info, 'NATS message dropped');
  onDropped?.(info);
}

/** What the serving side needs of its transport. */
export interface NatsServeOptions {
  o: NatsTransportOptions;
  subjects: ClusterSubjects;
  clock: Clock;
  logger: Logger;
  /** False while the connection is down (progress and lease messages are then not sent). */
  connected: () => boolean;
}

/**
 * The serving side of {@link NatsTransport}: subscribes to a module's call subject in its queue
 * group, checks every request of a received batch (signature, envelope, deadline, the caller's
 * role, the in-flight bound), runs it and answers through the {@link ReplyOutbox}; cancels from
 * callers reach the call being served.
 */
export class NatsServeSide {
  private readonly nc: NatsConnection;
  private readonly auth: WireAuth;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly o: NatsTransportOptions;
  private readonly subjects: ClusterSubjects;
  private readonly connected: () => boolean;
  private readonly served = new Map<string, Subscription>();
  private readonly inflight = new InflightCalls();
  private readonly maxInflight: number;
  /**
   * Ids of the requests taken lately: the same signed request published again is refused. Made
   * with the first served module (a node that serves nothing keeps no window).
   */
  private taken: IdWindow | undefined;
  private cancels: CheckedSubscription | undefined;
  /** Replies leave through here, batched per caller per turn. */
  readonly replies: ReplyOutbox;

  constructor(s: NatsServeOptions) {
    this.o = s.o;
    this.nc = s.o.connection;
    this.auth = s.o.auth;
    this.clock = s.clock;
    this.logger = s.logger;
    this.subjects = s.subjects;
    this.connected = s.connected;
    this.maxInflight = s.o.max_inflight ?? 4096;
    this.replies = new ReplyOutbox({
      connection: this.nc,
      auth: this.auth,
      clock: this.clock,
      logger: this.logger,
      idle: () => this.inflight.size === 0,
    });
  }

  /** Requests being served. */
  get serving(): number {
    return this.inflight.size;
  }

  async serve(target: string, handler: TransportHandler): Promise<Unserve> {
    if (this.served.has(target)) throw new FingerError('E_CONFLICT', `target "${target}" is already served`);
    this.taken ??= new IdWindow(this.o.replay_window ?? 32_768);
    const calls = subscribeChecked(this.nc, this.subjects.call(target), (msg) => this.onRequest(msg, handler), {
      queue: this.subjects.queue(target),
      logger: this.logger,
    });
    const sub = calls.sub;
    this.served.set(target, sub);
    this.cancels ??= subscribeChecked(this.nc, this.subjects.cancel, (msg) => this.onCancel(msg), {
      logger: this.logger,
    });
    await this.nc.flush(); // the subscription is known to the server before anyone announces the module
    // a NATS user without the permission: fail now rather than never receive a call or a cancel
    const refused = calls.refused() ?? this.cancels.refused();
    if (refused !== undefined) {
      if (this.served.get(target) === sub) this.served.delete(target);
      sub.unsubscribe();
      if (this.cancels.refused() !== undefined) this.cancels = undefined;
      throw refused;
    }
    return async () => {
      if (this.served.get(target) === sub) this.served.delete(target);
      if (!this.nc.isClosed()) await sub.drain().catch(() => undefined);
    };
  }

  serves(module_id: string): boolean {
    return this.served.has(module_id);
  }

  /**
   * Whether the NATS server lets this node serve `target` — subscribe to its call subject and to
   * the cancels — without joining the module's queue group yet: the call subject is tried with a
   * plain subscription, dropped at once (it only gets copies of the calls meanwhile). Throws the
   * refusal (E_FORBIDDEN naming the subject).
   */
  async check(target: string): Promise<void> {
    const probe = subscribeChecked(this.nc, this.subjects.call(target), () => undefined, { logger: this.logger });
    this.cancels ??= subscribeChecked(this.nc, this.subjects.cancel, (msg) => this.onCancel(msg), {
      logger: this.logger,
    });
    await this.nc.flush();
    probe.sub.unsubscribe();
    const refused = probe.refused() ?? this.cancels.refused();
    if (refused === undefined) return;
    if (this.cancels.refused() !== undefined) this.cancels = undefined;
    throw refused;
  }

  /** Stops taking requests: the subscriptions it held (for the caller to unsubscribe when it keeps the connection). */
  stop(): (Subscription | undefined)[] {
    const subs = [...this.served.values(), this.cancels?.sub];
    for (const s of this.served.values()) s.unsubscribe();
    this.served.clear();
    return subs;
  }

  /**
   * Answers every call still being served with `error` at once and cancels it at the module (a
   * node stopping past its drain time: its callers learn it now, not at their deadlines); the
   * module's own answer, should it come, is dropped. Returns how many.
   */
  abandon(error: { code: string; message: string }): number {
    const calls = this.inflight.all();
    for (const ch of calls) {
      const env = ch.request;
      ch.abandoned = true;
      this.inflight.remove(ch);
      ch.cancel(error.code);
      ch.finish();
      this.replies.error(ch.inbox, ch.token, env, {
        ...error,
        message: env === undefined ? error.message : `${error.message} ("${env.target}")`,
      });
    }
    return calls.length;
  }

  /** Sends a progress or lease message to a caller's reply subject. */
  publishControl(reply: string, kind: 'progress' | 'lease', data: unknown, forServe: ServeScope): void {
    if (!this.connected()) return;
    try {
      this.nc.publish(reply, this.auth.sealJson(reply, kind, JSON.stringify(data), forServe));
    } catch {
      // connection gone: the caller's deadline settles the call
    }
  }

  private onRequest(msg: Msg, handler: TransportHandler): void {
    const check = this.auth.open(msg.data, msg.subject);
    if (!check.ok || check.kind !== 'request') {
      if (check.ok) this.drop(`unexpected ${check.kind} on a call subject`, msg, check.node);
      else this.refused(frameRefused(check, msg.subject));
      return;
    }
    const inbox = msg.reply ? inboxOf(msg.reply) : undefined;
    const parts = inbox === undefined ? undefined : parseBatch(check.text());
    if (parts === undefined) {
      this.drop('invalid request batch', msg, check.node);
      return;
    }
    for (const part of parts) this.onEnvelope(msg, check, part.json, inbox!, part.token, handler);
  }

  /** One request of a received batch: each is checked, bounded and answered on its own. */
  private onEnvelope(
    msg: Msg,
    check: OpenedFrame,
    json: string,
    inbox: string,
    token: string,
    handler: TransportHandler,
  ): void {
    const env = readRequest(json);
    // a refusal to a serve host is signed for its module's hosts (a daemon verifies the cluster key)
    const toSender: ServeScope = check.role === 'serve' ? (check.scope ?? false) : false;
    if (isFingerError(env)) {
      this.drop('request payload nests too deep', msg, check.node);
      this.replies.error(inbox, token, undefined, env.toJSON(), toSender);
      return;
    }
    if (env === undefined) {
      this.drop('invalid request envelope', msg, check.node);
      this.replies.error(
        inbox,
        token,
        undefined,
        { code: 'E_INVALID_ENVELOPE', message: 'invalid request envelope' },
        toSender,
      );
      return;
    }
    if (check.role === 'serve' && this.auth.role === 'daemon') {
      // a serve process may only answer calls: it never originates one, whatever principal it names
      this.drop('request originated by a module serve process', msg, check.node, 'serve');
      const error = { code: 'E_FORBIDDEN', message: 'requests from module serve processes are refused' };
      this.replies.error(inbox, token, env, error, toSender);
      return;
    }
    if (!this.taken!.add(env.id)) {
      // a captured request published again: it ran (or runs) once already; the first caller gets
      // the one answer, nothing answers the copy
      this.drop('replayed request', msg, check.node, check.role);
      return;
    }
    if (env.deadline <= this.clock.now()) {
      this.replies.error(inbox, token, env, {
        code: 'E_TIMEOUT',
        message: `call to "${env.target}" arrived past its deadline`,
      });
      return;
    }
    if (this.inflight.size >= this.maxInflight) {
      this.replies.error(inbox, token, env, {
        code: 'E_OVERLOADED',
        message: `node ${this.auth.node} serves ${this.maxInflight} calls already`,
      });
      return;
    }
    const channel = new NatsServerChannel(this, inbox, token, false, env.id, env);
    this.inflight.add(channel);
    handler(env, channel).then(
      (out: Envelope) => {
        if (channel.abandoned) return;
        this.inflight.remove(channel);
        channel.finish();
        this.replies.send(inbox, token, out, false);
      },
      (e: unknown) => {
        if (channel.abandoned) return;
        this.inflight.remove(channel);
        channel.finish();
        this.replies.error(inbox, token, env, toErrorInfo(e)); // E_INTERNAL unless it is a finger error
      },
    );
  }

  private onCancel(msg: Msg): void {
    const check = this.auth.open(msg.data, msg.subject);
    if (!check.ok) {
      // a cancel for another module's calls, signed for its hosts: none of this host's
      if (!check.quiet) this.refused(frameRefused(check, msg.subject));
      return;
    }
    if (check.role === 'serve' && this.auth.role === 'daemon') {
      // a serve process never originates a call, so it has none to cancel: only someone else's
      this.drop('cancel sent by a module serve process', msg, check.node, 'serve');
      return;
    }
    const d = decodeJson(check.text()) as { id?: unknown; reason?: unknown } | undefined;
    if (typeof d?.id !== 'string') return;
    this.inflight.get(d.id)?.cancel(typeof d.reason === 'string' ? d.reason : 'cancelled');
  }

  private refused(info: DroppedMessage): void {
    reportRefused(this.logger, this.o.onDropped, info);
  }

  private drop(reason: string, msg: Msg, node?: string, role?: string, claimed_node?: string): void {
    reportDropped(this.logger, this.o.onDropped, reason, msg, node, role, claimed_node);
  }
}

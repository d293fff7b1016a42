import type { NatsConnection } from 'nats';

import type { Envelope, ErrorInfo } from '@finger/protocol';
import { rfc3339, ulid } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { MAX_BATCH, WireBatch } from './nats-batch.js';
import { encodeReply } from './nats-envelope.js';
import { flushNow } from './nats-flush.js';
import { type ServeScope, utf8Length, type WireAuth } from './nats-wire.js';

/** What the {@link ReplyOutbox} of a transport needs. */
export interface ReplyOutboxOptions {
  connection: NatsConnection;
  auth: WireAuth;
  clock: Clock;
  logger: Logger;
  /** True when nothing else is being served (a reply then leaves at once). */
  idle: () => boolean;
}

/**
 * The serving side's replies over NATS: those finished for one caller in one turn of the event
 * loop leave as one signed frame (nats-batch.ts) — one MAC, one publish, one socket write; a
 * reply with nothing else being served leaves at once. A result over max_payload is answered
 * with E_MODULE_ERROR instead.
 */
export class ReplyOutbox {
  /** Replies waiting for the end of this event-loop turn, by the caller's inbox. */
  private outbox = new Map<string, WireBatch>();
  private outboxScheduled = false;

  constructor(private readonly o: ReplyOutboxOptions) {}

  /**
   * Publishes a reply to the request of `token` from `inbox` (its reply subject is `inbox + token`);
   * `forServe`: also signed for a serve host of that module (only when refusing one). Replies to one caller
   * finished in one turn of the event loop leave as one frame.
   */
  send(inbox: string, token: string, out: Envelope, forServe: ServeScope): void {
    if (this.o.connection.isClosed()) return;
    const head = `${token} `; // the line is head + json (a token is ASCII)
    let json = encodeReply(out);
    let bytes = head.length + utf8Length(json);
    const frameLine = this.o.auth.lineLength('reply', forServe);
    const max = this.o.connection.info?.max_payload ?? 1024 * 1024;
    if (frameLine + bytes > max) {
      const error: ErrorInfo = {
        code: 'E_MODULE_ERROR',
        message: `result of ${frameLine + bytes} bytes exceeds the NATS max_payload (${max})`,
        details: { bytes: frameLine + bytes, max_payload: max },
      };
      json = encodeReply({ ...out, payload: null, error });
      bytes = head.length + utf8Length(json);
    }
    if (forServe !== false || (this.o.idle() && !this.outboxScheduled)) {
      // nothing else being served, nothing to batch with: no wait for the end of the turn (the
      // frame is written from head and json: no joined line string to build and flatten)
      const subject = inbox + token;
      this.sendReply(subject, this.o.auth.sealJson(subject, 'reply', json, forServe, bytes - head.length, head));
      flushNow(this.o.connection);
      return;
    }
    const line = head + json;
    let b = this.outbox.get(inbox);
    if (b !== undefined && (b.tokens.length >= MAX_BATCH || frameLine + b.bytesWith(bytes) > max)) {
      this.sendReplies(b);
      b = undefined;
    }
    if (b === undefined) {
      b = new WireBatch(inbox, false);
      this.outbox.set(inbox, b);
    }
    b.add(token, line, bytes);
    if (!this.outboxScheduled) {
      this.outboxScheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Sends every reply waiting for the end of the turn now (also before the connection drains). */
  readonly flush = (): void => {
    this.outboxScheduled = false;
    if (this.outbox.size === 0) return;
    const o = this.outbox;
    this.outbox = new Map();
    for (const b of o.values()) this.sendReplies(b);
  };

  /** One frame of replies to one caller, published to the reply subject of its first request. */
  private sendReplies(b: WireBatch): void {
    const subject = `${b.subject}${b.tokens[0]}`;
    this.sendReply(subject, this.o.auth.sealJson(subject, 'reply', b.body(), false, b.bytes));
  }

  private sendReply(reply: string, frame: Uint8Array): void {
    if (this.o.connection.isClosed()) return;
    try {
      this.o.connection.publish(reply, frame);
    } catch (e) {
      this.o.logger.warn({ error: (e as Error).message }, 'NATS reply not sent');
    }
  }

  /** Answers `req` (undefined when it could not be read) with `error`. */
  error(inbox: string, token: string, req: Envelope | undefined, error: ErrorInfo, forServe: ServeScope = false): void {
    const now = this.o.clock.now();
    const id = ulid(now);
    const out: Envelope = {
      id,
      kind: 'reply',
      request_id: req?.request_id ?? id,
      correlation_id: req?.correlation_id ?? id,
      session_id: req?.session_id ?? '',
      workflow_id: req?.workflow_id ?? '',
      source: { kind: 'system', id: this.o.auth.node, roles: [] },
      target: req?.target ?? 'unknown',
      blocking: true,
      timestamp: rfc3339(now),
      deadline: req?.deadline ?? now,
      execution_chain: req?.execution_chain ?? [],
      nesting_depth: req?.nesting_depth ?? 0,
      payload: null,
      error,
    };
    this.send(inbox, token, out, forServe);
  }
}

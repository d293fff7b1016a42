import type { Envelope } from '@finger/protocol';

import type { ReplySink } from './reply-sink.js';
import type { Canceller, RequestHooks } from './transport.js';

/*
 * The caller side's bookkeeping of one request over NATS (NatsTransport): the entry of an
 * outstanding request, the sink of a promise-returning request(), and its canceller.
 */

/**
 * An outstanding request. Settling it also drops what it holds (the request and the caller's
 * sink): the `pending` map lives in the old generation, and a backing store it outgrew still
 * points at the entries it held then; anything such a dead table reaches survives every
 * scavenge until the next full GC, so a settled entry must reach nothing.
 */
export class Pending {
  /** On the first request of a batch of several: the tokens of the batch (a "no responders" answers them all). */
  batch: string[] | undefined = undefined;
  /** The target, for error messages. */
  readonly target: string;
  readonly deadline: number;
  readonly id: string;

  constructor(
    /** Where the reply or the failure goes; its hooks get progress and lease extensions. */
    public sink: ReplySink | undefined,
    /** The request sent: a reply carries only what differs from it (nats-envelope.ts). */
    public request: Envelope | undefined,
  ) {
    this.target = request!.target;
    this.deadline = request!.deadline;
    this.id = request!.id;
  }

  resolve(reply: Envelope): void {
    const s = this.sink;
    this.clear();
    s?.onReply(reply);
  }

  reject(e: unknown): void {
    const s = this.sink;
    this.clear();
    s?.onFailed(e);
  }

  private clear(): void {
    this.sink = undefined;
    this.request = undefined;
    this.batch = undefined;
  }
}

/** The sink of request(): settles its promise, passes progress, lease extensions and the canceller to the caller's hooks. */
export class PromiseSink implements ReplySink {
  constructor(
    readonly onReply: (reply: Envelope) => void,
    readonly onFailed: (e: unknown) => void,
    private readonly hooks: RequestHooks | undefined,
  ) {}

  set canceller(c: Canceller | undefined) {
    if (this.hooks !== undefined) this.hooks.canceller = c;
  }

  get canceller(): Canceller | undefined {
    return this.hooks?.canceller;
  }

  onProgress(message: string, fraction?: number): void {
    this.hooks?.onProgress?.(message, fraction);
  }

  onLeaseExtend(ttl_ms: number): void {
    this.hooks?.onLeaseExtend?.(ttl_ms);
  }
}

/** Cancels one outstanding request (what `hooks.canceller` holds). */
export class RequestCanceller {
  constructor(
    private readonly t: { cancelRequest(id: string, module_id: string, reason: string): void },
    private readonly id: string,
    /** The called module (its serve hosts verify the cancel with its key). */
    private readonly module_id: string,
  ) {}

  cancel(reason: string): void {
    this.t.cancelRequest(this.id, this.module_id, reason);
  }
}

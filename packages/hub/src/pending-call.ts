import type { Envelope, ErrorInfo } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import type { LeaseHolder, LeaseTable } from './lease-table.js';
import type { ModuleEntry, Waiter } from './registry/module-entry.js';
import { invalidResultError, type SchemaCheck } from './tools/schema-validator.js';
import type { DirectSink } from './transport/reply-sink.js';
import type { Canceller, Transport } from './transport/transport.js';

/** Callbacks from a pending call into the hub (kept narrow so this file stays about one call). */
export interface PendingCallHost {
  readonly leases: LeaseTable;
  readonly transport: Transport;
  now(): number;
  onExpired(call: PendingCall, reason: 'lease' | 'deadline'): void;
  onReleased(entry: ModuleEntry): void;
  /** Called once per call that was counted in flight, when it ends (any way). */
  onEnded(failed: boolean): void;
  /** A call with a {@link PendingCall.record}: its outcome, told before its caller's promise settles (`done`: the call's promise). */
  onRecorded(record: number, done: Promise<unknown>, ok: boolean, value: unknown): void;
}

/**
 * One call in flight on the caller's side: it is the lease holder, the transport hooks (the reply
 * sink of a forwarding runtime) and the concurrency waiter at once, so a call costs one object
 * and one promise.
 */
export class PendingCall implements LeaseHolder, DirectSink, Waiter {
  resolve!: (v: unknown) => void;
  reject!: (e: unknown) => void;
  readonly promise: Promise<unknown>;
  slot = -1;
  gen = 0;
  done = false;
  started = false;
  canceller?: Canceller;
  /** Set by the kill switch: the call then ends for its caller with this error (a cancelled call's late result is not a result). */
  haltedWith: unknown = undefined;
  /** The slot of the hub's request record of a tracked call (-1: none): its outcome is written without a promise chain of its own. */
  record = -1;

  constructor(
    private readonly host: PendingCallHost,
    readonly envelope: Envelope,
    readonly entry: ModuleEntry,
    readonly ttl: number,
    /** The tool's compiled output_schema: a result that fails it fails the call (E_MODULE_ERROR). */
    private readonly checkResult?: SchemaCheck,
  ) {
    this.promise = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  get waiting(): boolean {
    return !this.done && !this.started;
  }

  /** Sends the envelope: counts it in flight, arms the lease, hands it to the transport. */
  start(now: number = this.host.now()): void {
    if (this.done) return;
    this.started = true;
    const { leases } = this.host;
    const entry = this.entry;
    entry.inflight++;
    const env = this.envelope;
    const expires = Math.min(now + this.ttl, env.deadline);
    if (this.slot >= 0) {
      leases.extend(this.slot, expires - now);
    } else {
      this.slot = leases.acquire(this, expires, env.deadline);
      this.gen = leases.gen(this.slot);
    }
    if (env.lease !== undefined) {
      env.lease.expires_at = expires;
    }
    const forwarder = this.entry.forwarder;
    // a module hosted elsewhere: the envelope goes to its runtime, the reply comes back to onReply()
    if (forwarder !== undefined) forwarder.forward(env, this);
    else if (this.host.transport.deliver !== undefined) this.host.transport.deliver(env, this);
    else
      this.host.transport.request(env, this).then(
        (reply) => this.onReply(reply),
        (e: unknown) => this.finish(undefined, e),
      );
  }

  /** Parks the call in its module's queue, holding a lease slot that expires at the deadline. */
  enqueue(): void {
    this.slot = this.host.leases.acquire(this, this.envelope.deadline, this.envelope.deadline);
    this.gen = this.host.leases.gen(this.slot);
    this.entry.queue.push(this);
  }

  /** The reply envelope (it may carry `error`). */
  onReply(reply: Envelope): void {
    this.onAnswer(reply.payload, reply.error);
  }

  /** The module's answer without its envelope (a module served in this process): a reply's payload and error. */
  onAnswer(payload: unknown, error: ErrorInfo | undefined): void {
    if (error !== undefined) return this.finish(undefined, FingerError.fromInfo(error));
    const issues = this.checkResult?.(payload);
    if (issues !== undefined) this.finish(undefined, invalidResultError(this.envelope.target, issues));
    else this.finish(payload, undefined);
  }

  /** The request failed on its way (a forwarding runtime's failures: the transport's codes). */
  onFailed(e: unknown): void {
    this.finish(undefined, e);
  }

  /** The caller's progress listener, if it asked for progress. */
  progressListener?: (message: string, fraction?: number) => void;

  onProgress(message: string, fraction?: number): void {
    if (this.done || this.progressListener === undefined) return;
    try {
      this.progressListener(message, fraction);
    } catch {
      // a caller's listener must not break the call
    }
  }

  onLeaseExtend(ttl_ms: number): void {
    if (this.done || !this.host.leases.holds(this.slot, this.gen)) return;
    const at = this.host.leases.extend(this.slot, ttl_ms);
    if (this.envelope.lease !== undefined) this.envelope.lease.expires_at = at;
  }

  onLeaseExpired(reason: 'lease' | 'deadline'): void {
    if (this.done) return;
    this.done = true;
    this.slot = -1;
    this.leaveModule();
    this.host.onEnded(true);
    this.host.onExpired(this, reason);
  }

  /** Ends the call for its caller with `error` (the hub's expiry answer); its request record first. */
  fail(error: unknown): void {
    if (this.record >= 0) this.host.onRecorded(this.record, this.promise, false, error);
    this.reject(error);
  }

  /** Fails the call at once (hub shutdown, halt): cancels it at the module with `reason` and rejects the caller. */
  abort(error: unknown, reason = 'shutdown'): void {
    if (this.done) return;
    this.done = true;
    if (this.slot >= 0 && this.host.leases.holds(this.slot, this.gen)) this.host.leases.release(this.slot);
    this.slot = -1;
    this.canceller?.cancel(reason);
    this.leaveModule();
    this.host.onEnded(true);
    this.fail(error);
  }

  /** Frees the module concurrency slot taken by start() (lets a queued call go). */
  private leaveModule(): void {
    if (!this.started) return;
    this.entry.inflight--;
    this.host.onReleased(this.entry);
  }

  private finish(result: unknown, error: unknown): void {
    if (this.done) return;
    this.done = true;
    if (this.slot >= 0 && this.host.leases.holds(this.slot, this.gen)) this.host.leases.release(this.slot);
    this.slot = -1;
    this.leaveModule();
    this.host.onEnded(error !== undefined);
    if (this.haltedWith !== undefined) this.fail(this.haltedWith);
    else if (error !== undefined) this.fail(error);
    else {
      if (this.record >= 0) this.host.onRecorded(this.record, this.promise, true, result);
      this.resolve(result);
    }
  }
}

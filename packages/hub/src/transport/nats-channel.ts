import type { Envelope } from '@finger/protocol';

import type { ServeScope } from './nats-wire.js';
import type { CancelReceiver, ServerChannel } from './transport.js';

/** What a channel needs of the transport: sending progress and lease messages to the caller. */
export interface ControlSender {
  publishControl(reply: string, kind: 'progress' | 'lease', data: unknown, forServe: ServeScope): void;
}

/** The server side of one request received over NATS. */
export class NatsServerChannel implements ServerChannel {
  cancelled: string | undefined;
  /** Answered by the node itself (it stopped past its drain): the module's own answer is dropped. */
  abandoned = false;
  private receiver: CancelReceiver | undefined;
  private done = false;

  /** Where the transport keeps this channel while the call runs ({@link InflightCalls}). */
  slot = -1;

  constructor(
    private readonly t: ControlSender,
    /** The caller's inbox (with its trailing dot) and the request's token: the reply subject is both. */
    readonly inbox: string,
    readonly token: string,
    private readonly forServe: ServeScope,
    /** The request's envelope id (what a cancel names). */
    readonly id = '',
    /** The request (for an answer the node gives itself); let go by {@link finish}. */
    public request: Envelope | undefined = undefined,
  ) {}

  /** The request's reply subject (built only for progress and lease messages). */
  get reply(): string {
    return this.inbox + this.token;
  }

  extendLease(ttl_ms: number): void {
    this.t.publishControl(this.reply, 'lease', { ttl_ms }, this.forServe);
  }

  progress(message: string, fraction?: number): void {
    const data = fraction === undefined ? { message } : { message, fraction };
    this.t.publishControl(this.reply, 'progress', data, this.forServe);
  }

  onCancel(receiver: CancelReceiver): void {
    if (this.done) return;
    if (this.cancelled !== undefined) receiver.onCancelled(this.cancelled);
    else this.receiver = receiver;
  }

  /**
   * The call is answered: later cancels are ignored and the receiver (the module's call context,
   * and through it the request) is let go. The transport's `inflight` map lives in the old
   * generation and a backing store it outgrew still points at this channel: without this, every
   * call's objects would survive the scavenges until the next full GC.
   */
  finish(): void {
    this.done = true;
    this.receiver = undefined;
    this.request = undefined;
  }

  cancel(reason: string): void {
    if (this.cancelled !== undefined || this.done) return;
    this.cancelled = reason;
    const r = this.receiver;
    this.receiver = undefined;
    r?.onCancelled(reason);
  }
}

/**
 * The calls a transport is serving, findable by request id for cancels. Not a `Map`: a Map of
 * calls that come and go rehashes every few dozen calls, and each table it leaves behind in the
 * old generation still points at the keys and channels it held, which the scavenger then treats
 * as live until the next full GC (≈ 0.9 MB promoted per scavenge at 100 calls in flight). Here
 * a call takes a slot of an array that only grows to the most calls ever served at once, and
 * gives it back cleared. Finding a call by id scans the slots in use — cancels are rare, and
 * the slots are bounded by the transport's `max_inflight`.
 */
export class InflightCalls {
  private readonly slots: (NatsServerChannel | undefined)[] = [];
  private readonly free: number[] = [];
  /** Calls being served. */
  size = 0;

  add(channel: NatsServerChannel): void {
    const i = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    if (i === this.slots.length) this.slots.push(channel);
    else this.slots[i] = channel;
    channel.slot = i;
    this.size++;
  }

  /** Lets go of a call added before (once; a second call is a no-op). */
  remove(channel: NatsServerChannel): void {
    const i = channel.slot;
    if (i < 0 || this.slots[i] !== channel) return;
    this.slots[i] = undefined;
    channel.slot = -1;
    this.free.push(i);
    this.size--;
  }

  /** Every call being served (a copy). */
  all(): NatsServerChannel[] {
    return this.slots.filter((c): c is NatsServerChannel => c !== undefined);
  }

  /** The call being served for request `id`, if any. */
  get(id: string): NatsServerChannel | undefined {
    if (this.size === 0) return undefined;
    for (const c of this.slots) if (c !== undefined && c.id === id) return c;
    return undefined;
  }
}

import type { CancelReceiver, ServerChannel } from './transport.js';

/** What a channel needs of the transport: sending progress and lease messages to the caller. */
export interface ControlSender {
  publishControl(reply: string, kind: 'progress' | 'lease', data: unknown, forServe: boolean): void;
}

/** The server side of one request received over NATS. */
export class NatsServerChannel implements ServerChannel {
  cancelled: string | undefined;
  private receiver: CancelReceiver | undefined;
  private done = false;

  constructor(
    private readonly t: ControlSender,
    private readonly reply: string,
    private readonly forServe: boolean,
  ) {}

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
  }

  cancel(reason: string): void {
    if (this.cancelled !== undefined || this.done) return;
    this.cancelled = reason;
    const r = this.receiver;
    this.receiver = undefined;
    r?.onCancelled(reason);
  }
}

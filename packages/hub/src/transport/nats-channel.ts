import type { CancelReceiver, ServerChannel } from './transport.js';

/** What a channel needs of the transport: sending progress and lease messages to the caller. */
export interface ControlSender {
  publishControl(reply: string, kind: 'progress' | 'lease', data: unknown, forServe: boolean): void;
}

/** The server side of one request received over NATS. */
export class NatsServerChannel implements ServerChannel {
  cancelled: string | undefined;
  private receiver: CancelReceiver | undefined;

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
    if (this.cancelled !== undefined) receiver.onCancelled(this.cancelled);
    else this.receiver = receiver;
  }

  cancel(reason: string): void {
    if (this.cancelled !== undefined) return;
    this.cancelled = reason;
    const r = this.receiver;
    this.receiver = undefined;
    r?.onCancelled(reason);
  }
}

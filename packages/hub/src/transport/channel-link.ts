import type { Canceller, CancelReceiver, RequestHooks, ServerChannel } from './transport.js';

/**
 * One request passed on from a serving channel to another transport: the far side's progress
 * and lease extensions go to the channel, a cancel arriving on the channel goes to the request
 * (one object instead of a hooks object, two closures and a receiver per call). Register it with
 * `channel.onCancel(link)` after the request was sent, once the transport filled in `canceller`.
 */
export class ChannelLink implements RequestHooks, CancelReceiver {
  canceller?: Canceller;

  constructor(private readonly channel: ServerChannel) {}

  onProgress(message: string, fraction?: number): void {
    this.channel.progress(message, fraction);
  }

  onLeaseExtend(ttl_ms: number): void {
    this.channel.extendLease(ttl_ms);
  }

  onCancelled(reason: string): void {
    this.canceller?.cancel(reason);
  }
}

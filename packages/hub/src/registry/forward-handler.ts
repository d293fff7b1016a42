import type { Envelope } from '@finger/protocol';

import type { ModuleRuntime } from '../runtime/runtime.js';
import { ChannelLink } from '../transport/channel-link.js';
import type { ReplySink } from '../transport/reply-sink.js';
import type { ServerChannel, TransportHandler } from '../transport/transport.js';

/**
 * A runtime whose module is hosted elsewhere (`{type: "nats"}`): it takes the hub's request
 * envelope as it is and answers with the remote module's reply envelope, instead of running
 * tool calls. The hub's calls to such a module go to forward() directly (PendingCall), not
 * through the hub's transport.
 */
export interface ForwardingRuntime extends ModuleRuntime {
  /**
   * Sends `request` on; the reply envelope (which may carry `error`) or the failure goes to
   * `sink`, progress and lease extensions too, and `sink.canceller` is set while it runs. Never
   * throws: what fails at once reaches `sink.onFailed` from a later microtask.
   */
  forward(request: Envelope, sink: ReplySink): void;
}

/** True for a runtime that forwards whole envelopes ({@link ForwardingRuntime}). */
export function isForwarding(runtime: ModuleRuntime): runtime is ForwardingRuntime {
  return typeof (runtime as Partial<ForwardingRuntime>).forward === 'function';
}

/** One forwarded request of the handler: a {@link ChannelLink} that also settles the handler's promise. */
class ForwardedCall extends ChannelLink implements ReplySink {
  constructor(
    channel: ServerChannel,
    readonly onReply: (reply: Envelope) => void,
    readonly onFailed: (e: unknown) => void,
  ) {
    super(channel);
  }
}

/**
 * The serving side of a module hosted elsewhere, for requests that reach it through the hub's
 * transport: the request envelope goes to the runtime as it is and the remote reply envelope
 * comes back as the reply. No call context, tool call or reply envelope is made (the module host
 * would make each once more for a module that only passes the call on); progress, lease
 * extensions and cancels pass through. Rejects with the runtime's failures (the transport's codes).
 */
export function createForwardHandler(runtime: ForwardingRuntime): TransportHandler {
  return (req: Envelope, channel: ServerChannel): Promise<Envelope> =>
    new Promise<Envelope>((resolve, reject) => {
      const call = new ForwardedCall(channel, resolve, reject);
      runtime.forward(req, call);
      channel.onCancel(call);
    });
}

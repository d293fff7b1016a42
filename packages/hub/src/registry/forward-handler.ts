import type { Envelope } from '@finger/protocol';
import { FingerError, toErrorInfo } from '@finger/protocol';

import type { ModuleRuntime } from '../runtime/runtime.js';
import { ChannelLink } from '../transport/channel-link.js';
import type { RequestHooks, ServerChannel, TransportHandler } from '../transport/transport.js';

/**
 * A runtime whose module is hosted elsewhere (`{type: "nats"}`): it takes the hub's request
 * envelope as it is and resolves with the remote module's reply envelope, instead of running
 * tool calls.
 */
export interface ForwardingRuntime extends ModuleRuntime {
  /**
   * Sends `request` on and resolves with the reply envelope (which may carry `error`); progress
   * and lease extensions go to `hooks`, and `hooks.canceller` is set while it runs. Rejects with
   * the transport's errors.
   */
  forward(request: Envelope, hooks: RequestHooks): Promise<Envelope>;
}

/** True for a runtime that forwards whole envelopes ({@link ForwardingRuntime}). */
export function isForwarding(runtime: ModuleRuntime): runtime is ForwardingRuntime {
  return typeof (runtime as Partial<ForwardingRuntime>).forward === 'function';
}

/**
 * The serving side of a module hosted elsewhere: the hub's request envelope goes to the runtime
 * as it is and the remote reply envelope comes back as the hub's reply. No call context, tool
 * call or reply envelope is made here (the module host would make each once more for a module
 * that only passes the call on); progress, lease extensions and cancels pass through a
 * {@link ChannelLink}. What the runtime throws at once rejects with its FingerError (anything
 * else as E_INTERNAL, as the module host answers it).
 */
export function createForwardHandler(runtime: ForwardingRuntime): TransportHandler {
  return (req: Envelope, channel: ServerChannel): Promise<Envelope> => {
    const link = new ChannelLink(channel);
    let sent: Promise<Envelope>;
    try {
      sent = runtime.forward(req, link);
    } catch (e) {
      return Promise.reject(FingerError.fromInfo(toErrorInfo(e)));
    }
    channel.onCancel(link);
    return sent;
  };
}

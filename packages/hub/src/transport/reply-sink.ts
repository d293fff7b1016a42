import type { Envelope } from '@finger/protocol';

import type { RequestHooks } from './transport.js';

/**
 * The caller's side of one request that settles by callback instead of by a promise: the hub's
 * PendingCall takes a remote module's reply this way, one promise hop (≈ 1–3 µs when the process
 * wakes up cold) fewer between the reply frame and the caller's promise. Besides the hooks
 * (progress, lease extensions, the canceller the transport fills in), exactly one of `onReply`
 * and `onFailed` is called, once, never from inside the call that sent the request.
 */
export interface ReplySink extends RequestHooks {
  /** The reply envelope arrived (it may carry `error`). */
  onReply(reply: Envelope): void;
  /** The request failed with the transport's error (E_NO_TARGET, E_TIMEOUT, …). */
  onFailed(e: unknown): void;
}

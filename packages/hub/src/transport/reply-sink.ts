import type { Envelope, ErrorInfo } from '@finger/protocol';

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

/**
 * A {@link ReplySink} that also takes a module's answer with no reply envelope around it: the
 * in-process transport's `deliver()` to a module served in this process (no reply envelope, no
 * id or timestamp for it, one promise hop fewer). Same rule: exactly one of `onAnswer`,
 * `onReply` and `onFailed` is called, once, never from inside the call that sent the request.
 */
export interface DirectSink extends ReplySink {
  /** The module's answer: its result (`null` for none), or with `error` what the reply envelope would carry. */
  onAnswer(payload: unknown, error: ErrorInfo | undefined): void;
}

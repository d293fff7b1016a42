/**
 * One abort signal per tool call that fires at the tool's own timeout, the caller's deadline or
 * the hub's cancellation, whichever comes first; and the mapping of what node throws then to
 * finger codes.
 */
import { FingerError, isFingerError } from '@finger/protocol';

/** The part of the hub's ToolCallContext these tools read (absent when called directly). */
export interface CallLimits {
  signal?: AbortSignal;
  deadline?: number;
}

/** The running deadline of one call; `dispose()` clears its timer. */
export interface CallDeadline {
  readonly signal: AbortSignal;
  /** The timeout in ms that applies (the smaller of the tool's and what is left of the caller's). */
  readonly timeout_ms: number;
  /** True when the timer fired (as opposed to a cancellation by the caller). */
  timedOut(): boolean;
  dispose(): void;
}

/** Starts the deadline: `timeout_ms` from now, capped by `limits.deadline`, joined with `limits.signal`. */
export function startDeadline(timeout_ms: number, limits: CallLimits | undefined): CallDeadline {
  const left = limits?.deadline === undefined ? timeout_ms : Math.max(0, limits.deadline - Date.now());
  const effective = Math.min(timeout_ms, left);
  const ctrl = new AbortController();
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    ctrl.abort(new FingerError('E_TIMEOUT', `no complete answer within ${effective} ms`));
  }, effective);
  const outer = limits?.signal;
  const onOuter = () => ctrl.abort(outer?.reason);
  if (outer !== undefined) {
    if (outer.aborted) onOuter();
    else outer.addEventListener('abort', onOuter, { once: true });
  }
  return {
    signal: ctrl.signal,
    timeout_ms: effective,
    timedOut: () => fired,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/**
 * Maps a failure during a request: a FingerError passes; the deadline's timer → E_TIMEOUT; a
 * cancellation by the caller → its reason when that is a FingerError, else E_TIMEOUT ("cancelled");
 * anything else (refused connection, DNS failure, TLS error, reset) → E_MODULE_ERROR with the
 * system error code in `details.errno`.
 */
export function requestFailure(e: unknown, what: string, url: string, d: CallDeadline): FingerError {
  if (d.timedOut()) {
    return new FingerError('E_TIMEOUT', `${what} ${url} did not complete within ${d.timeout_ms} ms`, {
      url,
      timeout_ms: d.timeout_ms,
    });
  }
  if (d.signal.aborted) {
    const reason: unknown = d.signal.reason;
    if (isFingerError(reason)) return reason;
    return new FingerError('E_TIMEOUT', `${what} ${url} was cancelled`, { url });
  }
  if (isFingerError(e)) return e;
  const errno = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  const details: Record<string, unknown> = { url };
  if (typeof errno === 'string') details.errno = errno;
  return new FingerError('E_MODULE_ERROR', `${what} ${url} failed: ${message}`, details);
}

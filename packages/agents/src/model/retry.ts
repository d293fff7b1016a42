import { FingerError, isErrorCode } from '@finger/protocol';

import { providerMessage } from './model-reply.js';

/**
 * Transport retries shared by every HTTP model adapter: exponential backoff with full jitter on
 * connection errors, 408, 409, 429 and ≥ 500, honouring `retry-after-ms` (precedence) and
 * `retry-after` (seconds or an HTTP date). Guardrail re-asks are NOT made here (NOTES.md: keep
 * them apart so a user never pays twice).
 */

/**
 * A failed HTTP attempt: the status, the response headers and a short text of the body. The
 * message carries the provider's own error message (at most 300 characters, control characters
 * stripped).
 */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly body: string,
  ) {
    const said = providerMessage(body);
    super(`model endpoint answered HTTP ${status}${said !== undefined ? `: ${said}` : ''}`);
    this.name = 'HttpStatusError';
  }
}

/** A failure of the connection itself (refused, reset, cut stream, unreadable reply). */
export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/**
 * The endpoint answered, but with an error instead of a reply (an `error` object in a 200 body or
 * in a stream, an `event: error`) or with a reply missing its parts. Retried like a transport
 * failure; when retries are spent it is reported with the provider's message — never as
 * "unreachable". The message is already safe to show (see `providerMessage`).
 */
export class ProviderReplyError extends TransportError {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderReplyError';
  }
}

/** Sleeps `ms`, rejecting with the signal's reason when it aborts first. */
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** Retries after the first attempt (0 = one attempt only). */
  max_retries: number;
  /** A retry-after above this fails at once with E_LLM_UNAVAILABLE instead of waiting. */
  max_retry_wait_ms: number;
  /** First backoff ceiling (default 500 ms); doubles per retry. */
  base_delay_ms?: number;
  /** Backoff ceiling (default 8000 ms, and never above max_retry_wait_ms). */
  max_delay_ms?: number;
  sleep?: SleepFn;
  /** In [0, 1); default Math.random. */
  random?: () => number;
  /** Wall clock in ms, for HTTP-date retry-after (default Date.now). */
  now?: () => number;
  /** Told before each wait (for logs/metrics). */
  onRetry?: (info: { attempt: number; wait_ms: number; status?: number; error: Error }) => void;
}

/** Statuses worth another attempt (the official SDKs' list). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a response asks for, in ms: `retry-after-ms`, else `retry-after` as seconds or an
 * HTTP date (a date in the past → 0). Undefined when neither header is present or parseable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  }
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? Math.ceil(secs * 1000) : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Full jitter: uniform in [0, min(cap, base · 2^(retry-1))]. `retry` counts from 1. */
export function backoffDelay(retry: number, base: number, cap: number, random: () => number): number {
  const ceiling = Math.min(cap, base * 2 ** Math.min(retry - 1, 30));
  return Math.floor(random() * ceiling);
}

/** A real, abortable sleep. */
export const realSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** True when an abort reason names the kill switch: `'E_HALTED'`, `'halt'`, `'halted'` or an error with code E_HALTED. */
export function isHaltReason(reason: unknown): boolean {
  if (typeof reason === 'string') return /^(e_halted|halt|halted)$/i.test(reason);
  if (reason !== null && typeof reason === 'object' && 'code' in reason) return reason.code === 'E_HALTED';
  return false;
}

/**
 * The FingerError for an aborted call: E_HALTED when the reason says halt (see
 * {@link isHaltReason}); a FingerError reason as is; a reason that is an error code string (the
 * hub cancels with `E_TIMEOUT`, `E_LEASE_EXPIRED`, …) as that code; anything else E_TIMEOUT — a
 * deadline, the per-call `timeout_ms`, or a caller that stopped waiting.
 */
export function abortError(reason: unknown, what = 'model call'): FingerError {
  if (isHaltReason(reason)) return new FingerError('E_HALTED', `${what} stopped by the kill switch`);
  if (reason instanceof FingerError) return reason;
  if (isErrorCode(reason)) return new FingerError(reason, `${what} aborted: ${reason}`, { reason });
  const detail = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
  return new FingerError('E_TIMEOUT', `${what} aborted: ${detail}`, { reason: detail });
}

function unavailable(message: string, details: Record<string, unknown>, cause?: unknown): FingerError {
  return new FingerError('E_LLM_UNAVAILABLE', message, details, { cause });
}

/** The FingerError for a failure that is not retried (or retries spent). */
export function failureError(err: unknown, attempts: number): FingerError {
  if (err instanceof FingerError) return err;
  if (err instanceof HttpStatusError) {
    const said = providerMessage(err.body);
    return unavailable(
      `model endpoint answered HTTP ${err.status} after ${attempts} attempt(s)${said !== undefined ? `: ${said}` : ''}`,
      {
        status: err.status,
        attempts,
        body: err.body.slice(0, 500),
      },
      err,
    );
  }
  const msg = err instanceof Error ? err.message : String(err);
  if (err instanceof ProviderReplyError) {
    return unavailable(
      `model endpoint answered with an error after ${attempts} attempt(s): ${msg}`,
      { attempts, error: msg },
      err,
    );
  }
  // the message says what failed (`cannot reach …`, `stream ended …`, `reply is not JSON …`)
  return unavailable(`model call failed after ${attempts} attempt(s): ${msg}`, { attempts, error: msg }, err);
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or `max_retries` retries are spent
 * (then E_LLM_UNAVAILABLE with `details.status`/`attempts`). A retry-after above
 * `max_retry_wait_ms` fails at once (E_LLM_UNAVAILABLE, `details.retry_after_ms`); otherwise the
 * wait is exactly the retry-after (never less), or the jittered backoff. When `signal` aborts,
 * rejects with {@link abortError} of its reason. Returns the value and how many attempts it took.
 */
export async function withRetry<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryOptions,
  signal?: AbortSignal,
): Promise<{ value: T; attempts: number }> {
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const base = options.base_delay_ms ?? 500;
  const cap = Math.min(options.max_delay_ms ?? 8000, options.max_retry_wait_ms);
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw abortError(signal.reason);
    try {
      return { value: await attempt(n), attempts: n };
    } catch (err) {
      if (signal?.aborted) throw abortError(signal.reason);
      const status = err instanceof HttpStatusError ? err.status : undefined;
      const retryable = err instanceof TransportError || (status !== undefined && isRetryableStatus(status));
      if (!retryable || n > options.max_retries) throw failureError(err, n);
      const retryAfter = err instanceof HttpStatusError ? parseRetryAfter(err.headers, now()) : undefined;
      if (retryAfter !== undefined && retryAfter > options.max_retry_wait_ms) {
        throw unavailable(
          `model endpoint asked to retry after ${retryAfter} ms, above max_retry_wait_ms ${options.max_retry_wait_ms}`,
          { status, retry_after_ms: retryAfter, max_retry_wait_ms: options.max_retry_wait_ms, attempts: n },
          err,
        );
      }
      const wait = retryAfter ?? backoffDelay(n, base, cap, random);
      options.onRetry?.({
        attempt: n,
        wait_ms: wait,
        ...(status !== undefined ? { status } : {}),
        error: err as Error,
      });
      try {
        await sleep(wait, signal);
      } catch (e) {
        throw abortError(signal?.aborted ? signal.reason : e);
      }
    }
  }
}

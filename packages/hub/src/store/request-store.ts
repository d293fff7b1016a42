import type { ErrorInfo } from '@finger/protocol';

import type { RequestRecord } from '../hub-types.js';

/** How a request ended. */
export type RequestOutcome = { ok: true; result: unknown } | { ok: false; error: ErrorInfo };

/** Options of {@link RequestStore.begin}. */
export interface BeginOptions {
  /** The id was made for this one call (never a caller's): it cannot be a duplicate. */
  fresh?: boolean;
}

/**
 * Where request records live: results of non-blocking dispatches (`GET /v1/requests/:id`) and the
 * idempotency entries of caller-supplied request ids. Memory here; Redis in distributed mode
 * (same interface, so one execution per request id holds across daemons).
 */
export interface RequestStore {
  /**
   * Creates the record if absent; returns the existing one otherwise (atomic create-if-absent).
   * `fresh`: the id was made for this call and cannot exist elsewhere — a store whose backend is
   * unreachable keeps the record itself (written with the outcome once the backend returns)
   * instead of rejecting with E_STORE_UNAVAILABLE.
   */
  begin(record: RequestRecord, options?: BeginOptions): Promise<RequestRecord | undefined>;
  /** Records the outcome of a running request, kept for `keep_ms` from now. */
  finish(request_id: string, outcome: RequestOutcome, finished_at: string, keep_ms: number): Promise<void>;
  get(request_id: string): Promise<RequestRecord | undefined>;
  /** Forgets a record (a request refused before it reached its module may be retried). */
  forget(request_id: string): Promise<void>;
  /**
   * Distributed stores: waits for a record `begin` found running on another daemon, up to
   * `deadline` (E_TIMEOUT past it), and returns it finished; undefined when it vanished and this
   * caller re-created it (it must run the call). Stores without it answer "running" at once.
   */
  awaitOutcome?(record: RequestRecord, deadline: number): Promise<RequestRecord | undefined>;
  /** Synchronous read where the implementation allows (memory); undefined otherwise. */
  peek?(request_id: string): RequestRecord | undefined;
  close(): Promise<void>;
}

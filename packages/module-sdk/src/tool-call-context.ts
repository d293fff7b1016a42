import type { Principal } from '@finger/protocol';

/** What a module's tool code sees of its call. */
export interface ToolCallContext {
  /** The envelope id of this call (unique per execution). */
  readonly call_id: string;
  readonly request_id: string;
  readonly correlation_id: string;
  readonly session_id: string;
  readonly workflow_id: string;
  readonly lease_id: string;
  /** Absolute epoch ms after which the result is no longer awaited. */
  readonly deadline: number;
  readonly source: Principal;
  /** Targets already on the call path, this call's target not included (agents extend it for their own calls). */
  readonly execution_chain?: readonly string[];
  /** Aborted when the call is cancelled (lease expiry, deadline, halt). Created lazily. */
  readonly signal: AbortSignal;
  /** Heartbeat: extend the lease to `ttl_ms` from now. */
  extendLease(ttl_ms: number): void;
  /** Report progress to the caller. */
  progress(message: string, fraction?: number): void;
  /**
   * A nested call through the hub, inheriting the correlation fields and execution chain
   * (so the depth and cycle guards see it). Resolves with the payload; rejects with FingerError.
   */
  call(target: string, payload: unknown, options?: { timeout_ms?: number }): Promise<unknown>;
}

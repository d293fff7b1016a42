import type { Envelope, ErrorInfo, ModuleManifest, Principal, ToolSpec } from '@finger/protocol';

/** What a caller gives the hub to dispatch one message. */
export interface DispatchParams {
  /** Tool id `<module>.<tool>`, agent id, or a bare module id with exactly one tool. */
  target: string;
  payload: unknown;
  /** The authenticated principal. Set by the entry point from the token, never from input. */
  source: Principal;
  /** Caller-supplied idempotency key; when given, duplicates join or get the stored result. */
  request_id?: string;
  /**
   * `request_id` was made by the entry point for this one call (the caller sent none), so it can
   * never be a duplicate: a blocking call then runs even while a shared request store is
   * unreachable (its record is kept by this hub and written when the store returns). Never set it
   * for an id that came from a caller.
   */
  generated_id?: boolean;
  correlation_id?: string;
  session_id?: string;
  workflow_id?: string;
  /** Relative timeout; combined with `deadline` (the earlier wins). Default: hub `default_timeout_ms`. */
  timeout_ms?: number;
  /** Absolute epoch ms. */
  deadline?: number;
  /** Targets already on the call path (set by nested calls). */
  execution_chain?: string[];
  /** A human's explicit `/hub` dispatch (skips CONFIRM/APPROVE in the firewall, never deny or grants). */
  direct?: boolean;
  /** Receives the module's progress reports (stdio `progress` lines, MCP progress notifications). */
  onProgress?: (message: string, fraction?: number) => void;
}

/** State of a request, as kept for `GET /v1/requests/:id`. */
export interface RequestRecord {
  request_id: string;
  correlation_id: string;
  target: string;
  /** `sha256:<hex>` of the payload of a call with a caller's request id (a reuse with other arguments is refused). */
  args_digest?: string;
  /**
   * `<kind>:<id>` of the principal that made the call: only the same caller may reuse its request
   * id (join it, or get its outcome) — another is refused, so no caller reads another's result.
   */
  caller?: string;
  status: 'running' | 'succeeded' | 'failed';
  created_at: string;
  finished_at?: string;
  result?: unknown;
  error?: ErrorInfo;
}

/** A resolved target. */
export interface ResolvedTarget {
  module: ModuleManifest;
  tool: ToolSpec;
  /** Canonical tool id `<module>.<tool>`. */
  tool_id: string;
}

/** What an interceptor sees of a call. */
export interface HubCall {
  readonly envelope: Envelope;
  readonly resolved: ResolvedTarget;
  readonly direct: boolean;
  /** The hub clock's time when the call entered the chain (an interceptor need not read the clock again). */
  readonly now?: number;
}

/**
 * One link of the dispatch chain: `(call, next) => …`. Call `next()` to go on, throw a FingerError
 * to stop, or return a result without calling `next()` to answer in its place. The firewall
 * plugs in here; the hub itself ships none.
 *
 * `pass`, optional: a synchronous first look at the call. `true` means the interceptor lets this
 * call through untouched and has done whatever it records for it — the hub then goes on without
 * calling the interceptor (and, when every interceptor passes, without building a chain step at
 * all). `false` means "call me": the interceptor runs as usual, and `pass` must not have recorded
 * anything the interceptor records again. A throw stops the call, as a throw from the interceptor would.
 */
export type Interceptor = ((call: HubCall, next: () => Promise<unknown>) => Promise<unknown>) & {
  pass?: (call: HubCall) => boolean;
};

/** Limits and defaults of the hub. */
export interface HubLimits {
  max_nesting_depth: number;
  default_timeout_ms: number;
  default_lease_ms: number;
  /** How long the outcome of a request with a caller-supplied id answers duplicates (ms). */
  idempotency_window_ms: number;
  /** How many results of non-blocking requests are kept. */
  max_results: number;
  /** How long results of non-blocking requests with hub-made ids are kept (ms). */
  result_ttl_ms: number;
  /** Sweep period of the lease table (ms). */
  lease_sweep_ms: number;
  /** Default per-module concurrency when the manifest says none. */
  default_concurrency: number;
}

export const DEFAULT_LIMITS: HubLimits = {
  max_nesting_depth: 4,
  default_timeout_ms: 30_000,
  default_lease_ms: 30_000,
  idempotency_window_ms: 10 * 60_000,
  max_results: 10_000,
  result_ttl_ms: 60 * 60_000,
  lease_sweep_ms: 20,
  default_concurrency: 64,
};

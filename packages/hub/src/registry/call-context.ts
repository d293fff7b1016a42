import type { Envelope, Principal } from '@finger/protocol';

import type { ModuleRuntime, ToolCallContext } from '../runtime/runtime.js';
import type { ServerChannel } from '../transport/transport.js';

/** Makes a nested call on behalf of a running call (wired to the hub by the registry). */
export type NestedCaller = (
  parent: Envelope,
  module_id: string,
  target: string,
  payload: unknown,
  options?: { timeout_ms?: number },
) => Promise<unknown>;

/** The ToolCallContext handed to a module for one call; the abort signal is created lazily. */
export class CallContext implements ToolCallContext {
  private controller: AbortController | undefined;
  private cancelledReason: string | undefined;

  constructor(
    private readonly envelope: Envelope,
    private readonly channel: ServerChannel,
    private readonly module_id: string,
    private readonly nested: NestedCaller,
    private readonly runtime?: ModuleRuntime,
  ) {}

  /** Cancel from the caller (lease expiry, deadline, halt): abort the signal, tell the runtime. */
  onCancelled(reason: string): void {
    this.abort(reason);
    this.runtime?.cancel(this.envelope.id, reason);
  }

  get call_id(): string {
    return this.envelope.id;
  }
  get request_id(): string {
    return this.envelope.request_id;
  }
  get correlation_id(): string {
    return this.envelope.correlation_id;
  }
  get session_id(): string {
    return this.envelope.session_id;
  }
  get workflow_id(): string {
    return this.envelope.workflow_id;
  }
  get lease_id(): string {
    return this.envelope.lease?.id ?? this.envelope.id;
  }
  get deadline(): number {
    return this.envelope.deadline;
  }
  get source(): Principal {
    return this.envelope.source;
  }
  get execution_chain(): readonly string[] {
    return this.envelope.execution_chain;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.cancelledReason !== undefined) this.controller.abort(this.cancelledReason);
    }
    return this.controller.signal;
  }

  /** Marks the call cancelled and aborts the signal if anyone asked for it. */
  abort(reason: string): void {
    if (this.cancelledReason !== undefined) return;
    this.cancelledReason = reason;
    this.controller?.abort(reason);
  }

  extendLease(ttl_ms: number): void {
    this.channel.extendLease(ttl_ms);
  }

  progress(message: string, fraction?: number): void {
    this.channel.progress(message, fraction);
  }

  call(target: string, payload: unknown, options?: { timeout_ms?: number }): Promise<unknown> {
    return this.nested(this.envelope, this.module_id, target, payload, options);
  }
}

import type { Envelope, LeaseInfo } from '@finger/protocol';
import { FingerError, rfc3339 } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { ForwardingRuntime } from '../registry/forward-handler.js';
import type { NatsTransport } from '../transport/nats.js';
import type { ReplySink } from '../transport/reply-sink.js';
import type { Canceller, RequestHooks, Transport } from '../transport/transport.js';
import type { RuntimeHealth, RuntimeOptions, ToolCallContext } from './runtime.js';

/** The transport hooks of one call: progress and lease extensions go to the call's context. */
class CallHooks implements RequestHooks {
  canceller?: Canceller;

  constructor(private ctx: ToolCallContext | undefined) {}

  onProgress(message: string, fraction?: number): void {
    this.ctx?.progress(message, fraction);
  }

  onLeaseExtend(ttl_ms: number): void {
    this.ctx?.extendLease(ttl_ms);
  }

  clear(): void {
    this.ctx = undefined;
    this.canceller = undefined;
  }
}

/**
 * The envelope a forwarded request travels as: the hub's, with the lease the remote side has
 * always been sent (NatsRuntime's before forwarding: the time left to the deadline, expiring at
 * the deadline, which the wire writes as `null`) and `blocking: true`, so the bytes on the wire
 * stay what they were. The hub's own lease (the tool's ttl, expiring before the deadline) would
 * add 8 bytes to the bench's echo request, and each 64 bytes more is a SHA-256 block more for
 * each MAC of the frame.
 */
function wireRequest(e: Envelope, now: number): Envelope {
  const lease = leaseToDeadline(e.lease?.id ?? e.id, e.deadline, now);
  return {
    id: e.id,
    kind: 'request',
    request_id: e.request_id,
    correlation_id: e.correlation_id,
    session_id: e.session_id,
    workflow_id: e.workflow_id,
    source: e.source,
    target: e.target,
    blocking: true,
    timestamp: e.timestamp,
    deadline: e.deadline,
    execution_chain: e.execution_chain,
    nesting_depth: e.nesting_depth,
    lease,
    payload: e.payload === undefined ? null : e.payload,
  };
}

/** A lease `id` for the time left to `deadline`, expiring at it (what the remote side is sent). */
function leaseToDeadline(id: string, deadline: number, now: number): LeaseInfo {
  return { id, ttl_ms: Math.max(1, deadline - now), expires_at: deadline };
}

/** Options of {@link NatsRuntime}: the runtime options plus the wire and the cluster's view. */
export interface NatsRuntimeOptions extends RuntimeOptions {
  /** The NATS transport requests go out on. */
  transport: Transport & Pick<NatsTransport, 'send' | 'cancelModule' | 'failModule'>;
  /** Health of the module as the cluster registry sees it (heartbeats). */
  remoteHealth: () => RuntimeHealth;
}

/**
 * A module that runs on another node of the cluster (manifest runtime `{type: "nats"}`). The
 * local hub resolves it, runs its interceptors (grants, firewall) and leases like any module;
 * the hub then hands its envelope to forward() (registry/forward-handler.ts), which sends it
 * over NATS (with the lease of {@link wireRequest}) to whichever replica takes it from the
 * module's queue group; the remote reply envelope is the hub's reply, settling the hub's call by
 * callback. invoke() does the same for a tool call made with a context. Progress, lease
 * extensions and cancels are forwarded. Errors: those of the transport (E_NO_TARGET while no
 * replica answers or NATS is down, E_TIMEOUT past the deadline, E_INVALID_ARGS for a payload over
 * max_payload, E_OVERLOADED) and the remote module's own.
 */
export class NatsRuntime implements ForwardingRuntime {
  readonly type = 'nats';
  private readonly o: NatsRuntimeOptions;
  private readonly clock: Clock;
  private readonly calls = new Map<string, CallHooks>();
  private closed = false;

  constructor(o: NatsRuntimeOptions) {
    this.o = o;
    this.clock = o.clock ?? systemClock;
  }

  async start(): Promise<void> {
    if (this.closed) throw new FingerError('E_PROVIDER_CLOSED', `module "${this.o.manifest.id}" runtime is closed`);
  }

  forward(request: Envelope, sink: ReplySink): void {
    if (this.closed) {
      const e = new FingerError('E_PROVIDER_CLOSED', `module "${this.o.manifest.id}" runtime is closed`);
      queueMicrotask(() => sink.onFailed(e));
      return;
    }
    this.o.transport.send(wireRequest(request, this.clock.now()), sink);
  }

  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new FingerError('E_PROVIDER_CLOSED', `module "${this.o.manifest.id}" runtime is closed`));
    const chain = (ctx as { execution_chain?: readonly string[] }).execution_chain ?? [];
    const now = this.clock.now();
    const envelope: Envelope = {
      id: ctx.call_id,
      kind: 'request',
      request_id: ctx.request_id,
      correlation_id: ctx.correlation_id,
      session_id: ctx.session_id,
      workflow_id: ctx.workflow_id,
      source: ctx.source,
      target: `${this.o.manifest.id}.${tool}`,
      blocking: true,
      timestamp: rfc3339(now),
      deadline: ctx.deadline,
      execution_chain: [...chain],
      nesting_depth: chain.length,
      lease: leaseToDeadline(ctx.lease_id, ctx.deadline, now),
      payload: args === undefined ? null : args,
    };
    const hooks = new CallHooks(ctx);
    const call_id = ctx.call_id;
    this.calls.set(call_id, hooks);
    return this.o.transport.request(envelope, hooks).then(
      (reply) => {
        this.settled(call_id, hooks);
        if (reply.error !== undefined) throw FingerError.fromInfo(reply.error);
        return reply.payload;
      },
      (e: unknown) => {
        this.settled(call_id, hooks);
        throw e;
      },
    );
  }

  /**
   * The call is over. The map lives in the old generation and a backing store it outgrew still
   * points at these hooks: they must not keep the call's context (and all it reaches) alive
   * until a full GC.
   */
  private settled(call_id: string, hooks: CallHooks): void {
    if (this.calls.get(call_id) === hooks) this.calls.delete(call_id);
    hooks.clear();
  }

  cancel(call_id: string, reason: string): void {
    const c: Canceller | undefined = this.calls.get(call_id)?.canceller;
    c?.cancel(reason);
  }

  /**
   * The cluster's view: healthy while a node serving the module was heard of within the
   * unhealthy time. When none was, the calls in flight to it cannot be answered any more (its
   * nodes died, or this node lost NATS): they fail at once with E_MODULE_UNHEALTHY rather than
   * wait for their deadlines — whether the module ran them is unknown (`outcome: "unknown"`).
   */
  async health(): Promise<RuntimeHealth> {
    const h = this.o.remoteHealth();
    // a node that left may still answer what it took (its bye named how long): not given up yet
    if (!h.ok && h.draining !== true) {
      const id = this.o.manifest.id;
      this.o.transport.failModule(
        id,
        new FingerError(
          'E_MODULE_UNHEALTHY',
          `no node serving "${id}" has been heard of (${h.detail ?? 'no heartbeat'}): the call's outcome is unknown`,
          { module: id, outcome: 'unknown' },
        ),
      );
    }
    return h;
  }

  async close(): Promise<void> {
    this.closed = true;
    // every outstanding request to the module, forwarded ones (which this runtime does not track) included
    this.o.transport.cancelModule(this.o.manifest.id, 'E_PROVIDER_CLOSED');
    for (const hooks of this.calls.values()) hooks.clear();
    this.calls.clear();
  }
}

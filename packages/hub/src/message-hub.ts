import type { Envelope } from '@finger/protocol';
import { FingerError, rfc3339, toErrorInfo, ulid } from '@finger/protocol';

import { type Clock, systemClock } from './clock.js';
import { type DispatchRun, startRun } from './dispatch-run.js';
import type { EventBus } from './events/event-bus.js';
import { LocalEventBus } from './events/local-event-bus.js';
import {
  DEFAULT_LIMITS,
  type DispatchParams,
  type HubLimits,
  type Interceptor,
  type RequestRecord,
  type ResolvedTarget,
} from './hub-types.js';
import { LeaseTable } from './lease-table.js';
import { type Logger, silentLogger } from './logger.js';
import { payloadDigest } from './payload-key.js';
import { PendingCall, type PendingCallHost } from './pending-call.js';
import type { ModuleEntry } from './registry/module-entry.js';
import { ModuleRegistry, type TargetEntry } from './registry/module-registry.js';
import { createRuntime } from './runtime/resolve.js';
import type { ModuleRuntime, RuntimeOptions } from './runtime/runtime.js';
import type { Sandbox } from './runtime/sandbox.js';
import { MemoryRequestStore, NO_ARGS } from './store/memory-request-store.js';
import type { BeginOptions, RequestStore } from './store/request-store.js';
import { invalidArgsError, type SchemaCheck } from './tools/schema-validator.js';
import { ToolRegistry, type ToolRegistryOptions } from './tools/tool-registry.js';
import { InProcessTransport } from './transport/in-process.js';
import type { Transport } from './transport/transport.js';

/** Everything a hub is made of; all optional, defaults are the embedded single-process setup. */
export interface MessageHubOptions {
  transport?: Transport;
  events?: EventBus;
  requests?: RequestStore;
  logger?: Logger;
  clock?: Clock;
  limits?: Partial<HubLimits>;
  interceptors?: Interceptor[];
  createRuntime?: (options: RuntimeOptions) => ModuleRuntime;
  /** Operator settings per module id, handed to each module's runtime. */
  settingsFor?: (module_id: string) => Record<string, unknown> | undefined;
  /** Environment stdio children pick their minimal env from. */
  baseEnv?: Record<string, string | undefined>;
  /** Sandbox policy for stdio and MCP module children (runtime/sandbox.ts); default none. */
  sandbox?: Sandbox;
  /** Tool registry options (daemon config `tools`): `preferred_provider_order`. */
  tools?: Pick<ToolRegistryOptions, 'preferred_provider_order'>;
}

/** Counters for /metrics. */
export interface HubStats {
  calls_total: number;
  calls_failed: number;
  inflight: number;
  leases_active: number;
  leases_expired: number;
  idempotent_joins: number;
  idempotent_hits: number;
  modules: number;
}

const EMPTY_CHAIN: string[] = [];

/** A tracked call running here: what duplicates of its request id join, and what they must match. */
interface RunningCall {
  done: Promise<unknown>;
  /** The resolved tool id, once known. */
  target?: string;
  /** Digest of the payload, for a caller's request id (as in its record). */
  args_digest?: string;
  /** Who made the call (as in its record). */
  caller: string;
}
const FRESH: BeginOptions = { fresh: true };

/** Errors raised before a call reached its module: the request id may be retried. */
const PRE_DISPATCH = new Set([
  'E_NO_TARGET',
  'E_NESTING_DEPTH',
  'E_CALL_CYCLE',
  'E_MODULE_UNHEALTHY',
  'E_OVERLOADED',
  'E_PROVIDER_CLOSED',
  'E_FORBIDDEN',
  'E_DENIED_BY_POLICY',
  'E_SAFETY_LOCKOUT',
  'E_HALTED',
  'E_INVALID_ARGS',
]);

/**
 * The message hub: resolves targets, applies the guards (nesting depth, call cycles,
 * idempotency), runs the interceptor chain, grants a lease per call and moves envelopes over
 * the transport. Blocking calls resolve with the tool's result or reject with a FingerError;
 * non-blocking dispatches keep their result for `getRequest`.
 */
export class MessageHub implements PendingCallHost {
  readonly transport: Transport;
  readonly events: EventBus;
  readonly registry: ModuleRegistry;
  /** Every tool of every module, with metadata, provider choice and capability snapshots. */
  readonly tools: ToolRegistry;
  readonly leases: LeaseTable;
  readonly limits: HubLimits;
  private readonly requests: RequestStore;
  /** The request store when it is the in-memory one: tracked calls take its synchronous path. */
  private readonly local: MemoryRequestStore | undefined;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly interceptors: Interceptor[];
  private readonly running = new Map<string, RunningCall>();
  private closed = false;
  /** Bumped by abortAll(): a call that entered the chain before it never reaches its module. */
  private abortEpoch = 0;
  private abortError: unknown;
  private inflightTotal = 0;
  private idleWaiters: (() => void)[] = [];
  private pruneTimer: unknown;
  private lastCaller: { kind: string; id: string; caller: string } | undefined;
  private readonly counters = { calls_total: 0, calls_failed: 0, idempotent_joins: 0, idempotent_hits: 0 };

  constructor(options: MessageHubOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.transport = options.transport ?? new InProcessTransport();
    this.events = options.events ?? new LocalEventBus({ clock: this.clock, logger: this.logger });
    this.requests =
      options.requests ?? new MemoryRequestStore(this.clock, this.limits.max_results, this.limits.result_ttl_ms);
    this.interceptors = [...(options.interceptors ?? [])];
    this.leases = new LeaseTable(this.clock, this.limits.lease_sweep_ms);
    this.leases.start();
    this.registry = new ModuleRegistry({
      transport: this.transport,
      events: this.events,
      clock: this.clock,
      logger: this.logger,
      createRuntime: options.createRuntime ?? createRuntime,
      nested: (parent, module_id, target, payload, opts) => this.nestedCall(parent, module_id, target, payload, opts),
      default_concurrency: this.limits.default_concurrency,
      default_drain_ms: this.limits.default_lease_ms,
      ...(options.settingsFor ? { settingsFor: options.settingsFor } : {}),
      ...(options.baseEnv ? { baseEnv: options.baseEnv } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    });
    this.tools = new ToolRegistry(this.registry, {
      ...options.tools,
      quarantined: (id) => this.registry.runtimeOf(id)?.quarantined?.(),
      quarantinable: (id) => typeof this.registry.runtimeOf(id)?.quarantined === 'function',
    });
    const store = this.requests;
    this.local = store instanceof MemoryRequestStore ? store : undefined;
    if (store instanceof MemoryRequestStore) {
      // the one sweeper of expired records (no timer per call)
      this.pruneTimer = this.clock.setInterval(() => store.prune(), 10_000);
    }
  }

  /** Adds an interceptor at the end of the chain (the firewall plugs in here). */
  use(interceptor: Interceptor): void {
    this.interceptors.push(interceptor);
  }

  /** Current time of the hub's clock. */
  now(): number {
    return this.clock.now();
  }

  /** Resolves a target id. Throws E_NO_TARGET (listing the tools when a module id is ambiguous). */
  resolveTarget(target: string): ResolvedTarget {
    const { module, tool, tool_id } = this.registry.resolve(target);
    return { module, tool, tool_id };
  }

  /**
   * A blocking call. Resolves with the tool's result; rejects with E_NO_TARGET, E_NESTING_DEPTH,
   * E_CALL_CYCLE, E_MODULE_UNHEALTHY, E_OVERLOADED, E_LEASE_EXPIRED, E_TIMEOUT, E_MODULE_CRASHED,
   * the module's own error, or whatever an interceptor throws. A caller-supplied `request_id`
   * makes the call idempotent: duplicates join the running call or get its stored result; with a
   * shared request store unreachable such a call rejects with E_STORE_UNAVAILABLE (never run on a
   * guess), unless `generated_id` says the id was made for this call alone.
   */
  request(p: DispatchParams): Promise<unknown> {
    if (p.request_id !== undefined) return this.tracked(p, true, true);
    return this.execute(p, undefined);
  }

  /**
   * A non-blocking dispatch: returns the ids at once (and `done`, settling with the outcome, for
   * entry points that report it); the outcome is kept for `getRequest`.
   * Refusals that happen before dispatch (unknown target, guards) are kept as failed records too.
   * Resolves once the record exists; rejects (and runs nothing) when it cannot be made — a shared
   * request store that is unreachable rejects with E_STORE_UNAVAILABLE, whoever made the id.
   */
  async dispatch(p: DispatchParams): Promise<{ request_id: string; correlation_id: string; done: Promise<unknown> }> {
    const request_id = p.request_id ?? ulid(this.clock.now());
    const correlation_id = p.correlation_id ?? request_id;
    const q: DispatchParams = { ...p, request_id, correlation_id };
    let begun!: (error?: unknown) => void;
    const recorded = new Promise<void>((resolve, reject) => {
      begun = (error) => (error === undefined ? resolve() : reject(error));
    });
    const done = this.tracked(q, false, p.request_id !== undefined, begun);
    done.catch(() => undefined);
    await recorded;
    return { request_id, correlation_id, done };
  }

  /** The record of a tracked request (non-blocking, or with a caller-supplied id). */
  async getRequest(request_id: string): Promise<RequestRecord | undefined> {
    // the in-memory store leaves the digest out itself (its held arguments are not keyed for a read)
    if (this.local !== undefined) return this.local.peek(request_id, false);
    const r = await this.requests.get(request_id);
    if (r?.args_digest === undefined) return r;
    // the digest is the hub's own bookkeeping (which arguments the id stands for), not the caller's
    const { args_digest: _digest, ...rest } = r;
    return rest;
  }

  /** Counters for metrics. */
  stats(): HubStats {
    return {
      ...this.counters,
      inflight: this.inflightTotal,
      leases_active: this.leases.active,
      leases_expired: this.leases.expiredTotal,
      modules: this.registry.size,
    };
  }

  /**
   * Stops accepting calls (E_PROVIDER_CLOSED), waits for in-flight calls up to `drain_ms`,
   * then closes modules, the lease sweeper, the transport and the event bus. Idempotent.
   */
  async close(drain_ms = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.inflightTotal > 0) {
      await new Promise<void>((resolve) => {
        const t = this.clock.setTimeout(resolve, drain_ms);
        this.idleWaiters.push(() => {
          this.clock.clearTimeout(t);
          resolve();
        });
      });
    }
    // whatever outlived the drain is failed now, never left hanging
    for (const holder of this.leases.releaseAll()) {
      if (holder instanceof PendingCall) {
        holder.abort(
          new FingerError('E_PROVIDER_CLOSED', `the hub shut down before "${holder.envelope.target}" answered`, {
            target: holder.envelope.target,
          }),
        );
      }
    }
    if (this.pruneTimer !== undefined) this.clock.clearInterval(this.pruneTimer);
    await this.registry.close();
    this.leases.stop();
    await this.transport.close();
    await this.requests.close();
    await this.events.close();
  }

  /**
   * Kill switch (halt): every call not yet started never starts — queued calls fail with `error`
   * at once, calls still inside the interceptor chain (e.g. held for approval) fail with it when
   * they reach dispatch — and every started call is cancelled at its module (reason `error.code`:
   * stdio modules get a cancel line, in-process tools see `ctx.signal` abort, MCP servers
   * `notifications/cancelled`); however they end, their caller gets `error`. Calls
   * still running after `grace_ms` fail with `error`; then every module a started call ran on is
   * killed (`ModuleRuntime.kill`: stdio and MCP processes with everything they started, the shell
   * module's process trees). Resolves when done, once those processes are gone.
   */
  async abortAll(
    error: FingerError,
    grace_ms = 0,
  ): Promise<{ queued: number; cancelled: number; aborted: number; killed: string[] }> {
    this.abortEpoch++;
    this.abortError = error;
    const started: PendingCall[] = [];
    let queued = 0;
    for (const h of this.leases.heldBy()) {
      if (!(h instanceof PendingCall) || h.done) continue;
      if (h.started) started.push(h);
      else {
        h.abort(error, error.code);
        queued++;
      }
    }
    for (const e of new Set([...started.map((c) => c.entry)])) e.queue = e.queue.filter((w) => w.waiting);
    for (const c of started) {
      c.haltedWith = error;
      c.canceller?.cancel(error.code);
    }
    if (grace_ms > 0 && started.some((c) => !c.done)) {
      const until = this.clock.now() + grace_ms;
      while (started.some((c) => !c.done) && this.clock.now() < until) {
        await new Promise<void>((r) => this.clock.setTimeout(r, Math.min(20, Math.max(1, until - this.clock.now()))));
      }
    }
    const left = started.filter((c) => !c.done);
    // every module a started call ran on, also one that answered its cancel: what a call started
    // there (a detached child, an MCP server's grandchild) may outlive the answer
    const entries = new Set(started.map((c) => c.entry));
    for (const c of left) c.abort(error, error.code);
    const killed: string[] = [];
    await Promise.all(
      [...entries].map(async (e) => {
        if (e.runtime.kill === undefined) return;
        try {
          await e.runtime.kill();
          killed.push(e.id);
        } catch (err) {
          this.logger.warn({ err, module: e.id }, 'killing a module on halt failed');
        }
      }),
    );
    return { queued, cancelled: started.length, aborted: left.length, killed };
  }

  // ---- PendingCallHost ----

  onExpired(call: PendingCall, reason: 'lease' | 'deadline'): void {
    const env = call.envelope;
    const code = reason === 'deadline' ? 'E_TIMEOUT' : 'E_LEASE_EXPIRED';
    const message =
      reason === 'deadline'
        ? `call to "${env.target}" passed its deadline`
        : `call to "${env.target}" outlived its lease (${call.ttl} ms)`;
    call.canceller?.cancel(code);
    if (call.started) {
      this.events.emit('LEASE_EXPIRED', env, { lease_id: env.lease?.id ?? env.id, reason, ttl_ms: call.ttl, code });
    }
    call.fail(new FingerError(code, message, { target: env.target, lease_id: env.lease?.id ?? env.id }));
  }

  onReleased(entry: ModuleEntry): void {
    const q = entry.queue;
    while (q.length > 0 && entry.inflight < entry.concurrency) {
      const w = q.shift()!;
      if (w.waiting) w.start();
    }
    if (entry.inflight === 0) this.registry.notifyIdle(entry);
  }

  // ---- internals ----

  /**
   * Runs a request under a record. `callerId`: the id came from the caller, so the outcome answers
   * duplicates for `idempotency_window_ms`; hub-made ids keep their result for `result_ttl_ms`.
   * `begun` is told once the record exists (or was found), or with the error that kept it from
   * being made (then nothing runs).
   */
  private tracked(
    p: DispatchParams,
    blocking: boolean,
    callerId: boolean,
    begun?: (error?: unknown) => void,
  ): Promise<unknown> {
    // not an async function: the in-memory path hands back the call's own promise (an async
    // wrapper would add a promise and two microtask turns to every tracked call)
    if (this.local === undefined) return this.trackedShared(p, blocking, callerId, begun);
    try {
      return this.trackedLocal(this.local, p, blocking, callerId, begun);
    } catch (e) {
      begun?.(e);
      return Promise.reject(e);
    }
  }

  /** {@link tracked} over a store shared between daemons (Redis): every step awaits the store. */
  private async trackedShared(
    p: DispatchParams,
    blocking: boolean,
    callerId: boolean,
    begun?: (error?: unknown) => void,
  ): Promise<unknown> {
    const request_id = p.request_id!;
    const keep = callerId ? this.limits.idempotency_window_ms : this.limits.result_ttl_ms;
    // a caller's id stands for one call: the same id with other arguments is refused, not answered
    let args: string | undefined;
    try {
      args = callerId ? payloadDigest(p.payload) : undefined;
    } catch (e) {
      // the shared record needs the digest: arguments with no JSON form are refused before it is made
      const refusal = new FingerError('E_INVALID_ARGS', `arguments of request "${request_id}" have no JSON form`, {
        issues: [{ path: '$', message: e instanceof Error ? e.message : String(e) }],
      });
      begun?.(refusal);
      throw refusal;
    }
    const caller = `${p.source.kind}:${p.source.id}`;
    const joined = this.running.get(request_id);
    if (joined !== undefined) {
      let target = p.target;
      try {
        target = this.registry.resolve(p.target).tool_id;
      } catch {
        // unknown now: compared as given
      }
      const clash = reuseClash(request_id, joined, target, caller, sameDigest(joined.args_digest, args));
      if (clash !== undefined) {
        begun?.(clash);
        throw clash;
      }
      this.counters.idempotent_joins++;
      begun?.();
      return joined.done;
    }
    let settle!: { resolve: (v: unknown) => void; reject: (e: unknown) => void };
    const promise = new Promise<unknown>((resolve, reject) => (settle = { resolve, reject }));
    promise.catch(() => undefined);
    const run: RunningCall = { done: promise, caller };
    if (args !== undefined) run.args_digest = args;
    this.running.set(request_id, run);
    try {
      let resolvedTarget: TargetEntry | undefined;
      try {
        resolvedTarget = this.registry.resolve(p.target);
      } catch {
        resolvedTarget = undefined;
      }
      const now = this.clock.now();
      const record: RequestRecord = {
        request_id,
        correlation_id: p.correlation_id ?? request_id,
        target: resolvedTarget?.tool_id ?? p.target,
        status: 'running',
        created_at: rfc3339(now),
        caller,
      };
      run.target = record.target;
      if (args !== undefined) record.args_digest = args;
      // an id made for this blocking call alone cannot be a duplicate: it need not wait for a shared store
      let existing = await this.requests.begin(record, blocking && p.generated_id === true ? FRESH : undefined);
      begun?.();
      if (
        existing?.status === 'running' &&
        reuseClash(request_id, existing, record.target, caller, sameDigest(existing.args_digest, args)) === undefined &&
        this.requests.awaitOutcome
      ) {
        // running on another daemon (shared store): wait for its outcome, bounded by our deadline
        const timeout = now + (p.timeout_ms ?? this.limits.default_timeout_ms);
        const until = p.deadline !== undefined ? Math.min(p.deadline, timeout) : timeout;
        existing = await this.requests.awaitOutcome(record, until);
      }
      if (existing !== undefined) {
        const clash = reuseClash(request_id, existing, record.target, caller, sameDigest(existing.args_digest, args));
        if (clash !== undefined) throw clash;
        this.counters.idempotent_hits++;
        if (existing.status === 'succeeded') settle.resolve(existing.result);
        else if (existing.status === 'failed') settle.reject(FingerError.fromInfo(existing.error!));
        else
          settle.reject(new FingerError('E_CONFLICT', `request "${request_id}" is running elsewhere`, { request_id }));
        return await promise;
      }
      try {
        const result = await this.execute(p, resolvedTarget, blocking);
        await this.requests.finish(request_id, { ok: true, result }, rfc3339(this.clock.now()), keep);
        settle.resolve(result);
      } catch (e) {
        const info = toErrorInfo(e);
        if (PRE_DISPATCH.has(info.code) && blocking) await this.requests.forget(request_id);
        else await this.requests.finish(request_id, { ok: false, error: info }, rfc3339(this.clock.now()), keep);
        settle.reject(e);
      }
      return await promise;
    } catch (e) {
      begun?.(e); // no-op once the record was made
      settle.reject(e);
      return await promise;
    } finally {
      this.running.delete(request_id);
    }
  }

  /**
   * {@link tracked} over the in-memory store, synchronous up to the call itself: one map entry is
   * both the record and what duplicates join (no second map, no timer, no promise per step), the
   * result is kept by reference and copied into a record only when `getRequest` asks. Same
   * outcomes as the shared-store path: a duplicate joins the running call or gets its stored
   * outcome, another caller, target or arguments is E_CONFLICT, a refusal before dispatch of a
   * blocking call forgets the id.
   */
  private trackedLocal(
    store: MemoryRequestStore,
    p: DispatchParams,
    blocking: boolean,
    callerId: boolean,
    begun?: (error?: unknown) => void,
  ): Promise<unknown> {
    const request_id = p.request_id!;
    const caller = this.callerOf(p.source);
    let resolved: TargetEntry | undefined;
    try {
      resolved = this.registry.resolve(p.target);
    } catch {
      resolved = undefined; // unknown now: compared as given, refused by execute
    }
    const target = resolved?.tool_id ?? p.target;
    const found = store.find(request_id);
    if (found >= 0) {
      const existing = store.view(found);
      // the arguments are keyed only now that a duplicate asks (compared in this process only:
      // short ones by their canonical JSON, no hash)
      const clash = reuseClash(
        request_id,
        existing,
        target,
        caller,
        callerId ? store.sameArgs(found, p.payload) : true,
      );
      if (clash !== undefined) {
        begun?.(clash);
        return Promise.reject(clash);
      }
      begun?.();
      if (existing.done !== undefined) {
        this.counters.idempotent_joins++;
        return existing.done;
      }
      this.counters.idempotent_hits++;
      if (existing.status === 'succeeded') return Promise.resolve(existing.result);
      if (existing.status === 'failed') return Promise.reject(FingerError.fromInfo(existing.error!));
      // running without a promise here: written through the RequestStore interface by someone else
      return Promise.reject(
        new FingerError('E_CONFLICT', `request "${request_id}" is running elsewhere`, { request_id }),
      );
    }
    const keep = callerId ? this.limits.idempotency_window_ms : this.limits.result_ttl_ms;
    // one clock read for the record and the envelope (the record's created_at is formatted when read)
    const now = this.clock.now();
    const slot = store.open(
      request_id,
      p.correlation_id ?? request_id,
      target,
      caller,
      // a caller's id stands for its arguments: held by reference, keyed if a duplicate comes
      callerId ? p.payload : NO_ARGS,
      now,
      keep,
      blocking,
    );
    begun?.();
    let out: Promise<unknown>;
    try {
      out = this.execute(p, resolved, blocking, slot, now);
    } catch (e) {
      out = Promise.reject(e);
    }
    // a call that reached its module without interceptors carries the record (send() attached
    // its promise, and the PendingCall writes the outcome): nothing to chain. Otherwise (a
    // refusal, interceptors) one reaction writes it.
    if (store.doneOf(slot) === out) return out;
    const done: Promise<unknown> = out.then(
      (result) => {
        this.onRecorded(slot, done, true, result);
        return result;
      },
      (e: unknown) => {
        this.onRecorded(slot, done, false, e);
        throw e;
      },
    );
    store.attach(slot, done);
    return done;
  }

  /**
   * `<kind>:<id>` of a call's source; the last one is reused while the same principal calls (one
   * string kept per record instead of one made per call).
   */
  private callerOf(source: DispatchParams['source']): string {
    const last = this.lastCaller;
    if (last !== undefined && last.kind === source.kind && last.id === source.id) return last.caller;
    const caller = `${source.kind}:${source.id}`;
    this.lastCaller = { kind: source.kind, id: source.id, caller };
    return caller;
  }

  /** The outcome of a tracked call on the in-memory store (a refusal before dispatch of a blocking call forgets its id). */
  onRecorded(slot: number, done: Promise<unknown>, ok: boolean, value: unknown): void {
    const store = this.local;
    if (store === undefined) return;
    if (ok) {
      store.settle(slot, done, true, value);
      return;
    }
    const info = toErrorInfo(value);
    if (store.isForgettable(slot) && PRE_DISPATCH.has(info.code)) store.drop(slot, done);
    else store.settle(slot, done, false, info);
  }

  private execute(
    p: DispatchParams,
    resolved: TargetEntry | undefined,
    blocking = true,
    record = -1,
    at?: number,
  ): Promise<unknown> {
    this.counters.calls_total++;
    if (this.closed) return this.fail(new FingerError('E_PROVIDER_CLOSED', 'the hub is shutting down'));
    let target: TargetEntry;
    try {
      target = resolved ?? this.registry.resolve(p.target);
    } catch (e) {
      return this.fail(e);
    }
    const chain = p.execution_chain ?? EMPTY_CHAIN;
    if (chain.length > 0) {
      if (chain.length > this.limits.max_nesting_depth) {
        return this.fail(
          new FingerError(
            'E_NESTING_DEPTH',
            `nesting depth ${chain.length} exceeds the maximum of ${this.limits.max_nesting_depth}`,
            { depth: chain.length, max: this.limits.max_nesting_depth, execution_chain: chain },
          ),
        );
      }
      if (chain.includes(target.tool_id)) {
        return this.fail(
          new FingerError(
            'E_CALL_CYCLE',
            `call cycle: "${target.tool_id}" is already on the call path ${chain.join(' → ')}`,
            { target: target.tool_id, execution_chain: chain },
          ),
        );
      }
    }
    const checkArgs = target.check_args;
    if (checkArgs !== undefined) {
      const issues = checkArgs(p.payload);
      if (issues !== undefined) return this.fail(invalidArgsError(target.tool_id, issues));
    }
    const entry = target.entry;
    if (entry.status === 'draining')
      return this.fail(
        new FingerError('E_NO_TARGET', `module "${entry.id}" is being unregistered`, { target: target.tool_id }),
      );
    if (!entry.healthy)
      return this.fail(
        new FingerError(
          'E_MODULE_UNHEALTHY',
          `module "${entry.id}" is unhealthy${entry.lastHealth?.detail ? `: ${entry.lastHealth.detail}` : ''}`,
          { module: entry.id },
        ),
      );

    const now = at ?? this.clock.now();
    const timeout = p.timeout_ms ?? this.limits.default_timeout_ms;
    const deadline = p.deadline !== undefined ? Math.min(p.deadline, now + timeout) : now + timeout;
    const ttl = target.tool.timeout_ms ?? entry.manifest.lease?.ttl_ms ?? this.limits.default_lease_ms;
    const id = ulid(now);
    const envelope: Envelope = {
      id,
      kind: 'request',
      request_id: p.request_id ?? id,
      correlation_id: p.correlation_id ?? p.request_id ?? id,
      session_id: p.session_id ?? '',
      workflow_id: p.workflow_id ?? '',
      source: p.source,
      target: target.tool_id,
      blocking,
      timestamp: rfc3339(now),
      deadline,
      execution_chain: chain,
      nesting_depth: chain.length,
      lease: { id, ttl_ms: ttl, expires_at: Math.min(now + ttl, deadline) },
      payload: p.payload,
    };
    const checkResult = target.check_result;
    if (this.interceptors.length === 0) return this.send(envelope, entry, ttl, now, checkResult, p.onProgress, record);
    return startRun(this.interceptors, this.afterChain, this.abortEpoch, now, envelope, target, ttl, p);
  }

  /** The end of the interceptor chain: the call goes to its module unless a halt came in between. */
  private readonly afterChain = (run: DispatchRun): Promise<unknown> => {
    if (run.epoch !== this.abortEpoch) return this.fail(this.abortError);
    return this.send(
      run.envelope,
      run.target.entry,
      run.ttl,
      // no interceptor awaited anything: the time read for the envelope is still current
      run.startedSynchronously ? run.now : undefined,
      run.target.check_result,
      run.params.onProgress,
    );
  };

  private send(
    envelope: Envelope,
    entry: ModuleEntry,
    ttl: number,
    now?: number,
    checkResult?: SchemaCheck,
    onProgress?: (message: string, fraction?: number) => void,
    record = -1,
  ): Promise<unknown> {
    if (entry.status === 'draining')
      return this.fail(
        new FingerError('E_NO_TARGET', `module "${entry.id}" is being unregistered`, { target: envelope.target }),
      );
    const queueing = entry.inflight >= entry.concurrency || entry.queue.length > 0;
    if (queueing && entry.queue.length >= entry.maxQueue) {
      return this.fail(
        new FingerError(
          'E_OVERLOADED',
          `module "${entry.id}" is at its concurrency limit (${entry.concurrency}) with a full queue`,
          { module: entry.id, concurrency: entry.concurrency },
        ),
      );
    }
    const call = new PendingCall(this, envelope, entry, ttl, checkResult);
    if (onProgress !== undefined) call.progressListener = onProgress;
    if (record >= 0 && this.local!.attach(record, call.promise)) call.record = record;
    this.inflightTotal++;
    if (queueing) call.enqueue();
    else call.start(now);
    return call.promise;
  }

  onEnded(failed: boolean): void {
    if (failed) this.counters.calls_failed++;
    if (--this.inflightTotal === 0 && this.idleWaiters.length > 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const fn of w) fn();
    }
  }

  private fail(e: unknown): Promise<never> {
    this.counters.calls_failed++;
    return Promise.reject(e);
  }

  private nestedCall(
    parent: Envelope,
    module_id: string,
    target: string,
    payload: unknown,
    opts?: { timeout_ms?: number },
  ): Promise<unknown> {
    // A nested call acts for whoever started the chain: it keeps the root principal, so a module
    // can never reach more than its caller may (grants and policy see the real principal).
    void module_id;
    const p: DispatchParams = {
      target,
      payload,
      source: parent.source,
      correlation_id: parent.correlation_id,
      session_id: parent.session_id,
      workflow_id: parent.workflow_id,
      deadline: parent.deadline,
      execution_chain: [...parent.execution_chain, parent.target],
    };
    if (opts?.timeout_ms !== undefined) p.timeout_ms = opts.timeout_ms;
    return this.execute(p, undefined);
  }
}

/**
 * E_CONFLICT when a request id already stands for another call: another caller's (saying nothing
 * of that call: not its target, arguments or outcome), another target, or (both digests known)
 * other arguments. Undefined when the duplicate may join or reuse the first call's outcome.
 */
function reuseClash(
  request_id: string,
  first: { target?: string | undefined; caller?: string | undefined },
  target: string,
  caller: string,
  argsMatch: boolean,
): FingerError | undefined {
  if (first.caller !== caller)
    return new FingerError(
      'E_CONFLICT',
      `request_id "${request_id}" is taken by another caller; use a new request_id`,
      { request_id, reason: 'other_caller' },
    );
  if (first.target !== undefined && first.target !== target)
    return new FingerError('E_CONFLICT', `request_id "${request_id}" was already used for "${first.target}"`, {
      request_id,
      target: first.target,
    });
  if (!argsMatch)
    return new FingerError(
      'E_CONFLICT',
      `request_id "${request_id}" was already used with other arguments for "${target}"; use a new request_id for a new call`,
      { request_id, target, reason: 'other_args' },
    );
  return undefined;
}

/** Digests of a shared store's record and of a duplicate: other arguments only when both are known and differ. */
function sameDigest(first: string | undefined, args: string | undefined): boolean {
  return first === undefined || args === undefined || first === args;
}

/**
 * FrameworkAdapter: an external agent framework (LangGraph, CrewAI, an Agents SDK script…) behind
 * the same `Agent` interface as finger's own agents. The framework runs as a child process
 * speaking the stdio protocol of §3.4 — it receives `{"type":"call","tool":"handle","args":…}`
 * and answers `result` / `error` (with `progress` and `lease.extend` on the way) — through the
 * hub's StdioRuntime, so it gets the same minimal environment, process-group kill, crash restart
 * and garbage-line handling as a stdio module. Registered with `registerAgent`, callers cannot
 * tell it from a model-backed agent: same target shape `<id>.handle`, same guards and firewall.
 */
import type { Clock, ModuleRuntime, RuntimeLimits, ToolCallContext } from '@finger/hub';
import { StdioRuntime } from '@finger/hub';
import { FingerError, type ModuleManifest, ulid } from '@finger/protocol';

import type { Agent, AgentContext, AgentHealth, AgentServices } from '../agent/agent.js';
import { AGENT_TOOL, agentManifest } from '../agent/register-agent.js';

/** Options of {@link FrameworkAdapter}. */
export interface FrameworkAdapterOptions {
  id: string;
  role: string;
  /** The framework process: `["python3", "agent.py"]`. */
  command: string[];
  /** Working directory of the process (default: the daemon's). */
  cwd?: string;
  /** Extra environment of the process (on top of the minimal one). */
  env?: Record<string, string>;
  /** Environment the minimal child environment is picked from (the composition root passes process.env). */
  baseEnv?: Record<string, string | undefined>;
  limits?: RuntimeLimits;
  clock?: Clock;
  /** Health check timeout (default 2000 ms). */
  health_timeout_ms?: number;
}

/** See the file comment. */
export class FrameworkAdapter implements Agent {
  readonly id: string;
  readonly role: string;
  readonly #o: FrameworkAdapterOptions;
  #runtime: ModuleRuntime | undefined;

  constructor(options: FrameworkAdapterOptions) {
    this.id = options.id;
    this.role = options.role;
    this.#o = options;
  }

  /** The manifest the child runs under (kind agent, runtime stdio, tool `handle`). */
  manifest(): ModuleManifest {
    const o = this.#o;
    return agentManifest(
      { id: this.id, role: this.role },
      {
        description: `Agent "${o.id}" (role ${o.role}), an external framework over stdio.`,
        runtime: {
          type: 'stdio',
          command: o.command,
          ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
          ...(o.env !== undefined ? { env: o.env } : {}),
        },
      },
    );
  }

  /** Starts the child; rejects with E_MODULE_UNHEALTHY when it cannot be spawned. */
  async init(services: AgentServices): Promise<void> {
    const o = this.#o;
    const runtime = new StdioRuntime({
      manifest: this.manifest(),
      baseDir: o.cwd ?? '.',
      logger: services.logger,
      ...(o.baseEnv !== undefined ? { baseEnv: o.baseEnv } : {}),
      ...(o.limits !== undefined ? { limits: o.limits } : {}),
      ...(o.clock !== undefined ? { clock: o.clock } : {}),
    });
    await runtime.start();
    this.#runtime = runtime;
  }

  /**
   * One `handle` call to the child. Rejects with the child's error (its code when registered,
   * else E_MODULE_ERROR), E_MODULE_CRASHED when it dies, E_PROVIDER_CLOSED after shutdown. A
   * cancelled call (lease expiry, deadline) is cancelled in the child too.
   */
  handle(input: unknown, ctx: AgentContext): Promise<unknown> {
    const runtime = this.#runtime;
    if (runtime === undefined)
      return Promise.reject(new FingerError('E_MODULE_UNHEALTHY', `agent "${this.id}" is not started`));
    const call_id = ulid();
    const toolCtx: ToolCallContext = {
      call_id,
      request_id: ctx.request_id,
      correlation_id: ctx.correlation_id,
      session_id: ctx.session_id,
      workflow_id: ctx.workflow_id,
      lease_id: call_id,
      deadline: ctx.deadline,
      source: ctx.caller,
      execution_chain: ctx.execution_chain,
      signal: ctx.signal,
      extendLease: (ttl) => ctx.extendLease(ttl),
      progress: (m, f) => ctx.progress(m, f),
      call: (target, payload, options) => ctx.call(target, payload, options),
    };
    const onAbort = () => runtime.cancel(call_id, String(ctx.signal.reason ?? 'cancelled'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    return runtime.invoke(AGENT_TOOL, input, toolCtx).finally(() => ctx.signal.removeEventListener('abort', onAbort));
  }

  async health(): Promise<AgentHealth> {
    if (this.#runtime === undefined) return { ok: false, detail: 'not started' };
    return this.#runtime.health(this.#o.health_timeout_ms ?? 2000);
  }

  /** Ends the child (stdin closed, then SIGTERM, then SIGKILL). Idempotent. */
  async shutdown(): Promise<void> {
    await this.#runtime?.close();
  }
}

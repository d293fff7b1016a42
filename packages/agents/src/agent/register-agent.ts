import type {
  DispatchParams,
  Logger,
  MessageHub,
  ModuleInfo,
  ModuleRuntime,
  RuntimeHealth,
  ToolCallContext,
} from '@finger/hub';
import { silentLogger } from '@finger/hub';
import { type EventType, FingerError, isFingerError, type ModuleManifest, type Principal } from '@finger/protocol';

import { type Agent, type AgentCallOptions, type AgentContext, agentPrincipal } from './agent.js';

/** The one tool every agent target offers: `<agent>.handle`. */
export const AGENT_TOOL = 'handle';

/** Options of {@link registerAgent}. */
export interface RegisterAgentOptions {
  /** Manifest fields to override (description, grants, lease, concurrency, tool metadata…). */
  manifest?: Partial<ModuleManifest>;
  /** Lease of one `handle` call (the tool's `timeout_ms`; default 120 s). */
  handle_timeout_ms?: number;
  logger?: Logger;
}

/**
 * The default manifest of an agent target: kind `agent`, runtime `inprocess` (the entry names the
 * agent; nothing is imported), one tool `handle` that is itself low risk and side-effect free —
 * what the agent then does is judged call by call, as its own principal. `grants: []`: no agent
 * role may call it unless granted; humans (admin, operator) may.
 */
export function agentManifest(agent: Pick<Agent, 'id' | 'role'>, over: Partial<ModuleManifest> = {}): ModuleManifest {
  return {
    id: agent.id,
    name: `${agent.id} agent`,
    version: '0.1.0',
    description: `Agent "${agent.id}" (role ${agent.role}).`,
    kind: 'agent',
    runtime: { type: 'inprocess', entry: `agent:${agent.id}` },
    tools: [
      {
        name: AGENT_TOOL,
        description: `Hands input to the ${agent.id} agent.`,
        input_schema: { type: 'object' },
        risk_level: 'low',
        capability_level: 'L0',
        side_effects: false,
        idempotent: false,
        timeout_ms: 120_000,
      },
    ],
    grants: [],
    ...over,
  };
}

/** Builds the AgentContext for one call the hub hands the agent. */
function agentContext(
  hub: MessageHub,
  agent: Agent,
  principal: Principal,
  self: string,
  ctx: ToolCallContext,
): AgentContext {
  const chain = [...(ctx.execution_chain ?? []), self];
  const corr = {
    request_id: ctx.request_id,
    correlation_id: ctx.correlation_id,
    session_id: ctx.session_id,
    workflow_id: ctx.workflow_id,
  };
  return {
    ...corr,
    deadline: ctx.deadline,
    caller: ctx.source,
    principal,
    self,
    execution_chain: chain,
    get signal() {
      return ctx.signal;
    },
    extendLease: (ttl_ms: number) => ctx.extendLease(ttl_ms),
    progress: (message: string, fraction?: number) => ctx.progress(message, fraction),
    call(target: string, payload: unknown, options?: AgentCallOptions): Promise<unknown> {
      const p: DispatchParams = {
        target,
        payload,
        source: principal,
        correlation_id: ctx.correlation_id,
        session_id: ctx.session_id,
        workflow_id: ctx.workflow_id,
        deadline: ctx.deadline,
        execution_chain: chain,
      };
      if (options?.timeout_ms !== undefined) p.timeout_ms = options.timeout_ms;
      return hub.request(p);
    },
    emit(type: EventType, data: Record<string, unknown>, target?: string): void {
      hub.events.emit(type, { ...corr, target: target ?? agent.id }, data);
    },
  };
}

/** A ModuleRuntime over an agent object: `handle` is the only tool. */
class AgentRuntime implements ModuleRuntime {
  readonly type = 'inprocess';
  #started = false;
  #closed: Promise<void> | undefined;

  constructor(
    private readonly hub: MessageHub,
    private readonly agent: Agent,
    private readonly principal: Principal,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.agent.init({ hub: this.hub, principal: this.principal, events: this.hub.events, logger: this.logger });
    this.#started = true;
  }

  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    if (this.#closed)
      return Promise.reject(new FingerError('E_PROVIDER_CLOSED', `agent "${this.agent.id}" is shut down`));
    if (tool !== AGENT_TOOL)
      return Promise.reject(new FingerError('E_NO_TARGET', `agent "${this.agent.id}" has no tool "${tool}"`));
    const self = `${this.agent.id}.${AGENT_TOOL}`;
    return this.agent
      .handle(args, agentContext(this.hub, this.agent, this.principal, self, ctx))
      .catch((e: unknown) => {
        if (isFingerError(e)) throw e;
        throw new FingerError('E_MODULE_ERROR', e instanceof Error ? e.message : String(e));
      });
  }

  /** Cooperative: the hub aborts `ctx.signal`, which the agent reads. */
  cancel(): void {}

  async health(_timeout_ms: number): Promise<RuntimeHealth> {
    if (!this.#started || this.#closed) return { ok: false, detail: this.#closed ? 'shut down' : 'not started' };
    try {
      const h = await this.agent.health();
      return h.detail === undefined ? { ok: h.ok } : { ok: h.ok, detail: h.detail };
    } catch (e) {
      return { ok: false, detail: e instanceof Error ? e.message : String(e) };
    }
  }

  close(): Promise<void> {
    this.#closed ??= this.agent.shutdown().catch((e: unknown) => {
      this.logger.warn(
        { agent: this.agent.id, err: e instanceof Error ? e.message : String(e) },
        'agent shutdown failed',
      );
    });
    return this.#closed;
  }
}

/**
 * Registers `agent` as an in-process hub target `<id>.handle` (also reachable as `<id>`), with a
 * manifest of kind `agent` (see {@link agentManifest}; `options.manifest` overrides fields). Calls
 * to it go through the hub's guards and interceptors; its own calls are nested hub calls as
 * `agentPrincipal(agent)`. Calls `agent.init` before it resolves. Rejects with E_CONFLICT when the
 * id is taken, E_INVALID_MANIFEST for a bad manifest, or whatever `init` throws (nothing stays
 * registered then).
 */
export function registerAgent(hub: MessageHub, agent: Agent, options: RegisterAgentOptions = {}): Promise<ModuleInfo> {
  const manifest = agentManifest(agent, { ...agent.manifest?.(), ...options.manifest });
  if (options.handle_timeout_ms !== undefined) {
    manifest.tools = manifest.tools.map((t) =>
      t.name === AGENT_TOOL ? { ...t, timeout_ms: options.handle_timeout_ms } : t,
    );
  }
  const logger = (options.logger ?? silentLogger).child({ agent: agent.id });
  const runtime = new AgentRuntime(hub, agent, agentPrincipal(agent), logger);
  return hub.registry.register(manifest, { baseDir: '.', source: 'static', runtime });
}

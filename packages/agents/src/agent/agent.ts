/**
 * The Agent abstraction (issue #6): an agent is a hub target like a module. Calls to it go through
 * the hub (guards, grants, firewall, leases); its own outgoing calls are nested hub calls made as
 * its own principal (`{kind: 'agent', id, roles: ['agent:<role>']}`), so grants and the firewall
 * judge what the agent does, never what its caller could do.
 */
import type { EventBus, Logger, MessageHub } from '@finger/hub';
import type { EventType, ModuleManifest, Principal } from '@finger/protocol';

/** Health of an agent, as the hub's health checks report it. */
export interface AgentHealth {
  ok: boolean;
  detail?: string;
}

/** What an agent gets once, when it is registered (see `registerAgent`). */
export interface AgentServices {
  /** The hub the agent is a target of (tool registry for capability snapshots, module list). */
  hub: MessageHub;
  /** The agent's own principal: every outgoing call is made as it. */
  principal: Principal;
  events: EventBus;
  logger: Logger;
}

/** Options of one outgoing call. */
export interface AgentCallOptions {
  timeout_ms?: number;
}

/**
 * What an agent sees of one call to it. `call()` is a nested hub call: it inherits the
 * correlation fields, the deadline and the execution chain (plus this agent's own target), so the
 * depth and cycle guards apply, and it is made as the agent's principal, never the caller's.
 */
export interface AgentContext {
  readonly request_id: string;
  readonly correlation_id: string;
  readonly session_id: string;
  readonly workflow_id: string;
  /** Absolute epoch ms after which the caller no longer waits. */
  readonly deadline: number;
  /** Who called the agent (set by the hub from authentication). */
  readonly caller: Principal;
  /** The agent's own principal. */
  readonly principal: Principal;
  /** The agent's target id (`<agent>.handle`). */
  readonly self: string;
  /** Targets on the call path, this agent included. */
  readonly execution_chain: readonly string[];
  /** Aborted when the call is cancelled (lease expiry, deadline, halt). */
  readonly signal: AbortSignal;
  /** A nested hub call as the agent's principal. Rejects with the callee's FingerError. */
  call(target: string, payload: unknown, options?: AgentCallOptions): Promise<unknown>;
  /** Heartbeat: extends the lease of this call to `ttl_ms` from now. */
  extendLease(ttl_ms: number): void;
  /** Reports progress to the caller. */
  progress(message: string, fraction?: number): void;
  /** Emits an event under this call's correlation fields. */
  emit(type: EventType, data: Record<string, unknown>, target?: string): void;
}

/**
 * An agent: `id` is its hub target id, `role` its grant role (`supervisor`, `executor`, …).
 * `handle` rejects with a FingerError; anything else the hub reports as E_MODULE_ERROR.
 */
export interface Agent {
  readonly id: string;
  readonly role: string;
  /** Called once at registration, before the first `handle`. */
  init(services: AgentServices): Promise<void>;
  handle(input: unknown, ctx: AgentContext): Promise<unknown>;
  health(): AgentHealth | Promise<AgentHealth>;
  /** Called once when the agent is unregistered or the hub closes. */
  shutdown(): Promise<void>;
  /** Manifest fields of its hub target (description, runtime shown, lease…); `registerAgent` applies them. */
  manifest?(): Partial<ModuleManifest>;
}

/** The principal an agent acts as. */
export function agentPrincipal(agent: Pick<Agent, 'id' | 'role'>): Principal {
  return Object.freeze({
    kind: 'agent',
    id: agent.id,
    roles: Object.freeze([`agent:${agent.role}`]) as unknown as string[],
  });
}

// The daemon's agents composition: the model adapter from config `llm` (the offline router when
// the provider is `offline`, the default, so routing works with no key), the RouterEngine with the
// JSON guardrail and `router.*`, and the IngressSupervisorAgent registered as hub target
// `supervisor` acting as `agent:supervisor` under the daemon's role grants.

import {
  agentPrincipal,
  createModelAdapter,
  IngressSupervisorAgent,
  type ModelAdapter,
  OfflineAdapter,
  reachableTools,
  registerAgent,
  RouterEngine,
  routerInputOf,
  runGuardrail,
} from '@finger/agents';
import type { AuditLog, ToolGrantProfile } from '@finger/firewall';
import type { Logger, MessageHub } from '@finger/hub';

import type { DaemonConfig } from './config.js';

/** The id (hub target) of the ingress supervisor. */
export const SUPERVISOR_ID = 'supervisor';

/** What {@link wireAgents} needs. */
export interface AgentsWiringOptions {
  hub: MessageHub;
  config: Pick<DaemonConfig, 'llm' | 'router'>;
  grants: ToolGrantProfile;
  audit: AuditLog;
  logger: Logger;
  /** HTTP client of the model adapters (tests); default the global fetch. */
  fetch?: typeof fetch;
}

/** The wired agents. */
export interface AgentsWiring {
  supervisor: IngressSupervisorAgent;
  model: ModelAdapter;
  /** The hub target text input is routed to. */
  supervisorTarget: string;
  /**
   * Timeout of one routed input: the model's timeout for the first answer and each re-ask, plus
   * 30 s for the dispatch (the offline router answers at once: 30 s).
   */
  routeTimeoutMs: number;
}

/**
 * Builds the model adapter and registers the supervisor. Rejects with E_INVALID_ARGS when the
 * `llm` config names a provider without what it needs (the daemon does not start), E_CONFLICT when
 * a module already uses the id `supervisor`.
 */
export async function wireAgents(o: AgentsWiringOptions): Promise<AgentsWiring> {
  const principal = agentPrincipal({ id: SUPERVISOR_ID, role: 'supervisor' });
  // The offline router sees exactly what the supervisor may reach, as the guardrail does.
  const catalog = () => {
    const { tools, reach } = reachableTools(o.hub, principal, o.grants, SUPERVISOR_ID);
    const agents = new Set(reach.agents);
    return {
      tools: tools.filter((t) => !agents.has(t.module)),
      agents: reach.agents.map((id) => ({ id, description: o.hub.registry.get(id)?.description ?? '' })),
    };
  };
  const min_confidence = o.config.router.min_confidence;
  const model: ModelAdapter =
    o.config.llm.provider === 'offline'
      ? new OfflineAdapter({ catalog, min_confidence, inputOf: routerInputOf })
      : createModelAdapter(o.config.llm, { ...(o.fetch ? { fetch: o.fetch } : {}) });
  const engine = new RouterEngine({
    model,
    guardrail: runGuardrail,
    max_retries: o.config.router.max_retries,
    min_confidence,
  });
  const supervisor = new IngressSupervisorAgent({ id: SUPERVISOR_ID, engine, grants: o.grants, audit: o.audit });
  const asks = o.config.llm.provider === 'offline' ? 0 : o.config.llm.timeout_ms * (o.config.router.max_retries + 1);
  const routeTimeoutMs = asks + 30_000;
  await registerAgent(o.hub, supervisor, {
    logger: o.logger,
    handle_timeout_ms: routeTimeoutMs,
    manifest: {
      description: 'Routes ordinary text input to a module or agent (IngressSupervisorAgent, §3.6).',
    },
  });
  o.logger.info({ provider: model.provider, model: model.model }, 'ingress supervisor registered');
  return { supervisor, model, supervisorTarget: SUPERVISOR_ID, routeTimeoutMs };
}

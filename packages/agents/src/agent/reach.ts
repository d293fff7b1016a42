import { decideGrant, type GrantChecker } from '@finger/firewall';
import type { MessageHub, ToolInfo } from '@finger/hub';
import type { Principal } from '@finger/protocol';

/** What an agent may reach: tool ids granted to its role, split by kind of target. */
export interface Reach {
  /** Every tool id the agent's principal may call (agents' `handle` tools included), sorted. */
  tool_ids: string[];
  /** Ids of agents it may hand work to (their `handle` tool is granted), itself excluded. */
  agents: string[];
  /** Ids of modules (kind tool/channel) of which it may call at least one tool. */
  modules: string[];
  /** Targets (tool ids and module ids) with a high or critical risk tool. */
  high_risk: string[];
}

const HIGH = new Set(['high', 'critical']);

/** A grant checker that grants nothing by profile (only module manifests' `grants` count). */
const NO_PROFILE: GrantChecker = {
  isGranted: (role, _tool_id, module_grants) => {
    const r = role.startsWith('agent:') ? role.slice(6) : role;
    return module_grants?.some((g) => g === r || g === `agent:${r}`) ?? false;
  },
};

/**
 * The tools `principal` may call right now (grants decided exactly as the hub's grant
 * interceptor decides them), leaving out the tools of module `self`. Without `grants` only module
 * manifests' `grants` count.
 */
export function reachableTools(
  hub: MessageHub,
  principal: Principal,
  grants: GrantChecker | undefined,
  self: string,
): { tools: ToolInfo[]; reach: Reach } {
  const kinds = new Map(hub.registry.list().map((m) => [m.id, m.kind]));
  const tools = hub.tools
    .list()
    .filter((t) => t.module !== self)
    .filter((t) => decideGrant(grants ?? NO_PROFILE, principal, t.id, t.grants).allowed);
  const agents = new Set<string>();
  const modules = new Set<string>();
  const high = new Set<string>();
  for (const t of tools) {
    if (kinds.get(t.module) === 'agent') agents.add(t.module);
    else modules.add(t.module);
    if (HIGH.has(t.risk_level)) {
      high.add(t.id);
      high.add(t.module);
    }
  }
  return {
    tools,
    reach: {
      tool_ids: tools.map((t) => t.id),
      agents: [...agents].sort(),
      modules: [...modules].sort(),
      high_risk: [...high].sort(),
    },
  };
}

// A hub call as the firewall sees it, and the ToolCallFacts the engine judges, built from it.
// Structural types only: the firewall does not import the hub (STYLE: the daemon wires the
// interceptor into the hub's chain).

import type { Principal } from '@finger/protocol';

import type { ToolCallFacts } from './evaluation.js';

/** What the firewall needs of a hub call (`@finger/hub`'s HubCall satisfies it). */
export interface FirewallCall {
  readonly envelope: {
    /** The hub's id of this execution (the module's `ctx.call_id`); the sandbox profile is handed over by it. */
    readonly id?: string;
    readonly request_id: string;
    readonly correlation_id: string;
    readonly session_id: string;
    readonly workflow_id: string;
    readonly target: string;
    readonly source: Principal;
    /** Replaced by the filtered (or approved, edited) arguments before the call runs. */
    payload: unknown;
    /** Absolute deadline (epoch ms); moved later by the time a person took to approve. */
    deadline?: number;
    lease?: { expires_at: number };
  };
  readonly resolved: { readonly tool_id: string; readonly tool: Partial<ToolCallFacts['tool']> };
  readonly direct: boolean;
  /** The hub clock's time when the call entered the chain, if the hub says it. */
  readonly now?: number;
}

/** Tool metadata with defaults filled in (the hub's ToolRegistry satisfies it). */
export interface FirewallTools {
  get(tool_id: string): (ToolCallFacts['tool'] & { quarantined?: { reason: string } }) | undefined;
}

/** The tool's metadata: the registry's, else the manifest's spec with missing fields at their worst case. */
export function toolOf(call: FirewallCall, tools: FirewallTools | undefined): ToolCallFacts['tool'] {
  const found = tools?.get(call.resolved.tool_id);
  if (found !== undefined) return found;
  const spec = call.resolved.tool;
  return {
    risk_level: spec.risk_level ?? 'medium',
    capability_level: spec.capability_level ?? 'L2',
    side_effects: spec.side_effects ?? true,
    ...(spec.permission !== undefined ? { permission: spec.permission } : {}),
    ...(spec.input_schema !== undefined ? { input_schema: spec.input_schema } : {}),
  };
}

/** The facts of `call`: identity and session from the envelope (never from the payload). */
export function factsOf(
  call: FirewallCall,
  tool: ToolCallFacts['tool'],
  confidence: number | undefined,
): ToolCallFacts {
  const env = call.envelope;
  const facts: ToolCallFacts = {
    tool_id: call.resolved.tool_id,
    args: env.payload,
    principal: env.source,
    session_id: env.session_id,
    request_id: env.request_id,
    correlation_id: env.correlation_id,
    direct: call.direct,
    tool,
  };
  if (confidence !== undefined) facts.confidence = confidence;
  return facts;
}

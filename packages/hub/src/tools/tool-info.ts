import type { CapabilityLevel, PermissionLevel, RiskLevel, ToolSpec } from '@finger/protocol';
import { internId } from '@finger/protocol';

/**
 * One tool as the hub lists it (`GET /v1/tools`, `myfinger tool list`): the manifest's metadata
 * with every missing field filled by its documented default (see {@link TOOL_DEFAULTS}).
 */
export interface ToolInfo {
  /** Canonical id `<module>.<name>` (MCP: `mcp.<server>.<tool>`). */
  id: string;
  /** Id of the module that offers it. */
  module: string;
  /** Short name inside the module. */
  name: string;
  description: string;
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
  risk_level: RiskLevel;
  capability_level: CapabilityLevel;
  permission?: PermissionLevel;
  side_effects: boolean;
  idempotent: boolean;
  timeout_ms?: number;
  /** Tokens it costs to put this tool in an agent's context. */
  context_cost: number;
  /** The module id serving it (same as `module`; named for the provider choice). */
  provider: string;
  /** Runtime type of the provider: `inprocess`, `stdio`, `mcp`, `nats`. */
  runtime: string;
  /** Roles the module's manifest grants all its tools to. */
  grants: string[];
  /** Set while the tool is quarantined (a changed MCP definition, until re-pinned). */
  quarantined?: { reason: string };
  /** Other modules offering a tool with the same short name. */
  also_offered_by?: string[];
}

/**
 * Defaults for metadata a manifest leaves out. Missing metadata is assumed to be the worst case
 * for safety: the tool has side effects, is not idempotent (never retried automatically) and may
 * execute or reach the network (L2). The risk default `medium` is the contract's; MCP tools get
 * their risk from annotations, whose own defaults are the worst case (§3.3).
 */
export const TOOL_DEFAULTS = {
  risk_level: 'medium',
  capability_level: 'L2',
  side_effects: true,
  idempotent: false,
  context_cost: 100,
} as const satisfies Pick<ToolInfo, 'risk_level' | 'capability_level' | 'side_effects' | 'idempotent' | 'context_cost'>;

/** Builds the ToolInfo of `spec` offered by module `module` (runtime `runtime`). */
export function toToolInfo(module: string, runtime: string, grants: readonly string[], spec: ToolSpec): ToolInfo {
  const info: ToolInfo = {
    id: internId(`${module}.${spec.name}`),
    module,
    name: spec.name,
    description: spec.description,
    risk_level: spec.risk_level ?? TOOL_DEFAULTS.risk_level,
    capability_level: spec.capability_level ?? TOOL_DEFAULTS.capability_level,
    side_effects: spec.side_effects ?? TOOL_DEFAULTS.side_effects,
    idempotent: spec.idempotent ?? TOOL_DEFAULTS.idempotent,
    context_cost: spec.context_cost ?? TOOL_DEFAULTS.context_cost,
    provider: module,
    runtime,
    grants: [...grants],
  };
  if (spec.input_schema !== undefined) info.input_schema = spec.input_schema;
  if (spec.output_schema !== undefined) info.output_schema = spec.output_schema;
  if (spec.permission !== undefined) info.permission = spec.permission;
  if (spec.timeout_ms !== undefined) info.timeout_ms = spec.timeout_ms;
  return info;
}

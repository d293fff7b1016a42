import type { CapabilityLevel, RiskLevel, ToolSpec } from '@finger/protocol';

/** MCP tool annotations (§3.3): hints whose absence means the worst case. */
export interface McpToolAnnotations {
  title?: string;
  /** Default false: the tool may change its environment. */
  readOnlyHint?: boolean;
  /** Default true: changes may be destructive (meaningful only when not read-only). */
  destructiveHint?: boolean;
  /** Default false: repeating a call may have further effects. */
  idempotentHint?: boolean;
  /** Default true: the tool reaches beyond a closed set of things (the web, other systems). */
  openWorldHint?: boolean;
}

/** The part of an MCP `tools/list` entry finger uses (pinning, risk, schemas). */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: McpToolAnnotations;
}

/** Tool names the manifest schema accepts; MCP names outside it are skipped (logged). */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * Risk of an MCP tool from its annotations alone, defaulting to the worst case (§3.3):
 * read-only and closed-world → low; read-only and open-world → medium; not read-only with
 * `destructiveHint: false` → medium; anything else (or no annotations) → high.
 */
export function annotationRisk(a: McpToolAnnotations | undefined): RiskLevel {
  const readOnly = a?.readOnlyHint === true;
  const openWorld = a?.openWorldHint !== false;
  if (readOnly) return openWorld ? 'medium' : 'low';
  if (a?.destructiveHint === false) return 'medium';
  return 'high';
}

/**
 * The ToolSpec finger registers for an MCP tool. Annotations count only for a server the
 * operator marked `trusted`: an untrusted server's tools are all `high`, L2, with side effects and
 * never idempotent (annotations can only raise risk, and nothing is above the worst case). For a
 * trusted server, risk follows {@link annotationRisk}, a read-only tool is L0 without side
 * effects, and only `idempotentHint: true` marks it idempotent. Results are
 * `{content, structuredContent?}`, so a declared `outputSchema` describes `structuredContent`.
 */
export function mcpToolSpec(tool: McpToolDefinition, opts: { trusted: boolean; timeout_ms?: number }): ToolSpec {
  const a = opts.trusted ? tool.annotations : undefined;
  const readOnly = a?.readOnlyHint === true;
  const risk: RiskLevel = opts.trusted ? annotationRisk(a) : 'high';
  const capability: CapabilityLevel = readOnly ? 'L0' : 'L2';
  const spec: ToolSpec = {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    input_schema: tool.inputSchema ? withoutDialect(tool.inputSchema) : { type: 'object' },
    risk_level: risk,
    capability_level: capability,
    side_effects: !readOnly,
    idempotent: a?.idempotentHint === true,
  };
  if (tool.outputSchema !== undefined) {
    spec.output_schema = {
      type: 'object',
      required: ['content', 'structuredContent'],
      properties: { content: { type: 'array' }, structuredContent: withoutDialect(tool.outputSchema) },
    };
  }
  if (opts.timeout_ms !== undefined) spec.timeout_ms = opts.timeout_ms;
  return spec;
}

/** Normalises one raw `tools/list` entry (from any server, so nothing is trusted). Null when unusable. */
export function toDefinition(raw: unknown): McpToolDefinition | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const t = raw as Record<string, unknown>;
  if (typeof t.name !== 'string') return null;
  const def: McpToolDefinition = { name: t.name };
  if (typeof t.title === 'string') def.title = t.title;
  if (typeof t.description === 'string') def.description = t.description;
  if (isObject(t.inputSchema)) def.inputSchema = t.inputSchema;
  if (isObject(t.outputSchema)) def.outputSchema = t.outputSchema;
  if (isObject(t.annotations)) {
    const a: McpToolAnnotations = {};
    const src = t.annotations;
    if (typeof src.title === 'string') a.title = src.title;
    for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
      if (typeof src[k] === 'boolean') a[k] = src[k];
    }
    def.annotations = a;
  }
  return def;
}

/**
 * The schema without its top-level `$schema`: MCP's default dialect is 2020-12, which finger's
 * validator (ajv, draft-07 keywords) refuses to compile by name although it checks the keywords
 * servers use. The pinned hash covers the schema as the server sent it.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

import { EVENT_TYPES } from '@finger/protocol';

import { ROLES } from '../auth/token-store.js';

/**
 * Shared JSON Schemas of the HTTP API, registered once with `addSchema` and referenced by `$id`
 * so OpenAPI (`/docs/json`) shows them as components. Response objects allow additional
 * properties: fast-json-stringify would otherwise strip fields added later.
 */

const ID = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const eventSchema = {
  $id: 'FingerEvent',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'type', 'ts', 'request_id', 'correlation_id', 'session_id', 'workflow_id', 'target', 'data'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    ts: { type: 'string', format: 'date-time' },
    request_id: { type: 'string' },
    correlation_id: { type: 'string' },
    session_id: { type: 'string' },
    workflow_id: { type: 'string' },
    target: { type: 'string' },
    data: { type: 'object', additionalProperties: true },
    origin: { type: 'string', description: 'The cluster node the event came from; absent for this daemon’s own' },
  },
} as const;

export const requestRecordSchema = {
  $id: 'RequestRecord',
  type: 'object',
  additionalProperties: true,
  required: ['request_id', 'correlation_id', 'target', 'status', 'created_at'],
  properties: {
    request_id: { type: 'string' },
    correlation_id: { type: 'string' },
    target: { type: 'string' },
    status: { type: 'string', enum: ['running', 'succeeded', 'failed'] },
    created_at: { type: 'string' },
    finished_at: { type: 'string' },
    caller: {
      type: 'string',
      description: '`<kind>:<id>` of the principal that made the call (only it may reuse the request_id)',
    },
    result: {},
    error: {
      type: 'object',
      additionalProperties: true,
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
} as const;

export const moduleInfoSchema = {
  $id: 'ModuleInfo',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'name', 'version', 'kind', 'runtime', 'tools', 'status', 'healthy'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    version: { type: 'string' },
    kind: { type: 'string' },
    description: { type: 'string' },
    runtime: { type: 'string' },
    tools: { type: 'array', items: { type: 'object', additionalProperties: true } },
    grants: { type: 'array', items: { type: 'string' } },
    status: { type: 'string' },
    healthy: { type: 'boolean' },
    inflight: { type: 'integer' },
    queued: { type: 'integer' },
    concurrency: { type: 'integer' },
    registered_at: { type: 'string' },
    source: { type: 'string' },
    base_dir: { type: 'string' },
    location: { type: 'string', enum: ['local', 'remote'], description: 'where the module runs (list only)' },
    nodes: {
      type: 'array',
      description: 'remote modules: the cluster nodes announcing it, with heartbeat health',
      items: {
        type: 'object',
        properties: {
          node: { type: 'string' },
          role: { type: 'string' },
          healthy: { type: 'boolean' },
          last_seen: { type: 'number' },
        },
      },
    },
  },
} as const;

export const moduleHealthSchema = {
  $id: 'ModuleHealthInfo',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'healthy', 'checked_at', 'consecutive_failures'],
  properties: {
    id: { type: 'string' },
    healthy: { type: 'boolean' },
    checked_at: { type: 'string' },
    detail: { type: 'string' },
    consecutive_failures: { type: 'integer' },
  },
} as const;

export const dispatchResponseSchema = {
  $id: 'DispatchResponse',
  type: 'object',
  additionalProperties: true,
  required: ['request_id', 'correlation_id', 'status', 'target'],
  properties: {
    request_id: { type: 'string' },
    correlation_id: { type: 'string' },
    status: { type: 'string', enum: ['succeeded', 'running'] },
    target: { type: 'string' },
    result: {},
  },
} as const;

export const tokenInfoSchema = {
  $id: 'TokenInfo',
  type: 'object',
  additionalProperties: true,
  required: ['name', 'role', 'created_at'],
  properties: {
    name: { type: 'string' },
    role: { type: 'string', enum: [...ROLES] },
    created_at: { type: 'string' },
    last_used_at: { type: 'string' },
  },
} as const;

export const toolInfoSchema = {
  $id: 'ToolInfo',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'module', 'name', 'risk_level', 'capability_level', 'side_effects', 'provider', 'runtime'],
  properties: {
    id: { type: 'string', description: '`<module>.<tool>` (MCP: `mcp.<server>.<tool>`)' },
    module: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    input_schema: {},
    output_schema: {},
    risk_level: { type: 'string', enum: ['low', 'medium', 'high', 'critical'] },
    capability_level: { type: 'string', enum: ['L0', 'L1', 'L2'] },
    permission: { type: 'string' },
    side_effects: { type: 'boolean' },
    idempotent: { type: 'boolean' },
    timeout_ms: { type: 'integer' },
    context_cost: { type: 'integer' },
    provider: { type: 'string', description: 'Id of the module that answers for this tool' },
    runtime: { type: 'string' },
    grants: { type: 'array', items: { type: 'string' }, description: "Roles the module's manifest grants" },
    quarantined: { type: 'object', additionalProperties: true, properties: { reason: { type: 'string' } } },
    also_offered_by: { type: 'array', items: { type: 'string' } },
  },
} as const;

/**
 * A call shape (what a standing approval covers): `shell` commands (program, subcommand words,
 * optional argument globs), `path` globs, a `url` origin, or `args` JSON pointers to globs.
 */
export const callShapeSchema = {
  $id: 'CallShape',
  type: 'object',
  additionalProperties: true,
  required: ['kind', 'tool'],
  properties: {
    kind: { type: 'string', enum: ['shell', 'path', 'url', 'args'] },
    tool: { type: 'string', minLength: 1, maxLength: 256 },
    commands: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['program'],
        properties: {
          program: { type: 'string', minLength: 1, maxLength: 256 },
          subcommand: { type: 'array', maxItems: 8, items: { type: 'string', minLength: 1, maxLength: 256 } },
          args: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 512 } },
          writes: { type: 'boolean' },
        },
      },
    },
    paths: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 4096 } },
    scheme: { type: 'string', enum: ['http', 'https'] },
    host: { type: 'string', minLength: 1, maxLength: 256 },
    pointers: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 4096 } },
  },
} as const;

/** A standing approval (`GET /v1/standing-approvals`). */
export const standingApprovalSchema = {
  $id: 'StandingApproval',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'tool_id', 'shape', 'level', 'principal', 'scope', 'by', 'created_at', 'approval_id'],
  properties: {
    id: { type: 'string' },
    tool_id: { type: 'string' },
    shape: { $ref: 'CallShape#' },
    description: { type: 'string', description: 'The shape in one line' },
    level: { type: 'string', description: 'The hold level it was given at; it never covers a stricter one' },
    principal: { type: 'string', description: 'The caller it covers, <kind>:<id>' },
    scope: { type: 'string', enum: ['session', 'workspace', 'persistent'] },
    session_id: { type: 'string' },
    workspace: { type: 'string' },
    expires_at: { type: 'string' },
    by: { type: 'string', description: 'The token that answered always' },
    created_at: { type: 'string' },
    approval_id: { type: 'string', description: 'The held call it was given on' },
  },
} as const;

/** Every shared schema, for `addSchema`. */
export const SHARED_SCHEMAS = [
  eventSchema,
  requestRecordSchema,
  moduleInfoSchema,
  moduleHealthSchema,
  dispatchResponseSchema,
  tokenInfoSchema,
  toolInfoSchema,
  callShapeSchema,
  standingApprovalSchema,
] as const;

/** `{$ref}` to a shared schema. */
export function ref(id: (typeof SHARED_SCHEMAS)[number]['$id']): { $ref: string } {
  return { $ref: `${id}#` };
}

/** Schema of an `:id` path parameter. */
export const idParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: ID },
} as const;

export { ID as idSchema };

/** Runtime of a module (§3.3). */
export type RuntimeSpec =
  | { type: 'inprocess'; entry: string }
  | { type: 'stdio'; command: string[]; cwd?: string; env?: Record<string, string> }
  | {
      type: 'mcp';
      transport: 'stdio';
      command: string[];
      cwd?: string;
      env?: Record<string, string>;
      trusted?: boolean;
    }
  | { type: 'mcp'; transport: 'http'; url: string; trusted?: boolean }
  | { type: 'nats' };

export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';
export type CapabilityLevel = 'L0' | 'L1' | 'L2';
export type PermissionLevel = 'AUTO' | 'NOTIFY' | 'CONFIRM' | 'APPROVE';

/** One tool of a module. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
  risk_level?: RiskLevel;
  capability_level?: CapabilityLevel;
  permission?: PermissionLevel;
  side_effects?: boolean;
  idempotent?: boolean;
  timeout_ms?: number;
  context_cost?: number;
}

/** The contents of a `module.json` (§3.3). */
export interface ModuleManifest {
  id: string;
  name: string;
  version: string;
  description?: string;
  kind: 'tool' | 'agent' | 'channel';
  runtime: RuntimeSpec;
  tools: ToolSpec[];
  grants?: string[];
  health?: { interval_ms?: number; timeout_ms?: number };
  lease?: { ttl_ms?: number };
  concurrency?: number;
}

export const MODULE_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
/** Ids of MCP server modules: `mcp.<name>` (their tools are `mcp.<name>.<tool>`); only for runtime type mcp. */
export const MCP_MODULE_ID_PATTERN = '^mcp\\.[a-z0-9_]{1,60}$';
const TOOL_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';
const COMMAND = { type: 'array', minItems: 1, maxItems: 256, items: { type: 'string', minLength: 1 } } as const;
const ENV = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** JSON Schema of module.json. Unknown keys are errors: a typo must not be silently ignored. */
export const manifestSchema = {
  $id: 'https://finger.dev/schemas/module.json',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'version', 'kind', 'runtime', 'tools'],
  properties: {
    $schema: { type: 'string' },
    id: { type: 'string', pattern: MODULE_ID_PATTERN }, // `mcp.<name>` is admitted by manifestIssues()
    name: { type: 'string', minLength: 1, maxLength: 200 },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$' },
    description: { type: 'string', maxLength: 4000 },
    kind: { enum: ['tool', 'agent', 'channel'] },
    runtime: {
      type: 'object',
      required: ['type'],
      properties: { type: { enum: ['inprocess', 'stdio', 'mcp', 'nats'] } },
      allOf: [
        {
          if: { properties: { type: { const: 'inprocess' } } },
          then: {
            additionalProperties: false,
            required: ['type', 'entry'],
            properties: { type: {}, entry: { type: 'string', minLength: 1 } },
          },
        },
        {
          if: { properties: { type: { const: 'stdio' } } },
          then: {
            additionalProperties: false,
            required: ['type', 'command'],
            properties: { type: {}, command: COMMAND, cwd: { type: 'string' }, env: ENV },
          },
        },
        {
          if: { properties: { type: { const: 'mcp' } } },
          then: {
            required: ['type', 'transport'],
            properties: { transport: { enum: ['stdio', 'http'] } },
            if: { properties: { transport: { const: 'http' } } },
            then: {
              additionalProperties: false,
              required: ['url'],
              properties: {
                type: {},
                transport: {},
                url: { type: 'string', pattern: '^https?://' },
                trusted: { type: 'boolean' },
              },
            },
            else: {
              additionalProperties: false,
              required: ['command'],
              properties: {
                type: {},
                transport: {},
                command: COMMAND,
                cwd: { type: 'string' },
                env: ENV,
                trusted: { type: 'boolean' },
              },
            },
          },
        },
        {
          if: { properties: { type: { const: 'nats' } } },
          then: { additionalProperties: false, properties: { type: {} } },
        },
      ],
    },
    tools: {
      type: 'array',
      maxItems: 1024,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'description'],
        properties: {
          name: { type: 'string', pattern: TOOL_NAME_PATTERN },
          description: { type: 'string', maxLength: 8000 },
          input_schema: { type: 'object' },
          output_schema: { type: 'object' },
          risk_level: { enum: ['low', 'medium', 'high', 'critical'] },
          capability_level: { enum: ['L0', 'L1', 'L2'] },
          permission: { enum: ['AUTO', 'NOTIFY', 'CONFIRM', 'APPROVE'] },
          side_effects: { type: 'boolean' },
          idempotent: { type: 'boolean' },
          timeout_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
          context_cost: { type: 'integer', minimum: 0 },
        },
      },
    },
    grants: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 } },
    health: {
      type: 'object',
      additionalProperties: false,
      properties: {
        interval_ms: { type: 'integer', minimum: 100 },
        timeout_ms: { type: 'integer', minimum: 1 },
      },
    },
    lease: {
      type: 'object',
      additionalProperties: false,
      properties: { ttl_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 } },
    },
    concurrency: { type: 'integer', minimum: 1, maximum: 100_000 },
  },
} as const;

// JSON Schema of a policy file. Unknown keys are errors everywhere: a misspelt `levle` or
// `blocked_pattern` must refuse the policy, not silently drop a rule.

import { compileChecker, createAjv, type ValidationIssue } from '@finger/protocol';

const LEVEL = { enum: ['AUTO', 'NOTIFY', 'CONFIRM', 'APPROVE', 'DENY'] } as const;
const TOOL_GLOB = { type: 'string', minLength: 1, maxLength: 200 } as const;
const PATTERN = { type: 'string', minLength: 1, maxLength: 4000 } as const;
const PATH_LIST = { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 4096 } } as const;

const EXAMPLE = {
  type: 'object',
  additionalProperties: false,
  required: ['tool', 'args'],
  properties: {
    tool: { type: 'string', minLength: 1, maxLength: 200 },
    args: { type: 'object' },
  },
} as const;

const RULE = {
  type: 'object',
  additionalProperties: false,
  required: ['tool', 'level'],
  properties: {
    id: { type: 'string', pattern: '^[A-Za-z0-9_.:@/-]{1,128}$' },
    tool: TOOL_GLOB,
    match: {
      type: 'object',
      maxProperties: 32,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_-]{0,127}$' },
      additionalProperties: {
        anyOf: [PATTERN, { type: 'array', minItems: 1, maxItems: 256, items: PATTERN }],
      },
    },
    level: LEVEL,
    human_only: { type: 'boolean' },
    reason: { type: 'string', maxLength: 1000 },
    examples: {
      type: 'object',
      additionalProperties: false,
      properties: {
        match: { type: 'array', maxItems: 100, items: EXAMPLE },
        not_match: { type: 'array', maxItems: 100, items: EXAMPLE },
      },
    },
  },
} as const;

/** JSON Schema of a policy document (both layers; admin-only keys are checked by the compiler). */
export const policySchema = {
  $id: 'https://finger.dev/schemas/policy.json',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'rules'],
  properties: {
    $schema: { type: 'string' },
    version: { const: 1 },
    description: { type: 'string', maxLength: 4000 },
    rules: { type: 'array', maxItems: 10_000, items: RULE },
    readable_paths: PATH_LIST,
    writable_paths: PATH_LIST,
    shell: {
      type: 'object',
      additionalProperties: false,
      properties: {
        allowed_patterns: { type: 'array', maxItems: 10_000, items: PATTERN },
        blocked_patterns: { type: 'array', maxItems: 10_000, items: PATTERN },
        tools: { type: 'array', maxItems: 100, items: TOOL_GLOB },
      },
    },
    human_only: { type: 'array', maxItems: 1000, items: TOOL_GLOB },
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: {
        outside_read: { enum: ['CONFIRM', 'APPROVE', 'DENY'] },
        outside_write: { enum: ['APPROVE', 'DENY'] },
        hard_link_write: { enum: ['CONFIRM', 'APPROVE', 'DENY'] },
        user_may_allow: { type: 'boolean' },
      },
    },
  },
} as const;

let checker: ((value: unknown) => ValidationIssue[]) | undefined;

/** Every schema violation of `doc` (empty when it has the policy shape). */
export function policySchemaIssues(doc: unknown): ValidationIssue[] {
  checker ??= compileChecker(createAjv(), policySchema);
  return checker(doc);
}

import type { ModuleManifest, ToolSpec, ValidationIssue } from '@finger/protocol';
import { createAjv, FingerError, formatAjvErrors } from '@finger/protocol';

/**
 * A compiled JSON Schema check: `undefined` when the value is valid (no allocation on the happy
 * path), else every problem as `{path, message}`.
 */
export type SchemaCheck = (value: unknown) => ValidationIssue[] | undefined;

/** The compiled checks of one tool; a field is absent when the tool declares no such schema. */
export interface ToolChecks {
  args?: SchemaCheck;
  result?: SchemaCheck;
}

type Ajv = ReturnType<typeof createAjv>;

/**
 * A top-level `$schema` names the dialect. The hub's ajv speaks draft-07 (the dialect of most
 * module and MCP schemas); other dialects (2019-09, 2020-12, draft-04) are compiled with their
 * `$schema` removed, so their common keywords still apply instead of refusing the tool.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  if (typeof schema.$schema !== 'string' || /draft-07\/schema#?$/.test(schema.$schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * The data context of a top-level check, one for every call: ajv's generated function defaults a
 * missing one to a fresh `{}` (its `instancePath`, `rootData`… defaults apply to an empty one
 * alike), an object per checked argument and result on the hub's hot path.
 */
const TOP_LEVEL: object = Object.freeze({});

function compileOne(ajv: Ajv, schema: Record<string, unknown>): SchemaCheck {
  const validate = ajv.compile(withoutDialect(schema));
  const cxt = TOP_LEVEL as Parameters<typeof validate>[1];
  return (value) => (validate(value, cxt) ? undefined : formatAjvErrors(validate.errors));
}

function compileMessage(e: unknown): string {
  return `does not compile: ${e instanceof Error ? e.message : String(e)}`;
}

/**
 * Compiles every `input_schema` and `output_schema` of a manifest once, with one ajv per module
 * (dropped with the module, so unregistering leaks nothing). Throws E_INVALID_MANIFEST listing
 * every schema that does not compile (`$.tools[i].input_schema does not compile: …`).
 */
export function compileToolSchemas(m: ModuleManifest, source?: string): Map<ToolSpec, ToolChecks> {
  const out = new Map<ToolSpec, ToolChecks>();
  const issues: ValidationIssue[] = [];
  let ajv: Ajv | undefined;
  m.tools.forEach((tool, i) => {
    const checks: ToolChecks = {};
    for (const key of ['input_schema', 'output_schema'] as const) {
      const schema = tool[key];
      if (schema === undefined) continue;
      ajv ??= createAjv();
      try {
        checks[key === 'input_schema' ? 'args' : 'result'] = compileOne(ajv, schema);
      } catch (e) {
        issues.push({ path: `$.tools[${i}].${key}`, message: compileMessage(e) });
      }
    }
    out.set(tool, checks);
  });
  if (issues.length > 0) {
    const where = source ? ` (${source})` : '';
    throw new FingerError(
      'E_INVALID_MANIFEST',
      `invalid module manifest${where}: ${issues.length} error(s): ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      { issues, ...(source ? { source } : {}) },
    );
  }
  return out;
}

/**
 * Checks for a tool that appeared after registration (a runtime that discovers its tools when it
 * starts, such as MCP). A schema that does not compile fails closed: every call is refused with
 * E_INVALID_ARGS naming the reason, rather than running unchecked.
 */
export function compileLateToolSchemas(tool: ToolSpec): ToolChecks {
  const checks: ToolChecks = {};
  const ajv = createAjv();
  for (const key of ['input_schema', 'output_schema'] as const) {
    const schema = tool[key];
    if (schema === undefined) continue;
    let check: SchemaCheck;
    try {
      check = compileOne(ajv, schema);
    } catch (e) {
      const issue = [{ path: '$', message: `cannot be checked: the tool's ${key} ${compileMessage(e)}` }];
      check = () => issue;
    }
    checks[key === 'input_schema' ? 'args' : 'result'] = check;
  }
  return checks;
}

/** The E_INVALID_ARGS for `issues` of a call to `tool_id` (details list every problem). */
export function invalidArgsError(tool_id: string, issues: ValidationIssue[]): FingerError {
  return new FingerError('E_INVALID_ARGS', `invalid arguments for "${tool_id}": ${summarize(issues)}`, {
    tool: tool_id,
    issues,
  });
}

/** The E_MODULE_ERROR for a result of `tool_id` that fails its output_schema. */
export function invalidResultError(tool_id: string, issues: ValidationIssue[]): FingerError {
  return new FingerError(
    'E_MODULE_ERROR',
    `"${tool_id}" returned a result that does not match its output_schema: ${summarize(issues)}`,
    { tool: tool_id, output_issues: issues },
  );
}

const MAX_IN_MESSAGE = 10;

function summarize(issues: ValidationIssue[]): string {
  const shown = issues
    .slice(0, MAX_IN_MESSAGE)
    .map((i) => `${i.path} ${i.message}`)
    .join('; ');
  return issues.length > MAX_IN_MESSAGE ? `${shown}; … ${issues.length - MAX_IN_MESSAGE} more` : shown;
}

import type { Envelope } from './envelope.js';
import { envelopeSchema } from './envelope.js';
import { FingerError } from './finger-error.js';
import type { ModuleManifest } from './manifest.js';
import { manifestSchema, MCP_MODULE_ID_PATTERN } from './manifest.js';
import { compileChecker, createAjv, type ValidationIssue } from './validation.js';

type Checker = (value: unknown) => ValidationIssue[];
let checkers: { envelope: Checker; manifest: Checker } | undefined;

/** The envelope and manifest checkers, compiled on first use (importing the package compiles nothing). */
function compiled(): { envelope: Checker; manifest: Checker } {
  if (checkers === undefined) {
    const ajv = createAjv();
    checkers = { envelope: compileChecker(ajv, envelopeSchema), manifest: compileChecker(ajv, manifestSchema) };
  }
  return checkers;
}
const checkEnvelope: Checker = (value) => (checkers ?? compiled()).envelope(value);
const checkManifestSchema: Checker = (value) => (checkers ?? compiled()).manifest(value);
const MCP_ID = new RegExp(MCP_MODULE_ID_PATTERN);

/** Lists every problem of an envelope that came from outside the process. */
export function envelopeIssues(value: unknown): ValidationIssue[] {
  return checkEnvelope(value);
}

/** Returns the envelope, or throws E_INVALID_ENVELOPE listing every problem. */
export function assertEnvelope(value: unknown): Envelope {
  const issues = checkEnvelope(value);
  if (issues.length)
    throw new FingerError('E_INVALID_ENVELOPE', `invalid envelope: ${issues.length} problem(s)`, { issues });
  return value as Envelope;
}

/** Lists every problem of a module.json: schema errors plus duplicate tool names. */
export function manifestIssues(value: unknown): ValidationIssue[] {
  let issues = checkManifestSchema(value);
  const { id, runtime } = (value ?? {}) as { id?: unknown; runtime?: { type?: unknown } };
  // `mcp.<name>` fails the plain id pattern on purpose; it is valid for (and only for) MCP servers:
  // runtime `mcp`, or `nats` for one another node hosts (as its heartbeats announce it)
  if (typeof id === 'string' && MCP_ID.test(id)) issues = issues.filter((i) => i.path !== '$.id');
  if (id === 'mcp') issues.push({ path: '$.id', message: '"mcp" is reserved (MCP servers are "mcp.<name>")' });
  else if (typeof id === 'string' && id.startsWith('mcp.') && runtime?.type !== 'mcp' && runtime?.type !== 'nats')
    issues.push({
      path: '$.id',
      message: `"${id}": ids "mcp.<name>" are reserved for runtime type mcp (or nats: an MCP server on another node)`,
    });
  const tools = (value as { tools?: unknown })?.tools;
  if (Array.isArray(tools)) {
    const seen = new Map<string, number>();
    tools.forEach((t, i) => {
      const name = (t as { name?: unknown })?.name;
      if (typeof name !== 'string') return;
      if (seen.has(name))
        issues.push({ path: `$.tools[${i}].name`, message: `duplicates $.tools[${seen.get(name)}].name "${name}"` });
      else seen.set(name, i);
    });
  }
  return issues;
}

/**
 * Returns the manifest, or throws E_INVALID_MANIFEST whose details list every error
 * (`{issues: [{path, message}]}`) — nothing of a bad manifest may be registered.
 */
export function assertManifest(value: unknown, source?: string): ModuleManifest {
  const issues = manifestIssues(value);
  if (issues.length) {
    const where = source ? ` (${source})` : '';
    const summary = issues.map((i) => `${i.path} ${i.message}`).join('; ');
    throw new FingerError(
      'E_INVALID_MANIFEST',
      `invalid module manifest${where}: ${issues.length} error(s): ${summary}`,
      {
        issues,
        ...(source ? { source } : {}),
      },
    );
  }
  return value as ModuleManifest;
}

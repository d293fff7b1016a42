import type { Envelope } from './envelope.js';
import { envelopeSchema } from './envelope.js';
import { FingerError } from './finger-error.js';
import type { ModuleManifest } from './manifest.js';
import { manifestSchema } from './manifest.js';
import { compileChecker, createAjv, type ValidationIssue } from './validation.js';

const ajv = createAjv();
const checkEnvelope = compileChecker(ajv, envelopeSchema);
const checkManifestSchema = compileChecker(ajv, manifestSchema);

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
  const issues = checkManifestSchema(value);
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

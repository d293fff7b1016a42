/**
 * Step 7 of the guardrail: the coerced decision against the §3.6 schema (ajv through
 * @finger/protocol), then against the registry: the target must be registered, and of the kind
 * the decision names.
 */
import { compileChecker, createAjv, type ValidationIssue } from '@finger/protocol';

import { type RegistryIndex, resolveTarget } from './coerce.js';
import type { GuardrailReasonCode, RouterDecision } from './guardrail-types.js';

/** JSON Schema of a router decision after coercion (§3.6). */
export const routerDecisionSchema = {
  type: 'object',
  required: ['decision', 'target', 'confidence', 'reason', 'payload', 'requires_human'],
  additionalProperties: false,
  properties: {
    decision: { enum: ['direct_reply', 'dispatch_agent', 'dispatch_module', 'ask_human', 'reject'] },
    target: { type: ['string', 'null'], maxLength: 256 },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    reason: { type: 'string' },
    payload: { type: 'object' },
    requires_human: { type: 'boolean' },
  },
  if: { properties: { decision: { enum: ['dispatch_agent', 'dispatch_module'] } } },
  then: { properties: { target: { type: 'string', minLength: 1 } } },
} as const;

let checker: ((v: unknown) => ValidationIssue[]) | undefined;

/** `$.path message` lines, the form fed back to the model on a re-ask. */
export function issueLines(issues: readonly ValidationIssue[]): string[] {
  return issues.map((i) => `${i.path} ${i.message}`);
}

/** Schema problems of `o` (empty when it is a well-formed decision). Non-finite numbers are caught too. */
export function schemaErrors(o: Record<string, unknown>): string[] {
  checker ??= compileChecker(createAjv(), routerDecisionSchema);
  const errors = issueLines(checker(o));
  if (typeof o.confidence === 'number' && !Number.isFinite(o.confidence) && errors.length === 0)
    errors.push('$.confidence must be a finite number');
  return errors;
}

/** A registry problem of a schema-valid decision. */
export interface RegistryProblem {
  reason_code: Extract<GuardrailReasonCode, 'unknown_target' | 'kind_mismatch'>;
  errors: string[];
}

/**
 * Checks a dispatch's target against the registry: unregistered → `unknown_target`; an agent id
 * with `dispatch_module` or a module id with `dispatch_agent` → `kind_mismatch`.
 */
export function registryProblem(d: RouterDecision, index: RegistryIndex): RegistryProblem | undefined {
  if (d.decision !== 'dispatch_agent' && d.decision !== 'dispatch_module') return undefined;
  const id = d.target === null ? undefined : resolveTarget(d.target, index);
  if (id === undefined)
    return {
      reason_code: 'unknown_target',
      errors: [
        `$.target ${JSON.stringify(d.target)} is not a registered ${d.decision === 'dispatch_agent' ? 'agent' : 'module'}`,
      ],
    };
  const kind = index.exact.get(id)!;
  if (kind === 'both') return undefined;
  if (d.decision === 'dispatch_module' && kind === 'agent')
    return { reason_code: 'kind_mismatch', errors: [`$.target "${id}" is an agent: use dispatch_agent`] };
  if (d.decision === 'dispatch_agent' && kind === 'module')
    return { reason_code: 'kind_mismatch', errors: [`$.target "${id}" is a module: use dispatch_module`] };
  return undefined;
}

/**
 * The JSON guardrail (§3.6): one model answer in, one outcome out. Pure — no I/O, no clock — and
 * never throws. The re-ask loop lives in the RouterEngine: it re-asks when the outcome is
 * `retryable`, feeding `errors` back, at most `router.max_retries` times.
 */
import { type ChainFailure, type ChainRule, selectDecisionObject } from './chain.js';
import { coerceEnum, coerceRouterFields, indexRegistry, type RegistryIndex } from './coerce.js';
import type { GuardrailOutcome, GuardrailRegistry, GuardrailRepair, RouterDecision } from './guardrail-types.js';
import { type CopyReport, maskKeys, safeCopy } from './mask.js';
import { applyPolicy, DEFAULT_MIN_CONFIDENCE } from './policy.js';
import { isPlaceholder } from './select.js';
import { registryProblem, schemaErrors } from './validate.js';

/** The six keys of a router decision; everything else is masked. */
export const ROUTER_DECISION_KEYS = [
  'decision',
  'target',
  'confidence',
  'reason',
  'payload',
  'requires_human',
] as const;

const DECISIONS = ['direct_reply', 'dispatch_agent', 'dispatch_module', 'ask_human', 'reject'] as const;

/** Options of {@link runGuardrail}. */
export interface GuardrailOptions {
  /** Dispatches below this confidence become `ask_human` (default 0.5). */
  min_confidence?: number;
  /** Longest answer read (default 256 KiB); longer → `too_large`. */
  max_chars?: number;
}

/**
 * A decision spelt only as an ellipsis (`"..."`, `"…"`, `"……"`, `". . ."`): the value a schema
 * sketch (`{"decision": "…"}`) leaves for the model to fill in, never one of the five decisions.
 */
function isEllipsis(v: unknown): boolean {
  return typeof v === 'string' && /^(?:…|[.…]{2,})$/u.test(v.replace(/\s+/gu, ''));
}

const ROUTER_RULE: ChainRule = {
  claim: /["']?\bdecision["']?\s*:/,
  isCandidate: (o) => Object.hasOwn(o, 'decision'),
  safe: (o) => {
    const d = coerceEnum(o.decision, DECISIONS);
    return d === 'ask_human' || d === 'reject';
  },
  isTemplateEcho: (o) =>
    (typeof o.decision === 'string' && o.decision.includes('|')) ||
    isPlaceholder(o.decision) ||
    isEllipsis(o.decision) ||
    isPlaceholder(o.target) ||
    isPlaceholder(o.reason),
  // A cut answer keeps what decides the action. A module dispatch's payload is the tool's
  // arguments: one cut before it would run the tool with `{}` (another meaning), so it must be
  // there and closed. An agent dispatch without a payload gets the user's text instead.
  truncation: (o) => {
    const d = coerceEnum(o.decision, DECISIONS);
    const dispatch = d === undefined || d === 'dispatch_agent' || d === 'dispatch_module';
    return {
      anchor: 'decision',
      required: [
        'decision',
        'confidence',
        ...(dispatch ? ['target'] : []),
        ...(d === 'dispatch_module' ? ['payload'] : []),
      ],
      completeIfPresent: ['payload', 'requires_human', 'target'],
    };
  },
};

function failure(f: Omit<ChainFailure, 'ok'>, repairs: GuardrailRepair[], decision?: RouterDecision): GuardrailOutcome {
  const outcome = f.reason_code === 'unknown_target' ? 'reject' : 'ask_human';
  const base = { outcome, reason_code: f.reason_code, retryable: f.retryable, errors: f.errors, repairs } as const;
  return decision === undefined ? base : { ...base, decision };
}

function run(text: string, registry: GuardrailRegistry, options: GuardrailOptions): GuardrailOutcome {
  const repairs: GuardrailRepair[] = [];
  const sel = selectDecisionObject(text, ROUTER_RULE, repairs, options.max_chars);
  if (!sel.ok) return failure(sel, repairs);
  const masked = maskKeys(sel.value, ROUTER_DECISION_KEYS, repairs);
  const index = indexRegistry(registry);
  const coerced = coerceRouterFields(masked, index, repairs);
  // After coercion: a payload given as a JSON string is an object only from here on.
  if (typeof coerced.payload === 'object' && coerced.payload !== null) {
    const report: CopyReport = { dropped: [], tooDeep: false };
    coerced.payload = safeCopy(coerced.payload, report, '$.payload');
    if (report.dropped.length > 0) repairs.push({ kind: 'mask', detail: `dropped keys: ${report.dropped.join(', ')}` });
    if (report.tooDeep)
      return failure(
        { reason_code: 'invalid_schema', errors: ['$.payload is nested too deeply'], retryable: true },
        repairs,
      );
  }
  const errors = schemaErrors(coerced);
  if (errors.length > 0) return failure({ reason_code: 'invalid_schema', errors, retryable: true }, repairs);
  const decision = {} as Record<string, unknown>;
  for (const k of ROUTER_DECISION_KEYS) decision[k] = coerced[k];
  return decide(decision as unknown as RouterDecision, index, options, repairs);
}

function decide(
  decision: RouterDecision,
  index: RegistryIndex,
  options: GuardrailOptions,
  repairs: GuardrailRepair[],
): GuardrailOutcome {
  const problem = registryProblem(decision, index);
  if (problem?.reason_code === 'unknown_target') return failure({ ...problem, retryable: true }, repairs);
  if (problem) return failure({ ...problem, retryable: false }, repairs, { ...decision, requires_human: true });
  return applyPolicy(decision, index, options.min_confidence ?? DEFAULT_MIN_CONFIDENCE, repairs);
}

/**
 * Runs the guardrail over one raw model answer against `registry` (the targets the requesting
 * principal may reach). Returns `ok` with a masked, coerced, validated decision, or `ask_human` /
 * `reject` with a stable `reason_code`, `retryable` and the `errors` to feed back on a re-ask.
 * `repairs` lists every change made, for JSON_REPAIRED events. Never throws.
 */
export function runGuardrail(
  text: string,
  registry: GuardrailRegistry,
  options: GuardrailOptions = {},
): GuardrailOutcome {
  try {
    return run(typeof text === 'string' ? text : String(text), registry, options);
  } catch (e) {
    return failure(
      {
        reason_code: 'unparseable',
        errors: [`the answer could not be read: ${(e as Error).message}`],
        retryable: true,
      },
      [],
    );
  }
}

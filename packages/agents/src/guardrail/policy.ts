/**
 * Step 8 of the guardrail: the system's rules over a valid decision. Non-dispatches carry no
 * target; a low-confidence dispatch goes to a human; `ask_human` always requires a human; a
 * dispatch to a high-risk target always requires a human (the model may raise the flag, never
 * lower it); the model's own ask_human / reject become those outcomes.
 */
import { isHighRisk, type RegistryIndex } from './coerce.js';
import type { GuardrailOutcome, GuardrailRepair, RouterDecision } from './guardrail-types.js';

/** Dispatches below this confidence go to a human unless the caller sets `min_confidence`. */
export const DEFAULT_MIN_CONFIDENCE = 0.5;

/** The outcome for a schema- and registry-valid decision. */
export function applyPolicy(
  input: RouterDecision,
  index: RegistryIndex,
  minConfidence: number,
  repairs: GuardrailRepair[],
): GuardrailOutcome {
  const d: RouterDecision = { ...input };
  const dispatch = d.decision === 'dispatch_agent' || d.decision === 'dispatch_module';
  if (!dispatch && d.target !== null) {
    repairs.push({ kind: 'policy_target_null', before: JSON.stringify(d.target).slice(0, 200) });
    d.target = null;
  }
  if (dispatch && d.target !== null && isHighRisk(d.target, index) && !d.requires_human) {
    repairs.push({ kind: 'policy_requires_human', detail: `${d.target} is high risk` });
    d.requires_human = true;
  }
  if (d.decision === 'ask_human') {
    if (!d.requires_human) {
      repairs.push({ kind: 'policy_requires_human', detail: 'ask_human' });
      d.requires_human = true;
    }
    return {
      outcome: 'ask_human',
      decision: d,
      reason_code: 'model_asked_human',
      retryable: false,
      errors: [],
      repairs,
    };
  }
  if (d.decision === 'reject')
    return { outcome: 'reject', decision: d, reason_code: 'model_rejected', retryable: false, errors: [], repairs };
  if (dispatch && d.confidence < minConfidence) {
    return {
      outcome: 'ask_human',
      decision: { ...d, requires_human: true },
      reason_code: 'low_confidence',
      retryable: false,
      errors: [`$.confidence ${d.confidence} is below ${minConfidence}`],
      repairs,
    };
  }
  return { outcome: 'ok', decision: d, repairs };
}

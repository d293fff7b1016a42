/**
 * Steps 1–4 of the guardrail, shared by the router decision (§3.6) and the executor's LLM decision
 * (§3.7): extract fragments, repair and parse them, select exactly one decision object, and check
 * that a cut-off answer kept its control fields. What follows (mask, coerce, validate, policy)
 * differs per shape.
 */
import { extractCandidates, MAX_PER_LEVEL } from './extract.js';
import type { GuardrailReasonCode, GuardrailRepair } from './guardrail-types.js';
import { MAX_REPAIR_TOTAL, parseCandidate, type ParsedCandidate, type RepairBudget } from './repair.js';
import { selectCandidate, type SelectRule } from './select.js';
import { truncationProblems, type TruncationRule } from './truncation.js';

/** Longest answer the guardrail reads unless the caller sets `max_chars`. */
export const DEFAULT_MAX_CHARS = 256 * 1024;

/** How one decision shape is recognised and which fields a cut-off answer must keep. */
export interface ChainRule extends SelectRule {
  truncation(value: Record<string, unknown>): TruncationRule;
  /** Matches the text of a fragment that claims to be a decision, even one that cannot be parsed. */
  claim: RegExp;
}

/** A failure of steps 1–4. */
export interface ChainFailure {
  ok: false;
  reason_code: GuardrailReasonCode;
  errors: string[];
  retryable: boolean;
}

/** The chosen decision object, unmasked, or why there is none. */
export type ChainResult = { ok: true; value: Record<string, unknown>; chosen: ParsedCandidate } | ChainFailure;

/** Runs extract → repair → select → truncation over `text`, recording repairs. */
export function selectDecisionObject(
  text: string,
  rule: ChainRule,
  repairs: GuardrailRepair[],
  maxChars = DEFAULT_MAX_CHARS,
): ChainResult {
  if (text.length > maxChars)
    return {
      ok: false,
      reason_code: 'too_large',
      errors: [`the answer has ${text.length} characters; at most ${maxChars} are read`],
      retryable: true,
    };
  const levels = extractCandidates(text, repairs);
  const budget: RepairBudget = { chars: MAX_REPAIR_TOTAL };
  let parsed: ParsedCandidate[] = [];
  let fragments = 0;
  let unparseable = 0;
  for (const level of levels) {
    const levelRepairs: GuardrailRepair[] = [...level.repairs];
    const found: ParsedCandidate[] = [];
    let bad = 0;
    let badClaims = 0;
    for (const f of level.candidates) {
      const p = parseCandidate(f, rule.isCandidate, budget);
      if (p !== null) found.push(...p);
      else {
        bad++;
        if (rule.claim.test(f.text)) badClaims++;
      }
    }
    // The first level holding a claimed decision is the answer; later levels are prose around it.
    const last = level === levels[levels.length - 1];
    if (found.some((p) => rule.isCandidate(p.value)) || last) {
      if (level.overflow)
        return {
          ok: false,
          reason_code: 'ambiguous_candidates',
          errors: [`the answer holds more than ${MAX_PER_LEVEL} JSON objects; give exactly one`],
          retryable: false,
        };
      // A second decision that cannot be read still makes the answer ambiguous.
      if (badClaims > 0 && found.some((p) => rule.isCandidate(p.value)))
        return {
          ok: false,
          reason_code: 'ambiguous_candidates',
          errors: ['the answer holds another decision that cannot be parsed; give exactly one'],
          retryable: false,
        };
      repairs.push(...levelRepairs);
      parsed = found;
      fragments = level.candidates.length;
      unparseable = bad;
      break;
    }
  }
  const sel = selectCandidate(parsed, fragments, unparseable, rule);
  if (!sel.ok) return sel;
  const { chosen } = sel;
  if (sel.echoes > 0)
    repairs.push({ kind: 'template_echo', detail: `${sel.echoes} echo(es) of the prompt template dropped` });
  repairs.push(...chosen.repairs);
  if (chosen.source.truncated) {
    const problems = truncationProblems(chosen.source.text, rule.truncation(chosen.value));
    if (problems.length > 0) return { ok: false, reason_code: 'truncated', errors: problems, retryable: false };
    repairs.push({ kind: 'truncation', detail: 'answer cut off after the control fields' });
  }
  return { ok: true, value: chosen.value, chosen };
}

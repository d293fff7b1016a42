/**
 * Steps 1–4 of the guardrail, shared by the router decision (§3.6) and the executor's LLM decision
 * (§3.7): extract fragments, repair and parse them, select exactly one decision object, and check
 * that a cut-off answer kept its control fields. What follows (mask, coerce, validate, policy)
 * differs per shape.
 */
import { extractCandidates, MAX_PER_LEVEL } from './extract.js';
import type { GuardrailReasonCode, GuardrailRepair } from './guardrail-types.js';
import { MAX_REPAIR_TOTAL, parseCandidate, type ParsedCandidate, type RepairBudget } from './repair.js';
import { selectCandidate, type Selection, type SelectRule } from './select.js';
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
  const budget: RepairBudget = { chars: MAX_REPAIR_TOTAL };
  const levels = extractCandidates(text, repairs).map((level) => {
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
    return { level, found, bad, badClaims };
  });
  if (levels.some((l) => l.level.overflow))
    return {
      ok: false,
      reason_code: 'ambiguous_candidates',
      errors: [`the answer holds more than ${MAX_PER_LEVEL} JSON objects; give exactly one`],
      retryable: false,
    };
  // The first level holding a real decision is the one read; the others must not hold another one.
  const claims = (l: (typeof levels)[number], real: boolean): boolean =>
    l.found.some((p) => rule.isCandidate(p.value) && !(real && rule.isTemplateEcho(p.value)));
  const primary = levels.find((l) => claims(l, true)) ?? levels.find((l) => claims(l, false));
  let sel: Selection;
  if (primary === undefined) {
    // No decision anywhere: the whole answer says why (no JSON, unparseable, no decision keys).
    repairs.push(...levels[levels.length - 1]!.level.repairs);
    const found = levels.flatMap((l) => l.found);
    const spans = levels.reduce((n, l) => n + l.level.candidates.length, 0);
    const unparseable = levels.reduce((n, l) => n + l.bad, 0);
    sel = selectCandidate(found, spans, unparseable, rule);
  } else {
    // A second decision that cannot be read still makes the answer ambiguous.
    if (levels.some((l) => l.badClaims > 0))
      return {
        ok: false,
        reason_code: 'ambiguous_candidates',
        errors: ['the answer holds another decision that cannot be parsed; give exactly one'],
        retryable: false,
      };
    repairs.push(...primary.level.repairs);
    const elsewhere = levels.filter((l) => l !== primary).flatMap((l) => l.found);
    sel = selectCandidate(primary.found, primary.level.candidates.length, primary.bad, rule, elsewhere);
  }
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

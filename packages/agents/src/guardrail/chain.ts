/**
 * Steps 1–4 of the guardrail, shared by the router decision (§3.6) and the executor's LLM decision
 * (§3.7): extract fragments, repair and parse them, select exactly one decision object, and check
 * that a cut-off answer kept its control fields. What follows (mask, coerce, validate, policy)
 * differs per shape.
 */
import { disowned } from './disown.js';
import { extractCandidates, MAX_PER_LEVEL } from './extract.js';
import type { GuardrailReasonCode, GuardrailRepair } from './guardrail-types.js';
import { looksLikeJson } from './json-spans.js';
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
  /** True for a decision that does nothing the model may not have meant (asks a human, rejects): the prose around it is not checked. */
  safe?(value: Record<string, unknown>): boolean;
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

const SMART_DOUBLE = /[\u201c\u201d\u201e\u201f\u2033\u2036\uff02]/g;
const SMART_SINGLE = /[\u2018\u2019\u201a\u201b\u2032\u2035\uff07]/g;
const FORMAT_CHARS = /\p{Cf}/gu;
const U_ESCAPE = /\\u([0-9a-fA-F]{4})/g;
/** A quoted key (`"k":`, `'k':`) or a bare one after `{` or `,` (group 2, 3). */
const KEY = /(["'`])([^"'`\n]{1,64})\1\s*:|(?:^|[{,])\s*([A-Za-z_$][\w$]*)\s*:/g;
/** A scalar after a key: a quoted string (group 1, 2) or a number or literal (group 3). */
const SCALAR =
  /\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)'|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|True|False|None)(?!\w))/y;
const PY_LITERALS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

/** True when the scalar written at `at` in `t` is `expected` (a restatement of the decision read). */
function restates(t: string, at: number, expected: unknown): boolean {
  SCALAR.lastIndex = at;
  const m = SCALAR.exec(t);
  if (!m) return false;
  const str = m[1] ?? m[2];
  if (str !== undefined) return expected === str;
  const lit = m[3]!;
  return JSON.stringify(expected) === (PY_LITERALS[lit] ?? JSON.stringify(JSON.parse(lit)));
}

/**
 * True when `text` names a key that `rule.claim` matches, in any quoting the repair
 * reads (ASCII, smart or single quotes, `\u` escapes, format characters inside): a fragment that
 * cannot be parsed, or prose between the fragments, that says `"decision": …` is a decision the
 * guardrail cannot read. `bare` also counts unquoted keys after `{` or `,` (inside a fragment). A key
 * whose scalar value equals the one in `agrees` (the decision read) restates it and does not count.
 */
export function claimsDecision(
  text: string,
  rule: ChainRule,
  bare: boolean,
  agrees?: Record<string, unknown>,
): boolean {
  if (bare && rule.claim.test(text)) return true;
  const t = text
    .replace(U_ESCAPE, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(FORMAT_CHARS, '')
    .replace(SMART_DOUBLE, '"')
    .replace(SMART_SINGLE, "'");
  for (const m of t.matchAll(KEY)) {
    const key = m[2] ?? (bare ? m[3] : undefined);
    if (key === undefined) continue;
    const k = key.trim();
    if (!rule.claim.test(`"${k}":`) && !rule.claim.test(`"${k.toLowerCase()}":`)) continue;
    if (agrees !== undefined && Object.hasOwn(agrees, k) && restates(t, m.index + m[0].length, agrees[k])) continue;
    return true;
  }
  return false;
}

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
  /** Why fragments could not be read, when the repair says (hidden characters in keys). */
  const problems: string[] = [];
  const levels = extractCandidates(text, repairs).map((level) => {
    const found: ParsedCandidate[] = [];
    let bad = 0;
    let badClaims = 0;
    /** Unreadable fragments that read as objects (`{"…`, `{'…`, `{key:`), not prose braces like `{name}`. */
    let badObjects = 0;
    for (const f of level.candidates) {
      const p = parseCandidate(f, rule.isCandidate, budget, problems);
      if (p !== null) found.push(...p);
      else {
        bad++;
        if (claimsDecision(f.text, rule, true)) badClaims++;
        if (looksLikeJson(f.text, 0)) badObjects++;
      }
    }
    return { level, found, bad, badClaims, badObjects };
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
    if (!sel.ok && sel.reason_code === 'unparseable') sel = { ...sel, errors: [...sel.errors, ...problems] };
  } else {
    // A second decision that cannot be read still makes the answer ambiguous. So does any object
    // that cannot be read, or decision keys between the fragments (below): the extraction and the
    // repair may have read a string differently (a `}` inside it ended a fragment early), and the
    // decision read may be text nested inside the real one. Never fall back to it.
    if (levels.some((l) => l.badClaims > 0))
      return {
        ok: false,
        reason_code: 'ambiguous_candidates',
        errors: ['the answer holds another decision that cannot be parsed; give exactly one', ...problems],
        retryable: false,
      };
    if (levels.some((l) => l.badObjects > 0))
      return {
        ok: false,
        reason_code: 'ambiguous_candidates',
        errors: [
          'the answer holds JSON that cannot be parsed besides a decision; give exactly one JSON object',
          ...problems,
        ],
        retryable: false,
      };

    repairs.push(...primary.level.repairs);
    const elsewhere = levels.filter((l) => l !== primary).flatMap((l) => l.found);
    sel = selectCandidate(primary.found, primary.level.candidates.length, primary.bad, rule, elsewhere);
  }
  if (!sel.ok) return sel;
  const { chosen } = sel;
  if (levels.some((l) => l.level.gaps.some((g) => claimsDecision(g, rule, false, chosen.value))))
    return {
      ok: false,
      reason_code: 'ambiguous_candidates',
      errors: ['decision keys appear outside the JSON object that was read; give exactly one JSON object'],
      retryable: false,
    };
  const disowning = rule.safe?.(chosen.value) === true ? null : disowned(text, chosen.source.text);
  if (disowning !== null)
    return { ok: false, reason_code: 'ambiguous_candidates', errors: [disowning], retryable: false };
  if (sel.echoes > 0)
    repairs.push({ kind: 'template_echo', detail: `${sel.echoes} echo(es) of the prompt template dropped` });
  repairs.push(...chosen.repairs);
  if (chosen.source.truncated) {
    const cut = truncationProblems(chosen.value, chosen.cut, rule.truncation(chosen.value));
    if (cut.length > 0) return { ok: false, reason_code: 'truncated', errors: cut, retryable: false };
    repairs.push({ kind: 'truncation', detail: 'answer cut off after the control fields' });
  }
  return { ok: true, value: chosen.value, chosen };
}

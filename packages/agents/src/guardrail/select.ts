/**
 * Step 3 of the guardrail: choose the one decision among the parsed fragments. Only objects with
 * the contract's key count; the prompt's own example echoed back is dropped; two different
 * decisions mean the model is undecided (never "first wins"); a key repeated with different values
 * means the answer says two things at once.
 */
import type { GuardrailReasonCode } from './guardrail-types.js';
import type { ParsedCandidate } from './repair.js';

/** How a decision shape recognises its candidates and the prompt's template. */
export interface SelectRule {
  /** True for an object that claims to be a decision of this shape. */
  isCandidate(o: Record<string, unknown>): boolean;
  /** True for the prompt's example echoed back (placeholder values). */
  isTemplateEcho(o: Record<string, unknown>): boolean;
}

/** The selection: one candidate, or why there is none. */
export type Selection =
  | { ok: true; chosen: ParsedCandidate; /** Template echoes dropped on the way. */ echoes: number }
  | { ok: false; reason_code: GuardrailReasonCode; errors: string[]; retryable: boolean };

/** Placeholder strings of the §3.6 / §3.7 templates and of common prompt styles. */
const PLACEHOLDERS = new Set([
  'module-or-agent-id',
  '<module-or-agent-id>',
  '<target>',
  '<id>',
  'string',
  '<string>',
  '...',
  '…',
  '"…"',
]);

/** True when `v` is one of the template placeholders (`"module-or-agent-id"`, `"string"`, `"…"`). */
export function isPlaceholder(v: unknown): boolean {
  return typeof v === 'string' && PLACEHOLDERS.has(v.trim().toLowerCase());
}

/**
 * Stable text of a value with sorted keys: tells identical repeats from distinct candidates, and
 * shows two differing values in a message.
 */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * Picks the decision out of `parsed` (fragments already parsed; `unparseable` counts the ones that
 * were not, `spans` all of them). `elsewhere` holds what the other parts of the answer (prose
 * around a fence, …) parsed to: a different decision there makes the answer ambiguous too.
 * Identical repeats count once.
 */
export function selectCandidate(
  parsed: readonly ParsedCandidate[],
  spans: number,
  unparseable: number,
  rule: SelectRule,
  elsewhere: readonly ParsedCandidate[] = [],
): Selection {
  if (spans === 0)
    return { ok: false, reason_code: 'no_json', errors: ['the answer holds no JSON object'], retryable: true };
  const claims = parsed.filter((p) => rule.isCandidate(p.value));
  const real = claims.filter((p) => !rule.isTemplateEcho(p.value));
  if (real.length === 0) {
    if (claims.length > 0)
      return {
        ok: false,
        reason_code: 'no_decision',
        errors: ['the answer only repeats the prompt template; answer with real values'],
        retryable: true,
      };
    if (parsed.length === 0 && unparseable > 0)
      return {
        ok: false,
        reason_code: 'unparseable',
        errors: ['the JSON in the answer cannot be parsed'],
        retryable: true,
      };
    return {
      ok: false,
      reason_code: 'no_decision',
      errors: ['no JSON object in the answer has the required keys'],
      retryable: true,
    };
  }
  // Elsewhere a schema illustration ("the format is {\"decision\": \"…\"}") is no second decision either.
  const others = elsewhere.filter(
    (p) => rule.isCandidate(p.value) && !rule.isTemplateEcho(p.value) && !Object.values(p.value).some(isPlaceholder),
  );
  let all = [...real, ...others];
  // A partial restatement (`I set {"decision": "dispatch_module"} because …`) whose keys all hold
  // the values of a fuller decision is that decision, not a second one.
  if (all.length > 1) {
    const canon = all.map((p) => new Map(Object.keys(p.value).map((k) => [k, canonical(p.value[k])])));
    const restates = (a: number, b: number): boolean =>
      canon[a]!.size < canon[b]!.size && [...canon[a]!].every(([k, v]) => canon[b]!.get(k) === v);
    const kept = all.filter((_, a) => !all.some((__, b) => restates(a, b)));
    all = kept;
  }
  const distinct = new Map<string, ParsedCandidate>();
  for (const p of all.length > 1 ? all : []) {
    const key = canonical(p.value);
    if (!distinct.has(key)) distinct.set(key, p);
  }
  if (distinct.size > 1)
    return {
      ok: false,
      reason_code: 'ambiguous_candidates',
      errors: [`the answer holds ${distinct.size} different decisions; give exactly one`],
      retryable: false,
    };
  const chosen = all.find((p) => p.duplicate !== undefined) ?? real.find((p) => all.includes(p)) ?? all[0]!;
  if (chosen.duplicate !== undefined)
    return {
      ok: false,
      reason_code: 'duplicate_keys',
      errors: [`${chosen.duplicate} appears twice with different values`],
      retryable: false,
    };
  return { ok: true, chosen, echoes: claims.length - real.length };
}

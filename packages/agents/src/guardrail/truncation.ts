/**
 * Step 4 of the guardrail: when the chosen fragment was cut off, decide whether the control
 * fields survived. The judge is the repair itself (syntax-repair.ts): it reports every value it had
 * to finish at the cut — the containers it closed, a member it filled in, a scalar at the very end
 * of the text (`0.8` may have been `0.85`; a string without its closing quote) — and each field of
 * the chosen object is looked up there by its path. One reader: what the repair read as a string,
 * a space or a key (smart quotes, NBSP, `"p\u0061yload"`) is what is judged, on the object that was
 * chosen, not on another one holding the same key.
 */

/** What a truncated fragment must still hold completely. */
export interface TruncationRule {
  /** The key that identifies the decision object (the object judged is the chosen one). */
  anchor: string;
  /** Keys that must be present with a complete value. */
  required: readonly string[];
  /** Keys whose value, when started, must be complete (closed). */
  completeIfPresent: readonly string[];
}

/** Where the chosen object lies in the text the repair read, and what the repair finished there. */
export interface CutInfo {
  /** Path of the chosen object in the parsed text (`[]` the root, `[1]` an array's second item, …). */
  path: readonly (string | number)[];
  /** Paths (JSON texts) of the values the repair finished at the cut. */
  incomplete: ReadonlySet<string>;
}

/**
 * Problems of the chosen object `value` when its fragment was cut off; empty when every control
 * field survived the cut.
 */
export function truncationProblems(value: Record<string, unknown>, at: CutInfo, rule: TruncationRule): string[] {
  const cut = (key: string): boolean => at.incomplete.has(JSON.stringify([...at.path, key]));
  const problems: string[] = [];
  for (const key of rule.required) {
    if (!Object.hasOwn(value, key)) problems.push(`$.${key} is missing: the answer was cut off before it`);
    else if (cut(key)) problems.push(`$.${key} was cut off`);
  }
  for (const key of rule.completeIfPresent) {
    if (rule.required.includes(key)) continue;
    if (Object.hasOwn(value, key) && cut(key)) problems.push(`$.${key} was cut off`);
  }
  return problems;
}

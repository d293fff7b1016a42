/** Longest before/after snippet a repair record carries, so audit entries stay bounded. */
export const SNIPPET_MAX = 200;

/** `s` cut to {@link SNIPPET_MAX} characters, with an ellipsis when cut. */
export function clip(s: string): string {
  return s.length <= SNIPPET_MAX ? s : `${s.slice(0, SNIPPET_MAX - 1)}…`;
}

/**
 * `s` cut to {@link SNIPPET_MAX} characters by dropping its middle (an ellipsis in its place): a
 * message that quotes model text (`$.<key>: <number> is out of range`) keeps its start and the
 * reason at its end.
 */
export function clipMiddle(s: string): string {
  if (s.length <= SNIPPET_MAX) return s;
  let head = Math.ceil((SNIPPET_MAX - 1) / 2);
  let tail = s.length - (SNIPPET_MAX - 1 - head);
  // never split a surrogate pair (a lone half is no character to show)
  const high = s.charCodeAt(head - 1);
  if (high >= 0xd800 && high <= 0xdbff) head--;
  const low = s.charCodeAt(tail);
  if (low >= 0xdc00 && low <= 0xdfff) tail++;
  return `${s.slice(0, head)}…${s.slice(tail)}`;
}

/** Most errors one refusal passes on (to the model's re-ask, a task's record, a person). */
export const ERRORS_SHOWN_MAX = 10;

/**
 * `errors` as they are passed on: each cut by {@link clipMiddle}, at most
 * {@link ERRORS_SHOWN_MAX} of them, a last line saying how many more there were. An error can quote
 * model text (a key, a number) of any length: what is fed back stays bounded.
 */
export function shownErrors(errors: readonly string[]): string[] {
  const shown = errors.slice(0, ERRORS_SHOWN_MAX).map(clipMiddle);
  if (errors.length > ERRORS_SHOWN_MAX) shown.push(`… and ${errors.length - ERRORS_SHOWN_MAX} more`);
  return shown;
}

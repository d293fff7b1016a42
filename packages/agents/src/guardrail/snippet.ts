/** Longest before/after snippet a repair record carries, so audit entries stay bounded. */
export const SNIPPET_MAX = 200;

/** `s` cut to {@link SNIPPET_MAX} characters, with an ellipsis when cut. */
export function clip(s: string): string {
  return s.length <= SNIPPET_MAX ? s : `${s.slice(0, SNIPPET_MAX - 1)}…`;
}

// Glob words matched against a list of words, where a lone `*` stands for any run of words: the
// allow command patterns (policy/command-pattern.ts) and the call shapes of standing approvals
// (gate/call-shape.ts) both read their argument lists this way.

import { compileValueGlob, type Matcher } from './value-glob.js';

/** Compiled pattern words: a matcher per word, `null` for a lone `*` (any run of words). */
export type WildcardWords = readonly (Matcher | null)[];

/**
 * Compiles pattern words for {@link matchWildcardWords}. Each word is a glob without backslash
 * escapes (the words arrive de-quoted); a lone `*` matches any run of words, none included.
 */
export function compileWildcardWords(patterns: readonly string[]): WildcardWords {
  return patterns.map((w) => (w === '*' ? null : compileValueGlob(w, false)));
}

/**
 * Whether `words` from index `from` on match `tokens` whole: the two-pointer wildcard match,
 * O(words × tokens), with no backtracking beyond the last `*`.
 */
export function matchWildcardWords(tokens: WildcardWords, words: readonly string[], from = 0): boolean {
  let a = from;
  let t = 0;
  let starT = -1;
  let starA = from;
  while (a < words.length) {
    const tok = tokens[t];
    if (t < tokens.length && tok !== null && tok !== undefined && tok(words[a] as string)) {
      a++;
      t++;
    } else if (t < tokens.length && tok === null) {
      starT = t++;
      starA = a;
    } else if (starT >= 0) {
      t = starT + 1;
      a = ++starA;
    } else return false;
  }
  while (t < tokens.length && tokens[t] === null) t++;
  return t === tokens.length;
}

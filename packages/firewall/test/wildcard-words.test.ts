import { describe, expect, it } from 'vitest';

import { compileWildcardWords, matchWildcardWords } from '../src/wildcard-words.js';

const matches = (patterns: string[], words: string[], from?: number): boolean =>
  matchWildcardWords(compileWildcardWords(patterns), words, from);

describe('matchWildcardWords', () => {
  it('matches word for word, each word a glob', () => {
    expect(matches(['status', '-s*'], ['status', '-sb'])).toBe(true);
    expect(matches(['status'], ['status', '-sb'])).toBe(false);
    expect(matches(['status', '-sb'], ['status'])).toBe(false);
  });

  it('lets a lone * stand for any run of words, none included', () => {
    expect(matches(['log', '*'], ['log'])).toBe(true);
    expect(matches(['log', '*', '--', '*.ts'], ['log', '-n', '3', '--', 'a.ts'])).toBe(true);
    expect(matches(['*', 'x'], ['a', 'x', 'b', 'x'])).toBe(true);
    expect(matches(['*', 'x'], ['a', 'x', 'b'])).toBe(false);
    expect(matches([], [])).toBe(true);
  });

  it('starts at the given index', () => {
    expect(matches(['-la'], ['ls', '-la'], 1)).toBe(true);
    expect(matches(['-la'], ['ls', '-la'])).toBe(false);
  });
});

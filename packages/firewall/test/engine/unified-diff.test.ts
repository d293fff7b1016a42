import { describe, expect, it } from 'vitest';

import { unifiedDiff } from '../../src/engine/unified-diff.js';

describe('unifiedDiff', () => {
  it('shows one changed line with 3 lines of context', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const after = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    expect(unifiedDiff(before, after, '/w/f.txt')).toBe(
      ['--- /w/f.txt', '+++ /w/f.txt', '@@ -2,7 +2,7 @@', ' b', ' c', ' d', '-e', '+E', ' f', ' g', ' h', ''].join(
        '\n',
      ),
    );
  });

  it('splits far-apart changes into hunks and merges close ones', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
    const changed = [...lines];
    changed[1] = 'X2';
    changed[17] = 'X18';
    const d = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, 'f');
    expect(d.split('\n').filter((l) => l.startsWith('@@'))).toEqual(['@@ -1,5 +1,5 @@', '@@ -15,6 +15,6 @@']);
  });

  it('a new file, a removed file, an insertion, and a missing final newline', () => {
    expect(unifiedDiff(null, 'one\ntwo\n', 'n')).toBe('--- /dev/null\n+++ n\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    expect(unifiedDiff('one\n', null, 'n')).toBe('--- n\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-one\n');
    expect(unifiedDiff('a\nc\n', 'a\nb\nc\n', 'n')).toBe('--- n\n+++ n\n@@ -1,2 +1,3 @@\n a\n+b\n c\n');
    expect(unifiedDiff('a\nb\n', 'a\nb', 'n')).toBe(
      '--- n\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n',
    );
    expect(unifiedDiff('same\n', 'same\n', 'n')).toBe('');
  });
});

import { describe, expect, it } from 'vitest';

import {
  appendEntry,
  compressContext,
  type ContextEntryKind,
  type ContextState,
  contextTokens,
  emptyContext,
  estimateTokens,
  restoreCompressed,
} from '../../src/executor/context-window.js';

function history(kinds: ContextEntryKind[], size = 400): ContextState {
  let s = emptyContext();
  kinds.forEach((kind, i) => {
    s = appendEntry(s, { kind, step: i + 1, text: `${kind} ${i + 1} ${'x'.repeat(size)}` });
  });
  return s;
}

describe('estimateTokens', () => {
  it('counts CJK characters one each and other text one per four characters', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens('修复这个文件')).toBe(6);
    expect(estimateTokens('')).toBe(0);
  });
});

describe('compressContext', () => {
  it('leaves a history under budget unchanged', () => {
    const s = history(['step', 'result']);
    expect(compressContext(s, { max_tokens: 10_000 })).toBe(s);
  });

  it('folds ordinary steps first and keeps human decisions and firewall signals longest', () => {
    const s = history(['human', 'step', 'signal', 'result', 'step', 'result', 'step', 'result', 'step', 'result']);
    const c = compressContext(s, { max_tokens: 800, target_tokens: 600, keep_recent: 2 });
    expect(contextTokens(c)).toBeLessThanOrEqual(600);
    const kinds = c.entries.map((e) => e.kind);
    expect(kinds).toContain('human');
    expect(kinds).toContain('signal');
    expect(c.entries.at(-1)!.text).toMatch(/^result 10 /);
    expect(c.archive).toHaveLength(1);
    expect(c.archive[0]!.entries.every((e) => e.kind === 'step' || e.kind === 'result')).toBe(true);
    const digest = c.entries.find((e) => e.block === 'c1')!;
    expect(digest.kind).toBe('note');
    expect(digest.text).toMatch(/^\[history c1 compressed: /);
    expect(digest.text).toContain('only a person can restore it');
  });

  it('folds signals before human decisions when steps are not enough', () => {
    const s = history(['human', 'signal', 'human', 'signal', 'step', 'step']);
    const c = compressContext(s, { max_tokens: 300, target_tokens: 250, keep_recent: 1 });
    const folded = c.archive[0]!.entries.map((e) => e.seq);
    // entries 1–5 are candidates (the newest is kept): both steps and both signals go before any human
    expect(folded).toEqual(expect.arrayContaining([2, 4, 5]));
    expect(c.entries.map((e) => e.kind)).toContain('human');
    const liveHuman = c.entries.filter((e) => e.kind === 'human').length;
    const liveSignal = c.entries.filter((e) => e.kind === 'signal').length;
    expect(liveHuman).toBeGreaterThanOrEqual(liveSignal);
  });

  it('never restores compressed history on its own: appending and compressing again keeps it archived', () => {
    let s = compressContext(history(['step', 'result', 'step', 'result', 'step', 'result']), {
      max_tokens: 400,
      keep_recent: 1,
    });
    const archived = s.archive[0]!.entries.map((e) => e.seq);
    for (let i = 0; i < 5; i++) {
      s = appendEntry(s, { kind: 'step', step: 10 + i, text: 'short' });
      s = compressContext(s, { max_tokens: 100_000 });
    }
    const live = s.entries.map((e) => e.seq);
    for (const seq of archived) expect(live).not.toContain(seq);
    expect(s.archive[0]!.entries.map((e) => e.seq)).toEqual(archived);
  });

  it('restores only with a confirmation (E_FORBIDDEN without), unknown ids are E_NOT_FOUND', () => {
    const before = history(['step', 'result', 'step', 'result', 'step', 'result']);
    const c = compressContext(before, { max_tokens: 400, keep_recent: 1 });
    expect(() => restoreCompressed(c, 'c1', { confirmed: false })).toThrow(
      expect.objectContaining({ code: 'E_FORBIDDEN' }),
    );
    expect(() => restoreCompressed(c, 'c9', { confirmed: true })).toThrow(
      expect.objectContaining({ code: 'E_NOT_FOUND' }),
    );
    const r = restoreCompressed(c, 'c1', { confirmed: true });
    expect(r.entries).toEqual(before.entries);
    expect(r.archive).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';

import { classifyResult, shortenText, summariseResult } from '../../src/executor/result-summary.js';

describe('classifyResult', () => {
  it('classifies outcomes', () => {
    expect(classifyResult({ error: { code: 'E_REJECTED_BY_HUMAN', message: 'no' } })).toBe('failure');
    expect(classifyResult({ result: { exit_code: 1, stdout: '' } })).toBe('failure');
    expect(classifyResult({ result: { exit_code: 0, timed_out: true } })).toBe('failure');
    expect(classifyResult({ result: { exit_code: 0, truncated: true } })).toBe('partial');
    expect(classifyResult({ result: { content: 'abc', eof: false } })).toBe('partial');
    expect(classifyResult({ result: {} })).toBe('irrelevant');
    expect(classifyResult({ result: [] })).toBe('irrelevant');
    expect(classifyResult({ result: null })).toBe('irrelevant');
    expect(classifyResult({ result: { exit_code: 0, stdout: 'ok' } })).toBe('success');
    expect(classifyResult({ result: { path: 'a.txt', bytes: 3 } })).toBe('success');
  });
});

describe('summariseResult', () => {
  it('returns the whole JSON when it fits', () => {
    expect(summariseResult({ result: { path: 'a', bytes: 3 } })).toBe('{"path":"a","bytes":3}');
  });

  it('keeps key fields whole and marks what it shortened (no silent cut)', () => {
    const stdout = `${'line\n'.repeat(2000)}FINAL`;
    const text = summariseResult({ result: { exit_code: 2, stdout, stderr: 'boom', truncated: false } }, 500);
    const o = JSON.parse(text) as Record<string, unknown>;
    expect(o.exit_code).toBe(2);
    expect(o.truncated).toBe(false);
    expect(o.stderr).toBe('boom');
    expect(o.stdout).toMatch(/chars omitted/);
    expect(o.stdout).toMatch(/FINAL$/);
    expect(text.length).toBeLessThan(800);
  });

  it('shortens long arrays with a count of the items left out', () => {
    const entries = Array.from({ length: 500 }, (_, i) => ({ name: `file-${i}.txt`, type: 'file' }));
    const o = JSON.parse(summariseResult({ result: { path: '.', entries, total: 500 } }, 600)) as {
      entries: unknown[];
      total: number;
    };
    expect(o.total).toBe(500);
    expect(String(o.entries.at(-1))).toMatch(/^…\[\d+ more items\]$/);
  });

  it('keeps the error code and message', () => {
    expect(summariseResult({ error: { code: 'E_REJECTED_BY_HUMAN', message: 'rejected: wrong file' } })).toBe(
      'error E_REJECTED_BY_HUMAN: rejected: wrong file',
    );
  });

  it('shortenText keeps head and tail around a counted marker', () => {
    const s = shortenText('a'.repeat(100) + 'Z', 60);
    expect(s.length).toBeLessThanOrEqual(60);
    expect(s).toMatch(/^a+ …\[\d+ chars omitted\]… a*Z$/);
  });
});

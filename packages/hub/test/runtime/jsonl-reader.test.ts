import { describe, expect, it } from 'vitest';

import { LineReader } from '../../src/runtime/jsonl-reader.js';

function reader(max: number) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const r = new LineReader(
    max,
    (l) => lines.push(l),
    (n) => oversize.push(n),
  );
  return { r, lines, oversize };
}

const b = (s: string) => Buffer.from(s, 'utf8');

describe('LineReader', () => {
  it('splits lines within and across chunks, dropping a trailing \\r', () => {
    const { r, lines } = reader(100);
    r.push(b('one\ntw'));
    r.push(b('o\r\nthr'));
    r.push(b('e'));
    r.push(b('e\n\n'));
    expect(lines).toEqual(['one', 'two', 'three', '']);
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const { r, lines } = reader(100);
    const all = b('héllo → wörld\n');
    r.push(all.subarray(0, 2));
    r.push(all.subarray(2, 11));
    r.push(all.subarray(11));
    expect(lines).toEqual(['héllo → wörld']);
  });

  it('discards an over-long line up to its newline and reports its size once', () => {
    const { r, lines, oversize } = reader(10);
    r.push(b('short\n' + 'x'.repeat(7)));
    r.push(b('y'.repeat(20)));
    r.push(b('z'.repeat(3) + '\nafter\n'));
    expect(lines).toEqual(['short', 'after']);
    expect(oversize).toEqual([30]);
  });

  it('discards an over-long line that arrives in one chunk', () => {
    const { r, lines, oversize } = reader(4);
    r.push(b('12345\n1234\n'));
    expect(lines).toEqual(['1234']);
    expect(oversize).toEqual([5]);
  });

  it('delivers a last line without newline at end, or reports it when over-long', () => {
    const a = reader(10);
    a.r.push(b('tail'));
    a.r.end();
    expect(a.lines).toEqual(['tail']);
    const c = reader(3);
    c.r.push(b('toolong'));
    c.r.end();
    expect(c.lines).toEqual([]);
    expect(c.oversize).toEqual([7]);
  });
});

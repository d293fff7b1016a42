import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { jsonErrorPosition } from '@finger/protocol';

describe('jsonErrorPosition', () => {
  it('returns -1 for any valid JSON', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => jsonErrorPosition(JSON.stringify(v, null, 1)) === -1));
  });
  it('agrees with JSON.parse on validity', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        let ok = true;
        try {
          JSON.parse(s);
        } catch {
          ok = false;
        }
        return (jsonErrorPosition(s) === -1) === ok;
      }),
    );
  });
  it.each([
    ['{"text": }', 9],
    ['{"a":', 5],
    ['{"a" 1}', 5],
    ['[1,2,]', 5],
    ['{"a":tru}', 8],
    ['{"a":1} x', 8],
    ['"abc', 4],
    ['{a:1}', 1],
    ['-', 1],
  ])('points at the first bad character of %s', (text, pos) => {
    expect(jsonErrorPosition(text)).toBe(pos);
  });
});

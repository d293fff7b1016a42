import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { describeJsonSyntax, jsonErrorPosition, jsonSyntaxProblem } from '@finger/protocol';

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

describe('jsonSyntaxProblem (start-up errors name the line and column, not the echoed text)', () => {
  const parseError = (text: string): unknown => {
    try {
      JSON.parse(text);
    } catch (e) {
      return e;
    }
    throw new Error('valid');
  };
  it.each([
    ['{\n  "a": 1,\n  "b": x\n}\n', { position: 19, line: 3, column: 8, reason: "Unexpected token 'x'" }],
    [
      '{"a": 1',
      { position: 7, line: 1, column: 8, reason: expect.stringMatching(/^Expected ',' or '}' after property value/) },
    ],
    ['', { position: 0, line: 1, column: 1, reason: 'Unexpected end of JSON input' }],
    ['[1]\n x', { position: 5, line: 2, column: 2, reason: 'Unexpected non-whitespace character after JSON' }],
  ])('%j', (text, want) => {
    expect(jsonSyntaxProblem(text, parseError(text))).toEqual(want);
  });
  it('describes it on one line', () => {
    const text = '{"rules": [,]}';
    expect(describeJsonSyntax(text, parseError(text))).toBe("line 1 column 12: Unexpected token ','");
  });
});

import { createHash } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { canonicalJson, digestOf, sha256Hex } from '../../src/audit/canonical-json.js';

/** A deep copy of `v` whose object keys are inserted in an order shuffled by `seed`. */
function shuffleKeys(v: unknown, seed: { s: number }): unknown {
  if (Array.isArray(v)) return v.map((x) => shuffleKeys(x, seed));
  if (v === null || typeof v !== 'object') return v;
  const keys = Object.keys(v);
  for (let i = keys.length - 1; i > 0; i--) {
    seed.s = (Math.imul(seed.s, 1103515245) + 12345) >>> 0;
    const j = seed.s % (i + 1);
    [keys[i], keys[j]] = [keys[j] as string, keys[i] as string];
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    Object.defineProperty(out, k, {
      value: shuffleKeys((v as Record<string, unknown>)[k], seed),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** `v` with -0 replaced by 0: JSON has one zero (JSON.stringify(-0) is "0"), fc.jsonValue() makes both. */
function zeroNormalized(v: unknown): unknown {
  if (Object.is(v, -0)) return 0;
  if (Array.isArray(v)) return v.map(zeroNormalized);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    Object.defineProperty(out, k, { value: zeroNormalized(x), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

describe('canonicalJson', () => {
  it('sorts keys recursively and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [3, { d: null, c: 'x y' }], ä: true })).toBe(
      '{"a":[3,{"c":"x y","d":null}],"b":1,"ä":true}',
    );
  });

  it('sorts integer-like keys as strings, not in JS property order', () => {
    expect(canonicalJson({ b: 1, 10: 2, 9: 3 })).toBe('{"10":2,"9":3,"b":1}');
  });

  it('follows JSON.stringify for values JSON cannot hold', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, NaN, Infinity], d: new Date(0) })).toBe(
      '{"c":[null,null,null],"d":"1970-01-01T00:00:00.000Z"}',
    );
    expect(canonicalJson('a"\n\u2028')).toBe(JSON.stringify('a"\n\u2028'));
  });

  it('throws a TypeError for a BigInt, a cycle or a top-level undefined', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
  });

  it('gives equal strings for equal values with different key orders (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (x, s) => {
        const y = shuffleKeys(x, { s: s >>> 0 });
        expect(y).toEqual(x);
        expect(canonicalJson(y)).toBe(canonicalJson(x));
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips: JSON.parse(canonicalJson(x)) deep-equals x (-0 read back as 0), and is a fixed point (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (x) => {
        const text = canonicalJson(x);
        expect(JSON.parse(text)).toEqual(zeroNormalized(x));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with JSON.stringify on values without objects (property)', () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(leaf), (x) => {
        expect(canonicalJson(x)).toBe(JSON.stringify(x));
      }),
    );
  });
});

describe('digestOf / sha256Hex', () => {
  it('is sha256 hex of the canonical JSON, independent of key order', () => {
    const expected = createHash('sha256').update('{"a":1,"b":"s"}').digest('hex');
    expect(digestOf({ b: 's', a: 1 })).toBe(expected);
    expect(digestOf({ a: 1, b: 's' })).toBe(expected);
    expect(sha256Hex('{"a":1,', '"b":"s"}')).toBe(expected);
  });
});

import { createHash } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { argsKey, payloadDigest } from '../src/payload-key.js';

/** Canonical JSON of JSON values, written plainly: the reference of what the keys are made of. */
function recursiveCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : recursiveCanonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${recursiveCanonicalJson(obj[k])}`).join(',')}}`;
}

describe('payloadDigest / argsKey', () => {
  it('deep JSON: a payload nested 2,500 (or 100,000) levels is digested, not a RangeError', () => {
    for (const depth of [2500, 100_000]) {
      const deep: unknown = JSON.parse(`${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`);
      expect(payloadDigest(deep)).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
  });

  it('argsKey is the canonical JSON when short, else its sha256 — whatever path computed it', () => {
    const expected = (v: unknown) => {
      const c = recursiveCanonicalJson(v ?? null);
      return c.length <= 160 ? c : `sha256:${createHash('sha256').update(c).digest('hex')}`;
    };
    const primitive = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), primitive, { maxKeys: 10 })), (v) => {
        expect(argsKey(v)).toBe(expected(v));
      }),
      { seed: 27, numRuns: 500 },
    );
    // the flat path: sorted keys of primitives; integer-like keys, unsorted keys, NaN fall back
    for (const v of [{ a: 1, b: 'x', c: null }, { b: 1, a: 2 }, { 2: 'x', 10: 'y' }, { a: Number.NaN }, { a: -0 }])
      expect(argsKey(v)).toBe(expected(v));
    expect(argsKey({ t: 'x'.repeat(200) })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

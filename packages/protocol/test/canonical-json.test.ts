import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { canonicalJson, jsonString } from '../src/canonical-json.js';

/**
 * The audit log's canonicalJson before issue 26 item 3 (packages/firewall/src/audit/canonical-json.ts),
 * kept as the reference of the bytes the audit chain hashes: every existing log was written with it.
 */
function auditCanonicalJson(value: unknown): string {
  const out = write(value, '', []);
  if (out === undefined) throw new TypeError(`canonicalJson: ${typeof value} is not JSON-serializable`);
  return out;
}

/** Serializes one value; undefined means "omit" (as JSON.stringify does for properties). */
function write(value: unknown, key: string, ancestors: object[]): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalJson: a BigInt is not JSON-serializable');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (ancestors.includes(obj)) throw new TypeError('canonicalJson: the value contains a cycle');
  ancestors.push(obj);
  let out: string;
  if (Array.isArray(obj)) {
    const items: string[] = [];
    for (let i = 0; i < obj.length; i++) items.push(write(obj[i], String(i), ancestors) ?? 'null');
    out = `[${items.join(',')}]`;
  } else if (obj instanceof String || obj instanceof Number || obj instanceof Boolean) {
    out = write(obj.valueOf(), key, ancestors) ?? 'null';
  } else {
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(record).sort()) {
      const v = write(record[k], k, ancestors);
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${v}`);
    }
    out = `{${parts.join(',')}}`;
  }
  ancestors.pop();
  return out;
}

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

/** JSON values, the `odd` leaves among them, nested in arrays and objects (small depth). */
function treeOf(odd: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue(),
      odd,
      fc.array(tie('node')),
      fc.dictionary(fc.string(), tie('node')),
    ),
  })).node;
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

  it('deep JSON: a value nested 2,500 (or 100,000) levels is written, not a RangeError (the stack walker)', () => {
    for (const depth of [2500, 100_000]) {
      const text = `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    }
    // past the fast path's depth the walker writes the same bytes, toJSON and omissions included
    const nested = (depth: number): unknown => {
      let v: unknown = {
        z: [undefined, () => 1, new Date(0), new Number(2), Number.NaN],
        a: undefined,
        s: Symbol('x'),
      };
      for (let i = 0; i < depth; i++) v = { b: [v], a: i };
      return v;
    };
    expect(canonicalJson(nested(200))).toBe(auditCanonicalJson(nested(200)));
  });

  it('throws a TypeError on a cycle however deep it starts, and not on an object shared side by side', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = [a];
    expect(() => canonicalJson(a)).toThrow(new TypeError('canonicalJson: the value contains a cycle'));
    let deep: Record<string, unknown> = a;
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(() => canonicalJson(deep)).toThrow(new TypeError('canonicalJson: the value contains a cycle'));
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });

  it('a toJSON() that returns a new object holding itself ends in a RangeError, not a hang', () => {
    const endless = {
      toJSON(): unknown {
        return { again: endless, n: 1 };
      },
    };
    expect(() => canonicalJson(endless)).toThrow(RangeError);
  });

  it("writes the audit log's bytes: the same text as the recursive form the audit hashed before issue 26 (property)", () => {
    // values JSON cannot hold as well as JSON ones: the audit's rewriting rules must not change
    const odd = fc.oneof(
      fc.constant(undefined),
      fc.constant(Number.NaN),
      fc.constant(-Infinity),
      fc.constant(() => 1),
      fc.constant(new Date(0)),
      fc.constant(new String('boxed')),
      fc.constant(new Number(-0)),
      fc.constant(new Boolean(false)),
    );
    const value = treeOf(odd);
    fc.assert(
      fc.property(value, (v) => {
        let expected: string | Error;
        try {
          expected = auditCanonicalJson(v);
        } catch (e) {
          expected = e as Error;
        }
        if (typeof expected === 'string') expect(canonicalJson(v)).toBe(expected);
        else expect(() => canonicalJson(v)).toThrow(expected.constructor as new () => Error);
      }),
      { seed: 26, numRuns: 500 },
    );
  });

  it('orders keys by UTF-16 code units whatever their number (the few-keys sort and sort() past 16 agree) (property)', () => {
    const key = fc.oneof(fc.string({ unit: 'binary', maxLength: 4 }), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(fc.dictionary(key, fc.integer(), { maxKeys: 40 }), (o) => {
        expect(canonicalJson(o)).toBe(auditCanonicalJson(o));
      }),
      { seed: 27, numRuns: 1000 },
    );
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [String.fromCharCode(0xffff - i * 997), i]));
    expect(Object.keys(JSON.parse(canonicalJson(many)) as object)).toEqual(Object.keys(many).sort());
  });

  it('writes frozen objects as it writes any other, however often, remembering only what cannot change (property)', () => {
    const deepFreeze = (x: unknown): unknown => {
      if (x !== null && typeof x === 'object') {
        for (const v of Object.values(x)) deepFreeze(v);
        Object.freeze(x);
      }
      return x;
    };
    const odd = fc.oneof(
      fc.constant(undefined),
      fc.constant(Number.NaN),
      fc.constant(-0),
      fc.constant(() => 1),
    );
    const value = treeOf(odd);
    fc.assert(
      fc.property(value, (v) => {
        const frozen = deepFreeze(v);
        // inside an object, so a top-level value JSON cannot hold is only omitted
        const wrapped = { a: frozen, b: [frozen] };
        const expected = auditCanonicalJson(wrapped);
        expect(canonicalJson(wrapped)).toBe(expected);
        expect(canonicalJson(wrapped)).toBe(expected);
        expect(canonicalJson([frozen, frozen])).toBe(auditCanonicalJson([frozen, frozen]));
      }),
      { seed: 28, numRuns: 500 },
    );
    // a frozen object's getter may answer differently, and a frozen object's nested one may change
    let n = 0;
    const ticking = Object.freeze(
      Object.defineProperty({ b: 1 }, 'a', { enumerable: true, get: () => ++n }) as Record<string, unknown>,
    );
    expect(canonicalJson(ticking)).toBe('{"a":1,"b":1}');
    expect(canonicalJson(ticking)).toBe('{"a":2,"b":1}');
    const inner = { x: 1 };
    const outer = Object.freeze({ inner, y: 'y' });
    expect(canonicalJson(outer)).toBe('{"inner":{"x":1},"y":"y"}');
    inner.x = 2;
    expect(canonicalJson(outer)).toBe('{"inner":{"x":2},"y":"y"}');
    // a leaf-only frozen object keeps its text; a non-frozen one with the same members is written anew
    const rule = Object.freeze({ source: 'builtin', id: 'r', level: 'AUTO', reason: 'why "quoted"' });
    const copy: Record<string, unknown> = { ...rule };
    expect(canonicalJson([rule, rule])).toBe(auditCanonicalJson([rule, rule]));
    copy.level = 'DENY';
    expect(canonicalJson(copy)).toBe('{"id":"r","level":"DENY","reason":"why \\"quoted\\"","source":"builtin"}');
  });

  it('writes member names the same once they are remembered, past the 1,024 it keeps, escaped or longer than 64', () => {
    // the same objects written twice: the second time their names come from the remembered texts
    const names = [
      ...Array.from({ length: 2_500 }, (_, i) => `k${i}`),
      'quote"d',
      'back\\slash',
      'line\nbreak',
      '\ud800lone',
      'x'.repeat(64),
      'y'.repeat(65),
      '',
    ];
    const objects = names.map((n, i) => ({ [n]: i, z: { [n]: [n] } }));
    for (let round = 0; round < 2; round++)
      for (const o of objects) expect(canonicalJson(o)).toBe(auditCanonicalJson(o));
  });
});

describe('jsonString', () => {
  it('is JSON.stringify of a string: quotes, backslashes, control characters, lone and paired surrogates', () => {
    for (const s of [
      '',
      'plain text',
      'a"b',
      'a\\b',
      'line\nbreak',
      '\u0000\u001f\u007f',
      '\ud800',
      'x\udfffy',
      '😀',
      'é',
    ])
      expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('agrees with JSON.stringify on any string of UTF-16 code units (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' }), fc.string()), (s) => {
        expect(jsonString(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 2000 },
    );
  });
});

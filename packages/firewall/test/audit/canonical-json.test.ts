import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { canonicalJson as protocolCanonicalJson } from '@finger/protocol';

import { canonicalJson, digestOf, sha256Hex } from '../../src/audit/canonical-json.js';

// canonicalJson itself is tested in packages/protocol/test/canonical-json.test.ts (against the
// audit's former implementation, so existing logs keep their hashes).

describe('canonicalJson', () => {
  it("is @finger/protocol's, the one canonical JSON", () => {
    expect(canonicalJson).toBe(protocolCanonicalJson);
  });
});

describe('digestOf / sha256Hex', () => {
  it('is sha256 hex of the canonical JSON, independent of key order', () => {
    const expected = createHash('sha256').update('{"a":1,"b":"s"}').digest('hex');
    expect(digestOf({ b: 's', a: 1 })).toBe(expected);
    expect(digestOf({ a: 1, b: 's' })).toBe(expected);
    expect(sha256Hex('{"a":1,', '"b":"s"}')).toBe(expected);
  });

  it('throws a TypeError for a value canonical JSON cannot write', () => {
    expect(() => digestOf(undefined)).toThrow(new TypeError('canonicalJson: undefined is not JSON-serializable'));
    expect(() => digestOf({ n: 1n })).toThrow(new TypeError('canonicalJson: a BigInt is not JSON-serializable'));
  });
});

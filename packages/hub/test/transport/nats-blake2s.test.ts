import { describe, expect, it } from 'vitest';

import { Blake2sKeyed } from '../../src/transport/nats-blake2s.js';

const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256));

/** Known answers of keyed BLAKE2s-256 (RFC 7693), from Python's `hashlib.blake2s(message, key=key)`. */
const KEY_0_31: [number, string][] = [
  [0, '48a8997da407876b3d79c0d92325ad3b89cbb754d86ab71aee047ad345fd2c49'],
  [1, '40d15fee7c328830166ac3f918650f807e7e01e177258cdc0a39b11f598066f1'],
  [55, '5699a0bf8e776cbaff3c784ba7aec7924544c7654df003723857f97a81e4a4f2'],
  [63, 'e8fba31ed5393a5e363906877eacd603d5638507ea869938a0e9e0cd6b0268b4'],
  [64, 'c49987ad12107bd32069af8109faff510026bcc0a12ea8f4d011df8feb59da12'],
  [65, '5635827e6920e08671db337b778fa5efdb2a619adf736904335fb03e236ca386'],
  [127, '46bc5458f5eca9a262a1acedf296532526d22ccfaacdd191bed5c750a1df4d1e'],
  [128, 'e2bc05761359e01acb2267f6920025592a19cb709ab83a978233c493c23584e8'],
  [129, '91fd2f07b1f26bf0467228971baf37123bc0aba824b12b4a7016b2d13cc3b202'],
  [200, 'bb92cc4c381245c0a42e595e9e27280caae4d90d6ae737abbcc3cb984d956cc0'],
  [320, 'a8ee4060d3b7d29261bcdf49a84ffa9258d527fd760e901f8b1a8b34c29c43b5'],
  [384, 'e29618fc1c3f4e13104a4d3ca889118d190bafddaa67256cd046e323bfa48a95'],
];
const KEY_K: [number, string][] = [
  [3, '4f491f6d78387965c120f2534618127073be3e82c3b28e0db1f6bc38aa2761fb'],
  [100, 'b12c5d1fc73e5b3b49540dc80e9e1b88c49b3b0c62cc38dc245df57482f93727'],
];

function digest(b: Blake2sKeyed, prefix: string, body: Uint8Array, start = 0, end = body.length): string {
  const out = Buffer.alloc(32);
  b.digestInto(prefix, body, start, end, out, 0);
  return out.toString('hex');
}

describe('Blake2sKeyed', () => {
  it('gives the known answers for a 32-byte key, from an empty message to 384 bytes', () => {
    const b = new Blake2sKeyed(Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 384);
    for (const [n, want] of KEY_0_31) expect(digest(b, '', bytes(n)), `${n} bytes`).toBe(want);
  });

  it('gives the known answers for a 1-byte key', () => {
    const b = new Blake2sKeyed(Buffer.from('k'), 384);
    for (const [n, want] of KEY_K) expect(digest(b, '', bytes(n)), `${n} bytes`).toBe(want);
  });

  it('hashes prefix ‖ body[start, end) as one message, and again the same after other messages', () => {
    const b = new Blake2sKeyed(Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 384);
    const m = bytes(200);
    const prefix = m.toString('latin1', 0, 13);
    const framed = Buffer.concat([Buffer.from('junk'), m.subarray(13), Buffer.from('tail')]);
    const want = KEY_0_31.find(([n]) => n === 200)![1];
    expect(digest(b, prefix, framed, 4, 4 + 187)).toBe(want);
    digest(b, 'other', bytes(300));
    expect(digest(b, prefix, framed, 4, 4 + 187)).toBe(want);
  });

  it('refuses keys of 0 or more than 32 bytes and messages over its maximum', () => {
    expect(() => new Blake2sKeyed(Buffer.alloc(0), 64)).toThrow('1 to 32 bytes');
    expect(() => new Blake2sKeyed(Buffer.alloc(33), 64)).toThrow('1 to 32 bytes');
    const b = new Blake2sKeyed(Buffer.from('k'), 64);
    expect(() => digest(b, 'x', bytes(64))).toThrow(RangeError);
  });
});

import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { FrameKey, MAC_LEN, signingHeader } from '../../src/transport/nats-mac.js';

const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256));
const KEY = 'cluster-key-for-unit-tests-0001';
const HEADER = signingHeader('FW6', 'c', 'request', 'd1', '1764000000000', 'finger.t.call.fs');

describe('FrameKey', () => {
  it("is node:crypto's HMAC-SHA256 over the signing header and the body, the whole tag in base64url", () => {
    expect(HEADER).toBe('FW6\nc\nrequest\nd1\n1764000000000\nfinger.t.call.fs\n');
    const key = new FrameKey('c', KEY);
    for (const n of [0, 1, 63, 64, 200, 8192, 20_000]) {
      const want = createHmac('sha256', KEY).update(HEADER, 'latin1').update(bytes(n)).digest('base64url');
      expect(want).toHaveLength(MAC_LEN);
      expect(key.mac(HEADER, bytes(n)).toString('latin1'), `${n} bytes`).toBe(want);
    }
    // a range of a larger buffer is the MAC of that range
    const frame = Buffer.concat([Buffer.from('line\n'), bytes(300)]);
    expect(key.mac(HEADER, frame, 5, frame.length)).toEqual(key.mac(HEADER, bytes(300)));
  });

  it('verifies only the exact MAC: another key, header, body or a cut or lengthened tag fails', () => {
    const key = new FrameKey('c', KEY);
    const body = bytes(170);
    const sig = key.mac(HEADER, body);
    expect(key.verify(HEADER, body, 0, body.length, sig, 0, MAC_LEN)).toBe(true);
    // the tag read in place, inside a larger buffer
    const framed = Buffer.concat([Buffer.from('xx '), sig, Buffer.from(' yy')]);
    expect(key.verify(HEADER, body, 0, body.length, framed, 3, MAC_LEN)).toBe(true);
    expect(new FrameKey('c', 'another-key').verify(HEADER, body, 0, body.length, sig, 0, MAC_LEN)).toBe(false);
    const otherSubject = signingHeader('FW6', 'c', 'request', 'd1', '1764000000000', 'finger.t.call.git');
    expect(key.verify(otherSubject, body, 0, body.length, sig, 0, MAC_LEN)).toBe(false);
    const changed = Buffer.from(body);
    changed[100] = changed[100]! ^ 1;
    expect(key.verify(HEADER, changed, 0, changed.length, sig, 0, MAC_LEN)).toBe(false);
    expect(key.verify(HEADER, body, 0, body.length, sig, 0, MAC_LEN - 1)).toBe(false);
    expect(key.verify(HEADER, body, 0, body.length, Buffer.concat([sig, Buffer.from('A')]), 0, MAC_LEN + 1)).toBe(
      false,
    );
    const flipped = Buffer.from(sig);
    flipped[MAC_LEN - 1] = flipped[MAC_LEN - 1] === 0x41 ? 0x42 : 0x41;
    expect(key.verify(HEADER, body, 0, body.length, flipped, 0, MAC_LEN)).toBe(false);
  });
});

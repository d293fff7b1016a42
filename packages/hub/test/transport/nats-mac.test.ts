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
      expect(key.mac(HEADER, bytes(n)), `${n} bytes`).toBe(want);
    }
    // a range of a larger buffer is the MAC of that range
    const frame = Buffer.concat([Buffer.from('line\n'), bytes(300)]);
    expect(key.mac(HEADER, frame, 5, frame.length)).toBe(key.mac(HEADER, bytes(300)));
  });

  it('writes the tag into a frame at an offset, touching nothing else', () => {
    const key = new FrameKey('c', KEY);
    const body = bytes(170);
    const out = Buffer.alloc(10 + MAC_LEN + 2 + body.length, 0x2e);
    body.copy(out, 12 + MAC_LEN);
    key.macInto(HEADER, out, 12 + MAC_LEN, out.length, out, 10);
    expect(out.toString('latin1', 10, 10 + MAC_LEN)).toBe(key.mac(HEADER, body));
    expect(out.toString('latin1', 0, 10)).toBe('.'.repeat(10));
    expect(out.toString('latin1', 10 + MAC_LEN, 12 + MAC_LEN)).toBe('..');
    expect(out.subarray(12 + MAC_LEN)).toEqual(body);
  });

  it('verifies only the exact MAC: another key, header, body or a cut or lengthened tag fails', () => {
    const key = new FrameKey('c', KEY);
    const body = bytes(170);
    const sig = Buffer.from(key.mac(HEADER, body), 'latin1');
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
    // the tag is compared as text: another spelling of the same 32 bytes (the last character's
    // two spare bits set) is no valid tag
    const last = sig[MAC_LEN - 1]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = Buffer.from(sig);
    respelled[MAC_LEN - 1] = alphabet.charCodeAt(alphabet.indexOf(String.fromCharCode(last)) | 1);
    expect(Buffer.from(respelled.toString('latin1'), 'base64url')).toEqual(
      Buffer.from(sig.toString('latin1'), 'base64url'),
    );
    expect(key.verify(HEADER, body, 0, body.length, respelled, 0, MAC_LEN)).toBe(false);
    // a check after a failed one is not affected by it (the expected tag's buffer is reused)
    expect(key.verify(HEADER, body, 0, body.length, sig, 0, MAC_LEN)).toBe(true);
  });
});

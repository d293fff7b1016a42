import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { FrameMac, SIG_LEN, SMALL } from '../../src/transport/nats-mac.js';

const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256));

/**
 * Messages of up to 384 bytes: base64url of keyed BLAKE2s-256 under HMAC-SHA256(key,
 * "finger-frame-blake2s-v1"), from Python (`hashlib.blake2s(b"request\nd1\n" + body, key=k)`)
 * for the key "cluster-key-for-unit-tests-0001".
 */
const SMALL_ANSWERS: [number, string][] = [
  [0, 'rKGV8LEyWJSRLFoqn29zh91rh1F5SUbeJB6XaokYvB0'],
  [1, 'vP_QVpezmywgpeRf_qaa_XQBq_5bvoCtjNVEAF3wXro'],
  [55, 'J7ipi3u0gMGnwqZDLX5vFrIJVFcZXtzhdE26Khp-c-U'],
  [200, 'v-ePtmlvt1RJdmpdkO-61j0TTrwUXpIKh_Hw_2kYn90'],
  [373, 'ORH4b9bNMeq46q4_gp5vgmYx2-sTXtC4L0bFsu9lTl0'],
];

describe('FrameMac', () => {
  it('signs messages of up to 384 bytes with keyed BLAKE2s under the derived key (known answers)', () => {
    const mac = new FrameMac(Buffer.from('cluster-key-for-unit-tests-0001'));
    // a signature is the first 22 characters (132 bits) of the MAC's base64url
    expect(SIG_LEN).toBe(22);
    for (const [n, full] of SMALL_ANSWERS)
      expect(mac.sign('request\nd1\n', bytes(n)), `${n} bytes`).toBe(full.slice(0, SIG_LEN));
    expect('request\nd1\n'.length + 373).toBe(SMALL);
  });

  it('equals createHmac above 384 bytes for short, block-sized and long keys', () => {
    const keys = ['k', 'cluster-key-for-unit-tests-0001', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(300)];
    const bodies = [374, 400, 8000, 8192, 20_000].map(bytes);
    for (const key of keys) {
      const mac = new FrameMac(Buffer.from(key));
      for (const body of bodies) {
        const full = createHmac('sha256', key).update('request\nd1\n', 'latin1').update(body).digest('base64url');
        expect(mac.sign('request\nd1\n', body)).toBe(full.slice(0, SIG_LEN));
      }
    }
  });

  it('gives different small-message signatures under different keys, short and long', () => {
    const keys = ['k', 'cluster-key-for-unit-tests-0001', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(300)];
    const sigs = new Set(keys.map((k) => new FrameMac(Buffer.from(k)).sign('request\nd1\n', bytes(100))));
    expect(sigs.size).toBe(keys.length);
  });

  it('writes the signature into a buffer and verifies it in place, around the small-message limit', () => {
    const key = 'cluster-key-for-unit-tests-0001';
    const mac = new FrameMac(Buffer.from(key));
    const prefix = 'reply\nd1\n'; // 9 bytes: 375 body bytes are the last small message
    for (const n of [0, 55, 374, 375, 376, 1000]) {
      const frame = Buffer.from(`junk${'b'.repeat(n)}tail`);
      const body = frame.subarray(4, 4 + n);
      const want =
        n <= 375
          ? mac.sign(prefix, Buffer.from(body))
          : createHmac('sha256', key).update(prefix, 'latin1').update(body).digest('base64url').slice(0, SIG_LEN);
      const out = Buffer.alloc(50, 0x2e);
      mac.signInto(prefix, frame, 4, 4 + n, out, 3);
      expect(out.toString('latin1')).toBe(`...${want}${'.'.repeat(50 - 3 - SIG_LEN)}`);
      expect(mac.verify(prefix, frame, 4, 4 + n, out, 3, SIG_LEN)).toBe(true);
      // one character off anywhere, or the wrong length, fails
      for (const at of [3, 14, 24]) {
        const bad = Buffer.from(out);
        bad[at] = bad[at] === 0x41 ? 0x42 : 0x41;
        expect(mac.verify(prefix, frame, 4, 4 + n, bad, 3, SIG_LEN)).toBe(false);
      }
      expect(mac.verify(prefix, frame, 4, 4 + n, out, 3, SIG_LEN - 1)).toBe(false);
      if (n > 0) expect(mac.verify(prefix, frame, 5, 4 + n, out, 3, SIG_LEN)).toBe(false); // a byte less of the body
      expect(mac.verify('reply\nd2\n', frame, 4, 4 + n, out, 3, SIG_LEN)).toBe(false); // another prefix
    }
  });

  it('gives the same result when called again (the scratch buffer leaves nothing behind)', () => {
    const mac = new FrameMac(Buffer.from('cluster-key-for-unit-tests-0001'));
    const a = mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'));
    mac.sign('reply\nd1\n', Buffer.from('other'));
    expect(mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'))).toBe(a);
  });
});

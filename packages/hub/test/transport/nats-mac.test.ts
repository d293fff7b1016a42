import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { Sha256Mac } from '../../src/transport/nats-mac.js';

describe('Sha256Mac', () => {
  it('equals createHmac for short, block-sized and long keys, and small and large bodies', () => {
    const keys = ['k', 'cluster-key-for-unit-tests-0001', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(300)];
    const bodies = [0, 1, 44, 45, 53, 55, 64, 119, 120, 372, 373, 374, 400, 8000, 8192, 20_000].map((n) =>
      Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256)),
    );
    for (const key of keys) {
      const mac = new Sha256Mac(Buffer.from(key));
      for (const body of bodies) {
        const want = createHmac('sha256', key).update('request\nd1\n', 'latin1').update(body).digest('base64url');
        expect(mac.sign('request\nd1\n', body)).toBe(want);
      }
    }
  });

  it('writes the signature into a buffer and verifies it in place, around the small-message limit', () => {
    const key = 'cluster-key-for-unit-tests-0001';
    const mac = new Sha256Mac(Buffer.from(key));
    const prefix = 'reply\nd1\n'; // 9 bytes: 375 body bytes are the last small message
    for (const n of [0, 55, 374, 375, 376, 1000]) {
      const frame = Buffer.from(`junk${'b'.repeat(n)}tail`);
      const want = createHmac('sha256', key)
        .update(prefix, 'latin1')
        .update(frame.subarray(4, 4 + n))
        .digest('base64url');
      const out = Buffer.alloc(50, 0x2e);
      mac.signInto(prefix, frame, 4, 4 + n, out, 3);
      expect(out.toString('latin1')).toBe(`...${want}....`);
      expect(mac.verify(prefix, frame, 4, 4 + n, out, 3, 43)).toBe(true);
      // one character off anywhere, or the wrong length, fails
      for (const at of [3, 20, 45]) {
        const bad = Buffer.from(out);
        bad[at] = bad[at] === 0x41 ? 0x42 : 0x41;
        expect(mac.verify(prefix, frame, 4, 4 + n, bad, 3, 43)).toBe(false);
      }
      expect(mac.verify(prefix, frame, 4, 4 + n, out, 3, 42)).toBe(false);
      if (n > 0) expect(mac.verify(prefix, frame, 5, 4 + n, out, 3, 43)).toBe(false); // a byte less of the body
    }
  });

  it('gives the same result when called again (the scratch buffer leaves nothing behind)', () => {
    const mac = new Sha256Mac(Buffer.from('cluster-key-for-unit-tests-0001'));
    const a = mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'));
    mac.sign('reply\nd1\n', Buffer.from('other'));
    expect(mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'))).toBe(a);
  });
});

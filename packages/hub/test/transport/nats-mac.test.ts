import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { Sha256Mac } from '../../src/transport/nats-mac.js';

describe('Sha256Mac', () => {
  it('equals createHmac for short, block-sized and long keys, and small and large bodies', () => {
    const keys = ['k', 'cluster-key-for-unit-tests-0001', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(300)];
    const bodies = [0, 1, 55, 64, 400, 8000, 8192, 20_000].map((n) =>
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

  it('gives the same result when called again (the scratch buffer leaves nothing behind)', () => {
    const mac = new Sha256Mac(Buffer.from('cluster-key-for-unit-tests-0001'));
    const a = mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'));
    mac.sign('reply\nd1\n', Buffer.from('other'));
    expect(mac.sign('reply\nd1\n', Buffer.from('{"long":"' + 'x'.repeat(500) + '"}'))).toBe(a);
  });
});

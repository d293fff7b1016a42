import { describe, expect, it } from 'vitest';

import { firstBytes, freePort, hostPort, serviceUrlForTests } from '../src/services.js';

describe('serviceUrlForTests', () => {
  it('returns the default URL when its probe answers', async () => {
    const url = await serviceUrlForTests({
      name: 'probe-yes',
      envVar: 'FINGER_TEST_PROBE_YES_URL',
      defaultUrl: 'tcp://127.0.0.1:1',
      probe: async () => true,
    });
    expect(url).toBe('tcp://127.0.0.1:1');
  });

  const missing = (name: string) => ({
    name,
    envVar: 'FINGER_TEST_PROBE_NO_URL',
    defaultUrl: 'tcp://127.0.0.1:1',
    probe: async () => false,
    start: async () => undefined,
  });

  it('falls back to start() and then reports undefined with a SKIPPED banner (to its reporter, not the run)', async () => {
    const banners: string[] = [];
    expect(await serviceUrlForTests(missing('probe-no'), { env: {}, warn: (b) => banners.push(b) })).toBeUndefined();
    const bar = '!'.repeat(78);
    expect(banners).toEqual([
      `\n${bar}\n!! SKIPPED: tests needing probe-no — probe-no not reachable (tried tcp://127.0.0.1:1, ` +
        `(no probe-no binary could be started); set FINGER_TEST_PROBE_NO_URL)\n${bar}\n`,
    ]);
  });

  it('throws instead when FINGER_REQUIRE_SERVICES=1, printing nothing', async () => {
    const banners: string[] = [];
    await expect(
      serviceUrlForTests(missing('probe-required'), {
        env: { FINGER_REQUIRE_SERVICES: '1' },
        warn: (b) => banners.push(b),
      }),
    ).rejects.toThrow(
      'FINGER_REQUIRE_SERVICES=1 but probe-required not reachable (tried tcp://127.0.0.1:1, (no probe-required binary could be started); set FINGER_TEST_PROBE_NO_URL)',
    );
    expect(banners).toEqual([]);
  });

  it('uses what start() returns', async () => {
    const url = await serviceUrlForTests({
      name: 'probe-started',
      envVar: 'FINGER_TEST_PROBE_STARTED_URL',
      defaultUrl: 'tcp://127.0.0.1:1',
      probe: async () => false,
      start: async () => 'tcp://127.0.0.1:2',
    });
    expect(url).toBe('tcp://127.0.0.1:2');
  });
});

describe('firstBytes / hostPort', () => {
  it('parses host and port', () => {
    expect(hostPort('nats://10.0.0.1:4333,nats://x:1')).toEqual({ host: '10.0.0.1', port: 4333 });
  });

  it('is undefined when nothing listens', async () => {
    expect(await firstBytes(`tcp://127.0.0.1:${await freePort()}`, 300)).toBeUndefined();
  });
});

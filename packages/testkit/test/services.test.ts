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

  it('falls back to start() and then reports undefined (or throws when services are required)', async () => {
    const spec = {
      name: 'probe-no',
      envVar: 'FINGER_TEST_PROBE_NO_URL',
      defaultUrl: 'tcp://127.0.0.1:1',
      probe: async () => false,
      start: async () => undefined,
    };
    if (process.env.FINGER_REQUIRE_SERVICES === '1') {
      await expect(serviceUrlForTests(spec)).rejects.toThrow(/FINGER_REQUIRE_SERVICES=1 but probe-no not reachable/);
    } else {
      expect(await serviceUrlForTests(spec)).toBeUndefined();
    }
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

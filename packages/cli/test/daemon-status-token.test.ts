import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon } from '@finger/testkit';

import { runCli } from './helpers.js';

// Issue 28 item 6: `myfinger daemon status` with a missing or wrong token printed the status, then
// `E_INTERNAL: Cannot read properties of undefined (reading 'map')` and exited 1 — the daemon
// answers such a caller only `safety: {state, locked}`. Real daemon on loopback, the CLI's run().

let d: TestDaemon;

beforeAll(async () => {
  d = await startTestDaemon({ config: { log: { level: 'silent' } } });
});

afterAll(async () => {
  await d?.close();
});

describe('daemon status without a valid token', () => {
  for (const [name, token] of [
    ['missing', undefined],
    ['wrong', 'fgr_not-a-real-token-000000000000'],
  ] as const) {
    it(`daemon status with a ${name} token prints the status and exits 0 (was E_INTERNAL reading 'map')`, async () => {
      const env: Record<string, string> = {
        FINGER_HOME: d.home,
        FINGER_URL: d.url,
        FINGER_TOKEN_FILE: `${d.home}/none`,
      };
      if (token !== undefined) env.FINGER_TOKEN = token;
      const r = await runCli(['daemon', 'status'], { env });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      // no pid, version, uptime or home: the daemon gives those to a valid token only
      expect(r.stdout.replace(/modules {2}\d+/, 'modules  N').split('\n')).toEqual([
        'finger daemon ok',
        `  url      ${d.url}`,
        '  modules  N',
        '  safety   open',
        '',
      ]);
    });
  }

  it('with the admin token it still shows every row', async () => {
    const env = { FINGER_HOME: d.home, FINGER_URL: d.url, FINGER_TOKEN: d.adminToken };
    const r = await runCli(['daemon', 'status'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}pid {6}\d+$/m);
    expect(r.stdout).toContain('  safety   open');
  });
});

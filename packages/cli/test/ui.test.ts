import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon } from '@finger/testkit';

import { runCli } from './helpers.js';

// Issue 25: `myfinger ui` prints a one-time sign-in link to the web console. Real daemon on
// loopback, the CLI's run().

let d: TestDaemon;

beforeAll(async () => {
  d = await startTestDaemon({ config: { log: { level: 'silent' }, modules: { builtin: false } } });
});

afterAll(async () => {
  await d?.close();
});

async function signIn(code: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${d.url}/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  return { status: res.status, body: await res.json() };
}

describe('myfinger ui', () => {
  it('prints a link that signs the browser in once; the second use is refused', async () => {
    const r = await runCli(['ui'], { env: { FINGER_URL: d.url, FINGER_TOKEN: d.adminToken } });
    expect(r.code).toBe(0);
    const m = /^(http:\/\/127\.0\.0\.1:\d+\/ui\/signin#code=([A-Za-z0-9_-]{43}))\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(m![1]!.startsWith(`${d.url}/ui/signin#code=`)).toBe(true);
    expect(r.stderr).toMatch(/^one-time sign-in link to the web console \(single use, valid until .+\)\n$/);
    const first = await signIn(m![2]!);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ principal: { kind: 'human', id: 'admin' }, roles: ['admin'] });
    const second = await signIn(m![2]!);
    expect(second.status).toBe(401);
    expect(second.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('--json gives url and expires_at', async () => {
    const r = await runCli(['ui', '--json'], { env: { FINGER_URL: d.url, FINGER_TOKEN: d.adminToken } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      url: expect.stringMatching(/\/ui\/signin#code=/),
      expires_at: expect.any(String),
      opened: false,
    });
  });

  it("an agent's token gets no link (E_FORBIDDEN)", async () => {
    const agent = await d.token('agent:executor');
    const r = await runCli(['ui', '--json'], { env: { FINGER_URL: d.url, FINGER_TOKEN: agent } });
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout).error.code).toBe('E_FORBIDDEN');
  });
});

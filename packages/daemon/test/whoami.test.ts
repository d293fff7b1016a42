import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon } from '@finger/testkit';

/** GET /v1/whoami over real HTTP with the given headers: status and parsed JSON body. */
async function whoami(d: TestDaemon, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${d.url}/v1/whoami`, { headers });
  return { status: res.status, body: await res.json() };
}

describe('GET /v1/whoami', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' }, modules: { builtin: false } } });
  });
  afterAll(() => d.close());

  it('answers every role with its principal, roles and token name (bearer)', async () => {
    const cases: Array<[role: string, name: string, kind: string]> = [
      ['operator', 'otto', 'human'],
      ['viewer', 'vera', 'human'],
      ['agent:supervisor', 'sup', 'agent'],
      ['agent:executor', 'exec', 'agent'],
      ['agent:reviewer', 'rev', 'agent'],
      ['agent:delegated', 'deleg', 'agent'],
    ];
    const admin = await whoami(d, { authorization: `Bearer ${d.adminToken}` });
    expect(admin.status).toBe(200);
    expect(admin.body).toEqual({
      principal: { kind: 'human', id: 'admin' },
      roles: ['admin'],
      token: { name: 'admin' },
      via: 'bearer',
    });
    for (const [role, name, kind] of cases) {
      const token = await d.token(role, name);
      const r = await whoami(d, { authorization: `Bearer ${token}` });
      expect(r.status, role).toBe(200);
      expect(r.body, role).toEqual({ principal: { kind, id: name }, roles: [role], token: { name }, via: 'bearer' });
    }
  });

  it('never answers without valid credentials: 401 E_UNAUTHENTICATED', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer fgr_not-a-token' },
      { authorization: 'Basic YWRtaW46YWRtaW4=' },
      // a cookie that names no session
      { cookie: 'finger_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    ];
    for (const headers of cases) {
      const r = await whoami(d, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.body.error.code, JSON.stringify(headers)).toBe('E_UNAUTHENTICATED');
    }
  });

  it('a revoked token is no longer anyone', async () => {
    const token = await d.token('viewer', 'gone');
    expect((await whoami(d, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await d.http('DELETE', '/v1/tokens/gone')).status).toBe(200);
    const r = await whoami(d, { authorization: `Bearer ${token}` });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('answers a browser session (cookie + CSRF token) with the principal that signed it in', async () => {
    const token = await d.token('operator', 'browser-op');
    const res = await fetch(`${d.url}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(res.status).toBe(200);
    const csrf = ((await res.json()) as { csrf_token: string }).csrf_token;
    const cookie = /^(finger_session=[A-Za-z0-9_-]+);/.exec(res.headers.get('set-cookie') ?? '')![1]!;

    const r = await whoami(d, { cookie, 'x-csrf-token': csrf });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      principal: { kind: 'human', id: 'browser-op' },
      roles: ['operator'],
      token: { name: 'browser-op' },
      via: 'session',
    });

    // the cookie alone (no CSRF token) is not enough, as on every other /v1 read
    const noCsrf = await whoami(d, { cookie });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.code).toBe('E_FORBIDDEN');
  });
});

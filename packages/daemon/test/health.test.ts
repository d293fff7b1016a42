import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDaemon, type TestDaemon } from './helpers.js';

describe('GET /v1/health over HTTP: no identities without a valid token', () => {
  let d: TestDaemon;
  let url: string;
  const get = async (token?: string) => {
    const res = await fetch(`${url}/v1/health`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    d = await startDaemon();
    url = (await d.app.listen()).url;
    // lock an agent by its denial breaker, as three denied calls in a row would
    for (let i = 0; i < 3; i++)
      await d.app.safety.recordDenial({ agent_id: 'secret-bot', tool: 'fx.echo', code: 'E_FORBIDDEN' });
  });
  afterAll(async () => {
    await d.close();
  });

  it('names no locked agent, breaker, pid, version or home to a caller without a token (regression: it named locked agents)', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: 'ok', modules: 3, safety: { state: 'open', locked: false } });
    expect(res.text).not.toContain('secret-bot');
    expect(res.text).not.toContain(d.home);
  });

  it('treats an invalid token like none', async () => {
    const res = await get('fgr_not-a-real-token');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: 'ok', modules: 3, safety: { state: 'open', locked: false } });
  });

  it('answers everything to any valid token (viewer, agent)', async () => {
    for (const role of ['viewer', 'agent:reviewer']) {
      const res = await get(await d.token(role));
      const body = JSON.parse(res.text);
      expect([role, res.status]).toEqual([role, 200]);
      expect(body).toMatchObject({ status: 'ok', version: '0.1.0', pid: process.pid, modules: 3, home: d.home });
      expect(body.safety).toMatchObject({
        state: 'open',
        locked: false,
        agents_locked: ['secret-bot'],
        breakers_tripped: { 'secret-bot': 'stopped' },
        agents: [expect.objectContaining({ agent_id: 'secret-bot', breaker: 'denial' })],
      });
    }
  });

  it('says the system is locked, without who locked it, to a caller without a token', async () => {
    await d.app.safety.halt({ actor: { kind: 'human', id: 'op-who-halted' }, reason: 'secret reason' });
    const res = await get();
    expect(JSON.parse(res.text)).toEqual({ status: 'ok', modules: 3, safety: { state: 'locked', locked: true } });
    expect(res.text).not.toMatch(/op-who-halted|secret reason/);
    const full = JSON.parse((await get(d.admin)).text);
    expect(full.safety.lockout).toMatchObject({ cause: 'halt', reason: 'secret reason' });
  });
});

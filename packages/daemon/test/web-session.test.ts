import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { systemClock } from '@finger/hub';
import { startTestDaemon, type TestDaemon } from '@finger/testkit';

/** A browser-like HTTP answer: status, parsed JSON (or text) and headers. */
interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function send(
  d: TestDaemon,
  method: string,
  path: string,
  o: { cookie?: string; csrf?: string; origin?: string | null; body?: unknown; bearer?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.cookie) headers.cookie = `finger_session=${o.cookie}`;
  if (o.csrf) headers['x-csrf-token'] = o.csrf;
  if (o.origin) headers.origin = o.origin;
  if (o.bearer) headers.authorization = `Bearer ${o.bearer}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(d.url + path, {
    method,
    headers,
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // text (pages)
  }
  return { status: res.status, body, headers: res.headers };
}

/** A signed-in browser: its cookie value and CSRF token. */
interface Browser {
  cookie: string;
  csrf: string;
  body: any;
  setCookie: string;
}

async function signIn(d: TestDaemon, creds: { token?: string; code?: string }): Promise<Browser> {
  const r = await send(d, 'POST', '/v1/session', { body: creds });
  if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${JSON.stringify(r.body)}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const m = /^finger_session=([A-Za-z0-9_-]+);/.exec(setCookie);
  return { cookie: m![1]!, csrf: r.body.csrf_token as string, body: r.body, setCookie };
}

/** Opens a WebSocket with a session cookie and Origin; resolves with the socket, or the refusal status. */
function openWs(d: TestDaemon, cookie: string, origin: string): Promise<{ ws?: WebSocket; status?: number }> {
  const ws = new WebSocket(d.url.replace(/^http/, 'ws') + '/v1/events', {
    headers: { cookie: `finger_session=${cookie}`, origin },
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

/** Records a socket's frames and its close; `next` waits (bounded) for a frame or the close. */
function recorder(ws: WebSocket) {
  const frames: any[] = [];
  let closed: number | undefined;
  const wake = new Set<() => void>();
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)));
    for (const w of wake) w();
  });
  ws.on('close', (code) => {
    closed = code;
    for (const w of wake) w();
  });
  const until = (pred: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (pred()) return resolve();
      const t = setTimeout(() => {
        wake.delete(check);
        reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(frames)} closed=${closed}`));
      }, 10_000);
      const check = () => {
        if (!pred()) return;
        clearTimeout(t);
        wake.delete(check);
        resolve();
      };
      wake.add(check);
    });
  return { frames, closed: () => closed, until };
}

describe('browser sessions: sign-in, cookie, CSRF token and Origin', () => {
  let d: TestDaemon;
  let origin: string;
  let viewer: string;
  let operator: string;
  let agent: string;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' }, modules: { builtin: false } } });
    origin = d.url;
    viewer = await d.token('viewer', 'vera');
    operator = await d.token('operator', 'otto');
    agent = await d.token('agent:executor', 'exec');
  });
  afterAll(() => d.close());

  it('signs in with a token: HttpOnly SameSite=Strict cookie, principal, roles, csrf_token, expiry', async () => {
    const b = await signIn(d, { token: operator });
    expect(b.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b.setCookie).toMatch(/; Path=\/; HttpOnly; SameSite=Strict; Max-Age=86400$/);
    expect(b.setCookie).not.toContain('Secure');
    expect(b.body).toEqual({
      principal: { kind: 'human', id: 'otto' },
      roles: ['operator'],
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
    });
    expect(b.csrf).not.toBe(b.cookie);
  });

  it('refuses a bad token (401) and an agent token (403: an agent never gets a console)', async () => {
    const bad = await send(d, 'POST', '/v1/session', { body: { token: 'fgr_nope' } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('E_UNAUTHENTICATED');
    expect(bad.headers.get('set-cookie')).toBeNull();
    const ag = await send(d, 'POST', '/v1/session', { body: { token: agent } });
    expect(ag.status).toBe(403);
    expect(ag.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'agent_token' } });
    expect(ag.headers.get('set-cookie')).toBeNull();
    const linkByAgent = await send(d, 'POST', '/v1/session/links', { bearer: agent });
    expect(linkByAgent.status).toBe(403);
    expect(linkByAgent.body.error.code).toBe('E_FORBIDDEN');
    const both = await send(d, 'POST', '/v1/session', { body: { token: operator, code: 'x' } });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('E_INVALID_ARGS');
  });

  it('a sign-in from another origin (a page on another loopback port) is refused', async () => {
    const r = await send(d, 'POST', '/v1/session', {
      body: { token: operator },
      origin: 'http://127.0.0.1:1',
    });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'origin' } });
  });

  it('a one-time link signs in once; the second use and a made-up code are 401', async () => {
    const link = await send(d, 'POST', '/v1/session/links', { bearer: viewer });
    expect(link.status).toBe(200);
    const url = link.body.url as string;
    expect(url.startsWith(`${origin}/ui/signin#code=`)).toBe(true);
    const code = url.split('#code=')[1]!;
    const b = await signIn(d, { code });
    expect(b.body.principal).toEqual({ kind: 'human', id: 'vera' });
    expect(b.body.roles).toEqual(['viewer']);
    const again = await send(d, 'POST', '/v1/session', { body: { code } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('E_UNAUTHENTICATED');
    const madeUp = await send(d, 'POST', '/v1/session', { body: { code: 'A'.repeat(43) } });
    expect(madeUp.status).toBe(401);
    expect(madeUp.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('the cookie reads with its X-CSRF-Token; without it 403 csrf (another port may hold the cookie, not the token)', async () => {
    const b = await signIn(d, { token: viewer });
    const ok = await send(d, 'GET', '/v1/approvals', { cookie: b.cookie, csrf: b.csrf });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ approvals: [] });
    const bare = await send(d, 'GET', '/v1/approvals', { cookie: b.cookie });
    expect(bare.status).toBe(403);
    expect(bare.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'csrf' } });
    const me = await send(d, 'GET', '/v1/session', { cookie: b.cookie, csrf: b.csrf });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ principal: { kind: 'human', id: 'vera' }, csrf_token: b.csrf });
    expect(me.headers.get('set-cookie')).toBeNull();
    const meBare = await send(d, 'GET', '/v1/session', { cookie: b.cookie });
    expect(meBare.status).toBe(403);
    expect(meBare.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'csrf' } });
    const none = await send(d, 'GET', '/v1/session');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('E_UNAUTHENTICATED');
    const forged = await send(d, 'GET', '/v1/approvals', { cookie: 'B'.repeat(43), csrf: b.csrf });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('a cookie POST needs the CSRF token, then the daemon’s own Origin; with both it runs', async () => {
    const b = await signIn(d, { token: operator });
    const check = { tool: 'shell.exec', args: { command: 'ls' } };
    const noCsrf = await send(d, 'POST', '/v1/policy/check', { cookie: b.cookie, origin, body: check });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'csrf' } });
    const wrongCsrf = await send(d, 'POST', '/v1/policy/check', {
      cookie: b.cookie,
      csrf: 'C'.repeat(43),
      origin,
      body: check,
    });
    expect(wrongCsrf.body.error.details.reason).toBe('csrf');
    const foreign = await send(d, 'POST', '/v1/policy/check', {
      cookie: b.cookie,
      csrf: b.csrf,
      origin: `http://127.0.0.1:${Number(new URL(origin).port) + 1}`,
      body: check,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'origin' } });
    const otherName = await send(d, 'POST', '/v1/policy/check', {
      cookie: b.cookie,
      csrf: b.csrf,
      origin: origin.replace('127.0.0.1', 'localhost'),
      body: check,
    });
    expect(otherName.body.error.details.reason).toBe('origin');
    const noOrigin = await send(d, 'POST', '/v1/policy/check', { cookie: b.cookie, csrf: b.csrf, body: check });
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.error.details.reason).toBe('origin');
    const ok = await send(d, 'POST', '/v1/policy/check', { cookie: b.cookie, csrf: b.csrf, origin, body: check });
    expect(ok.status).toBe(200);
    expect(ok.body.level).toBeDefined();
  });

  it("the session's roles are its token's: a viewer's cookie cannot answer an approval (403)", async () => {
    const b = await signIn(d, { token: viewer });
    const r = await send(d, 'POST', '/v1/approvals/apr_x', {
      cookie: b.cookie,
      csrf: b.csrf,
      origin,
      body: { decision: 'approve' },
    });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('E_FORBIDDEN');
    expect(r.body.error.details.required).toEqual(['admin', 'operator']);
    const halt = await send(d, 'POST', '/v1/halt', { cookie: b.cookie, csrf: b.csrf, origin, body: {} });
    expect(halt.status).toBe(403);
    expect(halt.body.error.code).toBe('E_FORBIDDEN');
  });

  it('a bearer header wins over a cookie (the cookie is not looked at)', async () => {
    const b = await signIn(d, { token: viewer });
    const r = await send(d, 'GET', '/v1/approvals', { cookie: b.cookie, bearer: 'fgr_bad' });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('revoking the token ends its sessions and its unused links at once', async () => {
    const t = await d.token('operator', 'short-lived');
    const b = await signIn(d, { token: t });
    const link = await send(d, 'POST', '/v1/session/links', { bearer: t });
    const code = (link.body.url as string).split('#code=')[1]!;
    expect((await send(d, 'DELETE', '/v1/tokens/short-lived')).status).toBe(401); // needs a token
    const del = await d.http('DELETE', '/v1/tokens/short-lived');
    expect(del.status).toBe(200);
    const r = await send(d, 'GET', '/v1/session', { cookie: b.cookie, csrf: b.csrf });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('E_UNAUTHENTICATED');
    const viaCode = await send(d, 'POST', '/v1/session', { body: { code } });
    expect(viaCode.status).toBe(401);
  });

  it('sign-out ends the session and clears the cookie; it needs the CSRF token and Origin', async () => {
    const b = await signIn(d, { token: operator });
    const forged = await send(d, 'DELETE', '/v1/session', { cookie: b.cookie, origin });
    expect(forged.status).toBe(403);
    expect(forged.body.error.details.reason).toBe('csrf');
    const out = await send(d, 'DELETE', '/v1/session', { cookie: b.cookie, csrf: b.csrf, origin });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toBe('finger_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
    const after = await send(d, 'GET', '/v1/approvals', { cookie: b.cookie, csrf: b.csrf });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('/docs answers a browser with the session cookie alone (a page to navigate to)', async () => {
    const b = await signIn(d, { token: viewer });
    const r = await send(d, 'GET', '/docs/json', { cookie: b.cookie });
    expect(r.status).toBe(200);
    expect(r.body.paths['/v1/state']).toBeDefined();
    expect(r.body.paths['/v1/session']).toBeDefined();
    const page = await fetch(`${d.url}/docs/`, { headers: { cookie: `finger_session=${b.cookie}` } });
    expect(page.status).toBe(200);
    await page.text();
    const without = await send(d, 'GET', '/docs/json');
    expect(without.status).toBe(401);
    expect(without.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('WebSocket: cookie + own Origin + {"op":"auth","csrf"} is ready; sign-out closes it 4401', async () => {
    const b = await signIn(d, { token: viewer });
    const { ws } = await openWs(d, b.cookie, origin);
    const rec = recorder(ws!);
    ws!.send(JSON.stringify({ op: 'auth', csrf: b.csrf }));
    await rec.until(() => rec.frames.some((f) => f.type === 'ready'), 'ready');
    ws!.send(JSON.stringify({ op: 'subscribe' }));
    await rec.until(() => rec.frames.some((f) => f.type === 'subscribed'), 'subscribed');
    expect((await send(d, 'DELETE', '/v1/session', { cookie: b.cookie, csrf: b.csrf, origin })).status).toBe(204);
    await rec.until(() => rec.closed() !== undefined, 'close');
    expect(rec.closed()).toBe(4401);
    expect(rec.frames.at(-1)).toMatchObject({ type: 'error', error: { code: 'E_UNAUTHENTICATED' } });
  });

  it('WebSocket: a foreign Origin or no Origin is refused at the upgrade; a wrong csrf closes 4401', async () => {
    const b = await signIn(d, { token: viewer });
    const foreign = await openWs(d, b.cookie, `http://127.0.0.1:${Number(new URL(origin).port) + 1}`);
    expect(foreign.status).toBe(403);
    const elsewhere = await openWs(d, b.cookie, 'http://evil.example');
    expect(elsewhere.status).toBe(403);
    const { ws } = await openWs(d, b.cookie, origin);
    const rec = recorder(ws!);
    ws!.send(JSON.stringify({ op: 'auth', csrf: 'D'.repeat(43) }));
    await rec.until(() => rec.closed() !== undefined, 'close');
    expect(rec.closed()).toBe(4401);
    expect(rec.frames[0]).toMatchObject({ type: 'error', error: { code: 'E_UNAUTHENTICATED' } });
    // a cookie-only upgrade may not skip the csrf message by subscribing
    const second = await openWs(d, b.cookie, origin);
    const rec2 = recorder(second.ws!);
    second.ws!.send(JSON.stringify({ op: 'subscribe' }));
    await rec2.until(() => rec2.closed() !== undefined, 'close');
    expect(rec2.closed()).toBe(4401);
  });

  it('GET /v1/state: the snapshot for every human role; an agent is refused', async () => {
    for (const token of [d.adminToken, operator, viewer]) {
      const r = await d.http('GET', '/v1/state', undefined, token);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(
        [
          'approvals',
          'audit',
          'breakers',
          'counts',
          'generated_at',
          'last_event_id',
          'last_event_seq',
          'modules',
          'safety',
          'standing_approvals',
          'tasks',
        ].sort(),
      );
      expect(r.body.last_event_seq).toBeNull();
      expect(r.body.approvals).toEqual([]);
      expect(r.body.safety).toMatchObject({ state: 'open', locked: false });
      expect(r.body.audit).toMatchObject({ state: 'intact', entries: expect.any(Number) });
      expect(r.body.counts).toMatchObject({ bucket_ms: 60_000, buckets: 30, holds: expect.any(Array) });
      expect(Array.isArray(r.body.modules)).toBe(true);
    }
    const ag = await d.http('GET', '/v1/state', undefined, agent);
    expect(ag.status).toBe(403);
    expect(ag.body.error.code).toBe('E_FORBIDDEN');
    const b = await signIn(d, { token: viewer });
    const viaCookie = await send(d, 'GET', '/v1/state', { cookie: b.cookie, csrf: b.csrf });
    expect(viaCookie.status).toBe(200);
  });
});

describe('browser sessions: expiry and bounds (injected clock)', () => {
  let d: TestDaemon;
  let offset = 0;
  beforeAll(async () => {
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        modules: { builtin: false },
        ui: { session_idle_ms: 60_000, session_absolute_ms: 300_000, max_sessions: 3 },
      },
      clock: { ...systemClock, now: () => Date.now() + offset },
    });
  });
  afterAll(() => d.close());

  it('a session idle past session_idle_ms ends; one in use ends at session_absolute_ms', async () => {
    const idle = await signIn(d, { token: d.adminToken });
    const busy = await signIn(d, { token: d.adminToken });
    expect(idle.setCookie).toContain('Max-Age=300;'.slice(0, -1));
    for (let i = 0; i < 5; i++) {
      offset += 50_000;
      const r = await send(d, 'GET', '/v1/session', { cookie: busy.cookie, csrf: busy.csrf });
      expect(r.status).toBe(200);
    }
    const gone = await send(d, 'GET', '/v1/session', { cookie: idle.cookie, csrf: idle.csrf });
    expect(gone.status).toBe(401);
    expect(gone.body.error.code).toBe('E_UNAUTHENTICATED');
    offset += 50_000; // 300 s after sign-in
    const over = await send(d, 'GET', '/v1/session', { cookie: busy.cookie, csrf: busy.csrf });
    expect(over.status).toBe(401);
    expect(over.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('a one-time code expires after 120 s', async () => {
    const link = await send(d, 'POST', '/v1/session/links', { bearer: d.adminToken });
    offset += 120_000;
    const r = await send(d, 'POST', '/v1/session', { body: { code: (link.body.url as string).split('#code=')[1] } });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('E_UNAUTHENTICATED');
  });

  it('the session table is bounded: past max_sessions the least recently used ends', async () => {
    const s = [];
    for (let i = 0; i < 3; i++) {
      s.push(await signIn(d, { token: d.adminToken }));
      offset += 1000;
    }
    expect((await send(d, 'GET', '/v1/session', { cookie: s[0]!.cookie, csrf: s[0]!.csrf })).status).toBe(200);
    offset += 1000;
    await signIn(d, { token: d.adminToken }); // evicts s[1], the least recently used
    expect(d.app.sessions.size().sessions).toBe(3);
    expect((await send(d, 'GET', '/v1/session', { cookie: s[1]!.cookie, csrf: s[1]!.csrf })).status).toBe(401);
    expect((await send(d, 'GET', '/v1/session', { cookie: s[0]!.cookie, csrf: s[0]!.csrf })).status).toBe(200);
  });
});

describe('/ui: the web console', () => {
  let d: TestDaemon;
  let missing: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({
      config: { log: { level: 'silent' }, modules: { builtin: false }, ui: { dir: 'ui-dist' } as never },
      prepareHome: async (home) => {
        await mkdir(join(home, 'ui-dist', 'assets'), { recursive: true });
        await writeFile(join(home, 'ui-dist', 'index.html'), '<!doctype html><title>finger</title>');
        await writeFile(join(home, 'ui-dist', 'assets', 'app-1.js'), 'console.log(1)');
      },
    });
    missing = await startTestDaemon({
      config: { log: { level: 'silent' }, modules: { builtin: false }, ui: { dir: 'no-such-dir' } as never },
    });
  });
  afterAll(async () => {
    await d.close();
    await missing.close();
  });

  const CSP = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'";

  it('answers index.html for /ui, /ui/ and every app route, with the CSP and framing headers, no token needed', async () => {
    for (const path of ['/ui', '/ui/', '/ui/approvals', '/ui/approvals/apr_123', '/ui/signin', '/ui/audit']) {
      const r = await fetch(d.url + path);
      expect(r.status, path).toBe(200);
      expect(await r.text()).toBe('<!doctype html><title>finger</title>');
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('content-security-policy')).toBe(CSP);
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('referrer-policy')).toBe('no-referrer');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('serves assets; a missing asset is 404; nothing outside the folder', async () => {
    const js = await fetch(`${d.url}/ui/assets/app-1.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('content-security-policy')).toBe(CSP);
    expect(await js.text()).toBe('console.log(1)');
    const gone = await fetch(`${d.url}/ui/assets/nope.js`);
    expect(gone.status).toBe(404);
    await gone.text();
    // a file-like path outside the folder is refused; a route-like one is the app's index.html
    for (const path of [
      '/ui/%2e%2e/%2e%2e/tokens.json',
      '/ui/assets/..%2f..%2f..%2ftokens.json',
      '/ui/..%2f..%2ftoken',
    ]) {
      const r = await fetch(d.url + path);
      const text = await r.text();
      expect(text, path).not.toContain('fgr_');
      if (path.endsWith('.json')) expect([401, 403, 404], path).toContain(r.status);
      else expect(text).toBe('<!doctype html><title>finger</title>');
    }
  });

  it('answers 503 saying to build when the app is not built', async () => {
    const r = await fetch(`${missing.url}/ui/approvals`);
    expect(r.status).toBe(503);
    expect(await r.text()).toContain('run `npm run build`');
    expect(r.headers.get('content-security-policy')).toBe(CSP);
  });
});

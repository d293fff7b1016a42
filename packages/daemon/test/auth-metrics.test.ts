import { rm } from 'node:fs/promises';

import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import {
  ACCESS,
  bearerToken,
  installAuth,
  installErrorHandling,
  renderPrometheus,
  RouteCounters,
  TokenStore,
} from '@finger/daemon';

import { tempDir } from './helpers.js';

describe('installAuth', () => {
  const homes: string[] = [];
  afterEach(async () => {
    for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
  });

  it('refuses to register a route that declares no roles (fail safe)', async () => {
    const home = await tempDir();
    homes.push(home);
    const app = Fastify();
    installErrorHandling(app);
    installAuth(app, { tokens: new TokenStore(home) });
    expect(() => app.get('/open', async () => 'x')).toThrow('route GET /open declares no config.roles');
    await app.close();
  });

  it('public routes need no token; role lists are enforced; the principal is attached', async () => {
    const home = await tempDir();
    homes.push(home);
    const tokens = new TokenStore(home);
    const viewer = tokens.create('v', 'viewer').token;
    const app = Fastify();
    installErrorHandling(app);
    installAuth(app, { tokens });
    app.get('/pub', { config: { roles: ACCESS.public } }, async () => ({ ok: true }));
    app.get('/who', { config: { roles: ACCESS.viewer } }, async (req) => req.principal);
    app.get('/adm', { config: { roles: ACCESS.admin } }, async () => ({ ok: true }));
    expect((await app.inject({ url: '/pub' })).statusCode).toBe(200);
    const who = await app.inject({ url: '/who', headers: { authorization: `Bearer ${viewer}` } });
    expect(who.json()).toEqual({ kind: 'human', id: 'v', roles: ['viewer'] });
    const adm = await app.inject({ url: '/adm', headers: { authorization: `bearer ${viewer}` } });
    expect(adm.statusCode).toBe(403);
    expect(adm.json().error.code).toBe('E_FORBIDDEN');
    const none = await app.inject({ url: '/who', headers: { authorization: 'Basic abc' } });
    expect(none.statusCode).toBe(401);
    await app.close();
  });

  it('bearerToken parses only the Bearer scheme', () => {
    expect(bearerToken('Bearer fgr_x')).toBe('fgr_x');
    expect(bearerToken('bearer  fgr_y ')).toBe('fgr_y');
    expect(bearerToken('Basic fgr_x')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe('Prometheus text', () => {
  it('counts each method, route and status apart, in the order they first appeared', () => {
    const c = new RouteCounters();
    c.inc('POST', '/v1/messages', 200);
    c.inc('GET', '/v1/requests/:id', 404);
    c.inc('POST', '/v1/messages', 200);
    c.inc('POST', '/v1/messages', 423);
    c.inc('GET', '/v1/messages', 200);
    c.inc('POST', '/v1/input', 200);
    c.inc('POST', '/v1/messages', 200);
    c.inc('GET', 'unmatched', 404);
    expect(c.families()[0]!.samples).toEqual([
      { labels: { method: 'POST', route: '/v1/messages', status: '200' }, value: 3 },
      { labels: { method: 'GET', route: '/v1/requests/:id', status: '404' }, value: 1 },
      { labels: { method: 'POST', route: '/v1/messages', status: '423' }, value: 1 },
      { labels: { method: 'GET', route: '/v1/messages', status: '200' }, value: 1 },
      { labels: { method: 'POST', route: '/v1/input', status: '200' }, value: 1 },
      { labels: { method: 'GET', route: 'unmatched', status: '404' }, value: 1 },
    ]);
  });

  it('renders families with escaped labels', () => {
    const c = new RouteCounters();
    c.inc('GET', '/v1/x', 200);
    c.inc('GET', '/v1/x', 200);
    c.inc('POST', '/a"b\\c', 500);
    const text = renderPrometheus([
      { name: 'finger_up', type: 'gauge', help: 'Up.\nReally.', samples: [{ value: 1 }] },
      ...c.families(),
    ]);
    expect(text).toBe(
      [
        '# HELP finger_up Up.\\nReally.',
        '# TYPE finger_up gauge',
        'finger_up 1',
        '# HELP finger_http_requests_total HTTP requests answered, by route and status.',
        '# TYPE finger_http_requests_total counter',
        'finger_http_requests_total{method="GET",route="/v1/x",status="200"} 2',
        'finger_http_requests_total{method="POST",route="/a\\"b\\\\c",status="500"} 1',
        '',
      ].join('\n'),
    );
  });
});

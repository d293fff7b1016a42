import { request as httpRequest } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { hostnameOf } from '../src/http/host-check.js';
import { startDaemon, type TestDaemon } from './helpers.js';

/** One real HTTP request to the daemon with exactly these headers (Host included). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET', headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens a real `ws` socket: `{first}` (the type of the first frame, then the socket is closed)
 * when the upgrade succeeded, else the refusal's status and body.
 */
function upgrade(
  url: string,
  opts: { token?: string; host?: string; origin?: string },
): Promise<{ first: string } | { status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.host) headers.host = opts.host;
  const ws = new WebSocket(url, { headers, ...(opts.origin !== undefined ? { origin: opts.origin } : {}) });
  return new Promise((resolve, reject) => {
    ws.once('message', (data) => {
      ws.terminate();
      resolve({ first: (JSON.parse(String(data)) as { type: string }).type });
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

const hostRefused = (host: string) => ({
  error: {
    code: 'E_FORBIDDEN',
    message: `Host ${JSON.stringify(host)} is not a name of this daemon (loopback names, server.host or server.allowed_hosts)`,
    details: { reason: 'host_not_allowed', host },
  },
});

describe('Host check: a daemon on loopback (DNS rebinding)', () => {
  let d: TestDaemon;
  let url: string;
  let port: string;
  beforeAll(async () => {
    d = await startDaemon({ server: { host: '127.0.0.1', port: 0, allowed_hosts: ['finger.internal'] } });
    url = (await d.app.listen()).url;
    port = new URL(url).port;
  });
  afterAll(async () => {
    await d.close();
  });

  it('refuses a foreign Host with 403 E_FORBIDDEN before anything else, /v1/health and 404s included', async () => {
    const evil = `rebind.evil.example:${port}`;
    for (const path of ['/v1/health', '/v1/modules', '/v1/nowhere', '/docs/json']) {
      const res = await rawGet(url, path, { host: evil, authorization: `Bearer ${d.admin}` });
      expect([path, res.status, res.json]).toEqual([path, 403, hostRefused(evil)]);
    }
    // without a token too: the Host is judged before authentication
    expect(await rawGet(url, '/v1/modules', { host: evil })).toEqual({ status: 403, json: hostRefused(evil) });
  });

  it('refuses names that only look local, and malformed Host headers', async () => {
    for (const host of [
      'localhost.evil.example',
      `127.0.0.1.nip.io:${port}`,
      'localhost@evil.example',
      'evil.example/localhost',
      '',
      'FINGER.internal.evil',
    ]) {
      const res = await rawGet(url, '/v1/health', { host });
      expect([host, res.status, res.json]).toEqual([host, 403, hostRefused(host)]);
    }
  });

  it('answers loopback names with any port, the configured host, and allowed_hosts (any case)', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'LOCALHOST',
      `[::1]:${port}`,
      '127.0.0.2',
      `finger.internal:${port}`,
      'Finger.Internal',
    ]) {
      const res = await rawGet(url, '/v1/health', { host });
      expect([host, res.status, res.json.status]).toEqual([host, 200, 'ok']);
    }
    const authed = await rawGet(url, '/v1/modules', {
      host: `finger.internal:${port}`,
      authorization: `Bearer ${d.admin}`,
    });
    expect(authed.status).toBe(200);
  });

  it('refuses a WebSocket upgrade with a foreign Host (403 E_FORBIDDEN host_not_allowed), even with a valid token', async () => {
    const evil = `rebind.evil.example:${port}`;
    const res = await upgrade(`${url.replace(/^http/, 'ws')}/v1/events`, { token: d.admin, host: evil });
    expect(res).toEqual({ status: 403, json: hostRefused(evil) });
  });

  it('closes the connection of a refused upgrade itself (a client keeping it open held the daemon’s close)', async () => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/events`, { origin: 'http://evil.example' });
    const closedByServer = await new Promise<boolean>((resolve, reject) => {
      ws.once('unexpected-response', (req, res) => {
        expect(res.statusCode).toBe(403);
        res.resume();
        // the client neither ends nor destroys its side: only the daemon can close it
        req.socket?.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 3000).unref();
      });
      ws.once('error', reject);
    });
    expect(closedByServer).toBe(true);
  });

  it('refuses a WebSocket upgrade from a foreign page Origin (403 E_FORBIDDEN origin_not_allowed)', async () => {
    const wsUrl = `${url.replace(/^http/, 'ws')}/v1/events`;
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${port}`,
      'null',
      'file://',
      'chrome-extension://x',
    ]) {
      const res = await upgrade(wsUrl, { token: d.admin, origin });
      expect([origin, res]).toEqual([
        origin,
        {
          status: 403,
          json: {
            error: {
              code: 'E_FORBIDDEN',
              message: `WebSocket from origin ${JSON.stringify(origin)} refused: a page may open one only from the daemon's own names`,
              details: { reason: 'origin_not_allowed', origin },
            },
          },
        },
      ]);
    }
  });

  it('lets a WebSocket through from the daemon’s own origins, and without Origin (CLI, ws clients)', async () => {
    const wsUrl = `${url.replace(/^http/, 'ws')}/v1/events`;
    for (const origin of [url, `http://localhost:${port}`, 'http://finger.internal', undefined]) {
      const res = await upgrade(wsUrl, { token: d.admin, ...(origin !== undefined ? { origin } : {}) });
      expect([origin, res]).toEqual([origin, { first: 'ready' }]);
    }
  });
});

describe('Host check: a daemon on a non-loopback address', () => {
  const inject = (d: TestDaemon, host: string, headers: Record<string, string> = {}) =>
    d.app.fastify.inject({ method: 'GET', url: '/v1/health', headers: { host, ...headers } });

  it('does not check the Host when server.allowed_hosts is not set', async () => {
    const d = await startDaemon({ server: { host: '0.0.0.0', port: 0 } });
    try {
      expect((await inject(d, 'anything.example:7770')).statusCode).toBe(200);
      // an Origin on an upgrade must still be the page of the name the request came to
      const wsRefused = await inject(d, 'finger.lan:7770', {
        upgrade: 'websocket',
        connection: 'upgrade',
        origin: 'http://evil.example',
      });
      expect([wsRefused.statusCode, wsRefused.json().error.code, wsRefused.json().error.details.reason]).toEqual([
        403,
        'E_FORBIDDEN',
        'origin_not_allowed',
      ]);
    } finally {
      await d.close();
    }
  });

  it('checks it when server.allowed_hosts is set: those names and loopback ones pass, others get 403 E_FORBIDDEN', async () => {
    const d = await startDaemon({ server: { host: '0.0.0.0', port: 0, allowed_hosts: ['finger.lan', '10.0.0.5'] } });
    try {
      for (const host of ['finger.lan:7770', '10.0.0.5', '127.0.0.1:7770', 'localhost'])
        expect([host, (await inject(d, host)).statusCode]).toEqual([host, 200]);
      const refused = await inject(d, 'evil.example:7770');
      expect([refused.statusCode, refused.json()]).toEqual([403, hostRefused('evil.example:7770')]);
    } finally {
      await d.close();
    }
  });
});

describe('hostnameOf', () => {
  it('answers the same for an authority seen before, and after more distinct authorities than it remembers', () => {
    const cases: [string, string | undefined][] = [
      ['127.0.0.1:7770', '127.0.0.1'],
      ['LocalHost:1', 'localhost'],
      ['[::1]:80', '[::1]'],
      ['2130706433', '127.0.0.1'],
      ['evil.example/localhost', undefined],
      ['', undefined],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [authority, hostname] of cases)
        expect([authority, hostnameOf(authority)]).toEqual([authority, hostname]);
      for (let i = 0; i < 100; i++) expect(hostnameOf(`h${round}-${i}.example:${i}`)).toBe(`h${round}-${i}.example`);
    }
  });
});

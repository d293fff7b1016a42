// The workspace-write sandbox's filtering proxy on real sockets: a fake registry on 127.0.0.2
// (which the test's address judge calls public, standing in for a registry on the internet) and a
// "private" service on 127.0.0.1 (which it calls loopback, as the firewall's classifier does).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type ProxyRefusal, SandboxProxy, type SandboxProxyLimits } from '../../src/runtime/sandbox-proxy.js';
import { expandAllow, PACKAGE_REGISTRIES, parseAllowEntry } from '../../src/runtime/sandbox-proxy-allow.js';

const dir = mkdtempSync(path.join(tmpdir(), 'finger-proxy-'));
let registry: http.Server;
let registryPort = 0;
let echo: net.Server;
let echoPort = 0;
let privateServer: http.Server;
let privatePort = 0;
let privateHits = 0;
const seen: http.IncomingHttpHeaders[] = [];
const proxies: SandboxProxy[] = [];

/** The test's stand-in for the firewall's classifier: 127.0.0.2 is "public", the rest of 127/8 loopback. */
const judge = (a: string) =>
  a === '127.0.0.2' ? ({ allowed: true } as const) : ({ allowed: false, reason: 'loopback address' } as const);

const NAMES: Record<string, string[]> = {
  'registry.example': ['127.0.0.2'],
  'evil.example': ['127.0.0.1'],
  'mixed.example': ['127.0.0.2', '127.0.0.1'],
};

async function proxy(o: { allow?: string[]; limits?: Partial<SandboxProxyLimits>; refusals?: ProxyRefusal[] } = {}) {
  const p = new SandboxProxy({
    socketPath: path.join(dir, `p${proxies.length}`, 'proxy.sock'),
    allow: o.allow ?? [
      `registry.example:${registryPort}`,
      `registry.example:${echoPort}`,
      `evil.example:${privatePort}`,
      `mixed.example:${registryPort}`,
      `127.0.0.1:${privatePort}`,
    ],
    judgeAddress: judge,
    resolve: (h) => (NAMES[h] ? Promise.resolve(NAMES[h]) : Promise.reject(new Error('ENOTFOUND'))),
    ...(o.limits ? { limits: o.limits } : {}),
    onRefusal: (r) => o.refusals?.push(r),
  });
  proxies.push(p);
  await p.start();
  return p;
}

/** Sends `text` on a fresh connection to the proxy and collects everything until the proxy closes it (a reset ends it too). */
function exchange(socketPath: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', () => s.destroy());
    s.on('close', () => resolve(out));
    s.write(text);
  });
}

/** Opens a CONNECT tunnel; resolves with the socket once the proxy said 200, rejects with its answer otherwise. */
function tunnel(socketPath: string, target: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath);
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onData);
      if (head.startsWith('HTTP/1.1 200')) resolve(s);
      else reject(new Error(head));
    };
    s.on('data', onData);
    s.on('error', reject);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

/** A plain HTTP request through the proxy (absolute-form URL). */
function get(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath, path: url, headers: { host: new URL(url).host, 'proxy-authorization': 'Basic c2VjcmV0' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const listen = (s: net.Server, host: string) =>
  new Promise<number>((r) => s.listen(0, host, () => r((s.address() as AddressInfo).port)));

beforeAll(async () => {
  registry = http.createServer((req, res) => {
    seen.push(req.headers);
    res.end(`package ${req.url}`);
  });
  registryPort = await listen(registry, '127.0.0.2');
  echo = net.createServer((c) => c.pipe(c));
  echoPort = await listen(echo, '127.0.0.2');
  privateServer = http.createServer((_q, r) => {
    privateHits++;
    r.end('private');
  });
  privatePort = await listen(privateServer, '127.0.0.1');
});

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await Promise.all([registry, echo, privateServer].map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

describe('the sandbox proxy', () => {
  it('forwards a plain request to a listed host with its Host header, without the proxy credentials', async () => {
    const p = await proxy();
    const r = await get(p.socketPath, `http://registry.example:${registryPort}/left-pad`);
    expect(r).toEqual({ status: 200, body: 'package /left-pad' });
    expect(seen.at(-1)?.host).toBe(`registry.example:${registryPort}`);
    expect(seen.at(-1)?.['proxy-authorization']).toBeUndefined();
    expect(p.stats()).toMatchObject({ allowed: 1, refused: 0 });
  });

  it('tunnels CONNECT to a listed host: bytes go both ways', async () => {
    const p = await proxy();
    const s = await tunnel(p.socketPath, `registry.example:${echoPort}`);
    const back = new Promise<string>((r) => s.once('data', (d) => r(d.toString())));
    s.write('ping');
    expect(await back).toBe('ping');
    s.destroy();
  });

  it('refuses a host that is not listed with 403 and a body saying why, and reports the refusal', async () => {
    const refusals: ProxyRefusal[] = [];
    const p = await proxy({ refusals });
    const answer = await exchange(p.socketPath, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(answer).toContain(
      'finger sandbox proxy: CONNECT example.com:443 refused: example.com:443 is not in sandbox.network.allow',
    );
    expect(refusals).toEqual([
      {
        method: 'CONNECT',
        target: 'example.com:443',
        reason: 'example.com:443 is not in sandbox.network.allow (only the listed hosts are reachable)',
      },
    ]);
    const plain = await get(p.socketPath, 'http://example.com/');
    expect(plain.status).toBe(403);
    expect(refusals).toHaveLength(2);
  });

  it('refuses a listed name that resolves to a loopback or private address (any of its addresses); nothing is reached', async () => {
    const refusals: ProxyRefusal[] = [];
    const p = await proxy({ refusals });
    const r = await get(p.socketPath, `http://evil.example:${privatePort}/`);
    expect(r.status).toBe(403);
    expect(r.body).toContain(`evil.example resolves to 127.0.0.1, a loopback address`);
    await expect(tunnel(p.socketPath, `evil.example:${privatePort}`)).rejects.toThrow(/^HTTP\/1\.1 403/);
    const mixed = await get(p.socketPath, `http://mixed.example:${registryPort}/`);
    expect(mixed.status).toBe(403);
    expect(privateHits).toBe(0);
    expect(refusals.map((x) => x.reason)).toEqual([
      'evil.example resolves to 127.0.0.1, a loopback address',
      'evil.example resolves to 127.0.0.1, a loopback address',
      'mixed.example resolves to 127.0.0.1, a loopback address',
    ]);
  });

  it('lets an exactly listed literal address:port through although it is loopback, and no other port of it', async () => {
    const p = await proxy();
    expect(await get(p.socketPath, `http://127.0.0.1:${privatePort}/`)).toEqual({ status: 200, body: 'private' });
    const other = await get(p.socketPath, `http://127.0.0.1:${registryPort}/`);
    expect(other.status).toBe(403);
    const unlisted = await get(p.socketPath, `http://127.0.0.2:${registryPort}/`);
    expect(unlisted.status).toBe(403);
  });

  it('refuses what is no proxy request: an origin-form request (400), a CONNECT without a port', async () => {
    const p = await proxy();
    const origin = await exchange(p.socketPath, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(origin).toMatch(/^HTTP\/1\.1 400 /);
    expect(origin).toContain('only absolute http:// requests and CONNECT tunnels go through this proxy');
    const noPort = await exchange(p.socketPath, 'CONNECT registry.example HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(noPort).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('listens on a Unix socket 0600 in a 0700 directory, and removes it on close', async () => {
    const p = await proxy();
    expect(statSync(p.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(p.socketPath)).mode & 0o777).toBe(0o700);
    await p.close();
    expect(() => statSync(p.socketPath)).toThrow(/ENOENT/);
    await p.close();
  });

  it('bounds connections, header size, bytes per tunnel and idle time', async () => {
    const p = await proxy({
      limits: { max_connections: 1, max_bytes: 64, idle_timeout_ms: 300, max_header_bytes: 1024 },
    });
    const first = await tunnel(p.socketPath, `registry.example:${echoPort}`);
    // a second connection while the first is open: closed at once
    expect(await exchange(p.socketPath, 'CONNECT registry.example:1 HTTP/1.1\r\n\r\n')).toBe('');
    // past 64 bytes the tunnel is closed
    const closed = new Promise<void>((r) => first.once('close', () => r()));
    first.on('data', () => undefined);
    first.write('x'.repeat(200));
    await closed;
    // an idle tunnel is closed
    const idle = await tunnel(p.socketPath, `registry.example:${echoPort}`);
    await new Promise<void>((r) => idle.once('close', () => r()));
    // a head past the bound: 431
    const big = await exchange(
      p.socketPath,
      `GET http://registry.example:${registryPort}/ HTTP/1.1\r\nX: ${'a'.repeat(2000)}\r\n\r\n`,
    );
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
  });
});

describe('sandbox.network.allow entries', () => {
  it('"registries" expands to the public package registries on 443; hosts default to 443; literals are marked', () => {
    expect(parseAllowEntry('registries').map((e) => `${e.host}:${e.port}`)).toEqual(
      PACKAGE_REGISTRIES.map((h) => `${h}:443`),
    );
    expect(parseAllowEntry('Registry.NPMjs.org.')).toEqual([{ host: 'registry.npmjs.org', port: 443, literal: false }]);
    expect(parseAllowEntry('pypi.org:8443')).toEqual([{ host: 'pypi.org', port: 8443, literal: false }]);
    expect(parseAllowEntry('127.0.0.1:4873')).toEqual([{ host: '127.0.0.1', port: 4873, literal: true }]);
    expect(parseAllowEntry('[::1]:4873')).toEqual([{ host: '::1', port: 4873, literal: true }]);
    expect([...expandAllow(['registries', 'registry.npmjs.org']).keys()]).toHaveLength(PACKAGE_REGISTRIES.length);
  });

  it('"registries" names no mirror that fetches from any origin: Go\'s module proxy and checksum database are left out', () => {
    expect(PACKAGE_REGISTRIES).not.toContain('proxy.golang.org');
    expect(PACKAGE_REGISTRIES).not.toContain('sum.golang.org');
    expect([...expandAllow(['registries']).keys()].some((k) => k.includes('golang'))).toBe(false);
  });

  it('refuses what is no host[:port]: wildcards, URLs, bad ports', () => {
    for (const bad of ['*.npmjs.org', 'https://pypi.org', 'pypi.org:0', 'pypi.org:70000', 'a b', ''])
      expect(() => parseAllowEntry(bad), bad).toThrow(/is not "registries", a host name or IP address/);
  });
});

import zlib from 'node:zlib';

import { afterEach, describe, expect, it } from 'vitest';

import { htmlToText, htmlToTextAsync, WORKER_THRESHOLD } from '../src/content.js';
import { createWebModule, type WebModule } from '../src/index.js';
import { rejection, startServer, tableLookup, type TestServer } from './helpers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(handler: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

const PAGE = `<!doctype html><html><head><title>Hello &amp; welcome</title>
<style>body { color: red }</style><script>var secret = "SCRIPT-CONTENT";</script></head>
<body><h1>Heading</h1><p>Some <b>bold</b> text and a <a href="/next">link</a>.</p>
<noscript>NOSCRIPT-CONTENT</noscript><script>alert("MORE-SCRIPT")</script>
<ul><li>one</li><li>two</li></ul></body></html>`;

/** A site on loopback: pages by path. */
async function site(): Promise<TestServer> {
  return server((req, res) => {
    const path = req.url ?? '/';
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (path === '/data.json') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ a: [1, 2, { b: null }], ok: true }));
    } else if (path === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10000' }).end('x'.repeat(10_000));
    } else if (path === '/big.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pad: 'y'.repeat(5000) }));
    } else if (path === '/gzip') {
      res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(zlib.gzipSync('z'.repeat(50_000)));
    } else if (path === '/bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2, 255]));
    } else if (path === '/hang') {
      // never answers
    } else if (path === '/missing') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    } else if (path.startsWith('/to?')) {
      const to = new URL(path, 'http://x').searchParams.get('u') ?? '/';
      res.writeHead(302, { location: to }).end();
    } else if (path.startsWith('/see-other')) {
      res.writeHead(303, { location: '/data.json' }).end();
    } else if (path === '/loop') {
      res.writeHead(301, { location: '/loop' }).end();
    } else {
      res.writeHead(500).end();
    }
  });
}

function loopbackAllowed(extra: Record<string, unknown> = {}): WebModule {
  return createWebModule({ settings: { allow_hosts: ['127.0.0.1'], ...extra } });
}

describe('web.fetch SSRF protection', () => {
  it('refuses http://127.0.0.1:<port>/ by default with E_FORBIDDEN {url, address, reason}, sending nothing', async () => {
    const s = await site();
    const web = createWebModule();
    const err = await rejection(web.tools.fetch({ url: `${s.origin}/` }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toEqual({
      url: `${s.origin}/`,
      address: '127.0.0.1',
      reason: 'loopback address (127.0.0.0/8, ::1)',
    });
    expect(s.requests).toEqual([]);
  });

  it('refuses http://127.0.0.1/ (no port) and the IPv4-mapped and IPv6 loopback literals', async () => {
    const web = createWebModule();
    for (const url of [
      'http://127.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::1]/',
      'http://2130706433/',
      'http://0x7f.1/',
    ]) {
      const err = await rejection(web.tools.fetch({ url }));
      expect([url, err.code]).toEqual([url, 'E_FORBIDDEN']);
      expect(err.details.reason).toContain('loopback');
    }
  });

  it('refuses a public name that resolves to 10.0.0.1', async () => {
    const web = createWebModule({ lookup: tableLookup({ 'public.example.test': ['10.0.0.1'] }) });
    const err = await rejection(web.tools.fetch({ url: 'http://public.example.test/page' }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toEqual({
      url: 'http://public.example.test/page',
      address: '10.0.0.1',
      reason: 'private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
    });
  });

  it('refuses a name whose answer mixes a public and a private address', async () => {
    const web = createWebModule({ lookup: tableLookup({ 'mixed.test': ['8.8.8.8', '169.254.169.254'] }) });
    const err = await rejection(web.tools.fetch({ url: 'http://mixed.test/' }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details.address).toBe('169.254.169.254');
  });

  it('refuses a redirect from an allowed host to a private address, literal or by name', async () => {
    const s = await site();
    const lookup = tableLookup({ 'allowed.test': ['127.0.0.1'], 'public.example.test': ['10.0.0.1'] });
    const web = createWebModule({ lookup, settings: { allow_hosts: ['allowed.test'] } });
    const base = `http://allowed.test:${s.port}`;

    const literal = await rejection(web.tools.fetch({ url: `${base}/to?u=http://10.0.0.1/` }));
    expect(literal.code).toBe('E_FORBIDDEN');
    expect(literal.details).toEqual({
      url: 'http://10.0.0.1/',
      address: '10.0.0.1',
      reason: 'private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
    });

    const named = await rejection(web.tools.fetch({ url: `${base}/to?u=http://public.example.test/x` }));
    expect(named.code).toBe('E_FORBIDDEN');
    expect(named.details).toEqual({
      url: 'http://public.example.test/x',
      address: '10.0.0.1',
      reason: 'private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
    });
    expect(s.requests.map((r) => r.url)).toEqual(['/to?u=http://10.0.0.1/', '/to?u=http://public.example.test/x']);
  });

  it('refuses a redirect to a non-http scheme with E_FORBIDDEN', async () => {
    const s = await site();
    const err = await rejection(loopbackAllowed().tools.fetch({ url: `${s.origin}/to?u=file:///etc/passwd` }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toEqual({ url: 'file:///etc/passwd', reason: 'redirect to a non-http(s) scheme (file:)' });
  });

  it('allows a private target through allow_cidrs, connecting to the one address it checked', async () => {
    const s = await site();
    const calls: string[] = [];
    const web = createWebModule({
      lookup: tableLookup({ 'svc.internal.test': ['127.0.0.1'] }, calls),
      settings: { allow_cidrs: ['127.0.0.0/8'] },
    });
    const out = await web.tools.fetch({ url: `http://svc.internal.test:${s.port}/data.json` });
    expect(out.json).toEqual({ a: [1, 2, { b: null }], ok: true });
    expect(calls).toEqual(['svc.internal.test']);
    expect(s.requests[0]?.headers.host).toBe(`svc.internal.test:${s.port}`);
  });

  it('the static hosts setting maps a name, and its addresses are still checked', async () => {
    const web = createWebModule({ settings: { hosts: { 'public.example.test': ['10.0.0.1'] } } });
    const err = await rejection(web.tools.fetch({ url: 'http://public.example.test/' }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details.address).toBe('10.0.0.1');
  });
});

describe('web.fetch arguments', () => {
  it('refuses non-http schemes with E_INVALID_ARGS', async () => {
    const web = createWebModule();
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://x/',
      'javascript:alert(1)',
      'data:text/plain,hi',
    ]) {
      const err = await rejection(web.tools.fetch({ url }));
      expect([url, err.code]).toEqual([url, 'E_INVALID_ARGS']);
    }
    expect((await rejection(web.tools.fetch({ url: 'not a url' }))).code).toBe('E_INVALID_ARGS');
  });

  it('refuses connection-level headers, credentials in the URL and limits past the settings', async () => {
    const web = createWebModule();
    const host = await rejection(web.tools.fetch({ url: 'http://example.com/', headers: { Host: 'x' } }));
    expect(host.code).toBe('E_INVALID_ARGS');
    expect(host.details).toEqual({
      issues: [{ path: '$.headers.Host', message: 'header "Host" cannot be set by the caller' }],
    });
    expect((await rejection(web.tools.fetch({ url: 'http://u:p@example.com/' }))).code).toBe('E_INVALID_ARGS');
    expect((await rejection(web.tools.fetch({ url: 'http://example.com/', max_bytes: 11 * 1024 * 1024 }))).code).toBe(
      'E_INVALID_ARGS',
    );
    expect((await rejection(web.tools.fetch({ url: 'http://example.com/', method: 'POST' as 'GET' }))).code).toBe(
      'E_INVALID_ARGS',
    );
  });
});

describe('web.fetch content', () => {
  it('turns HTML into readable text without script or style content, with the title', async () => {
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/` });
    expect(out).toMatchObject({
      url: `${s.origin}/`,
      final_url: `${s.origin}/`,
      status: 200,
      content_type: 'text/html; charset=utf-8',
      title: 'Hello & welcome',
      truncated: false,
      redirects: [],
    });
    expect(out.bytes).toBe(Buffer.byteLength(PAGE));
    expect(out.text).toBe(`Heading\n\nSome bold text and a link [${s.origin}/next].\n\n * one\n * two`);
    expect(out.text).not.toMatch(/SCRIPT-CONTENT|MORE-SCRIPT|NOSCRIPT|color: red/);
    expect(out.json).toBeUndefined();
    expect(out.note).toBeUndefined();
  });

  it('parses JSON, with allow_cidrs as the exception instead of allow_hosts', async () => {
    const s = await site();
    const web = createWebModule({ settings: { allow_cidrs: ['127.0.0.1/32'] } });
    const out = await web.tools.fetch({ url: `${s.origin}/data.json` });
    expect(out.json).toEqual({ a: [1, 2, { b: null }], ok: true });
    expect(out.text).toBeUndefined();
    expect(out.content_type).toBe('application/json');
  });

  it('returns binary bodies as base64 and HTTP errors as results', async () => {
    const s = await site();
    const web = loopbackAllowed();
    const bin = await web.tools.fetch({ url: `${s.origin}/bin` });
    expect([bin.base64, bin.bytes, bin.text]).toEqual(['AAEC/w==', 4, undefined]);
    const missing = await web.tools.fetch({ url: `${s.origin}/missing` });
    expect([missing.status, missing.text]).toEqual([404, 'not here']);
  });

  it('HEAD answers status and headers without a body', async () => {
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/data.json`, method: 'HEAD' });
    expect(out.status).toBe(200);
    expect(out.bytes).toBe(0);
    expect(out.headers['content-type']).toBe('application/json');
    expect([out.text, out.json, out.base64]).toEqual([undefined, undefined, undefined]);
    expect(s.requests[0]?.method).toBe('HEAD');
  });
});

describe('web.fetch limits', () => {
  it('stops reading at max_bytes and says so: truncated, bytes read, the announced length and a note', async () => {
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/big`, max_bytes: 1000 });
    expect(out.truncated).toBe(true);
    expect(out.bytes).toBe(1000);
    expect(out.content_length).toBe(10_000);
    expect(out.text).toBe('x'.repeat(1000));
    expect(out.note).toBe('the body is larger than max_bytes (1000); only the first 1000 bytes were read');
  });

  it('the cap applies to decoded bytes (gzip), and a body exactly at the cap is not truncated', async () => {
    const s = await site();
    const web = loopbackAllowed({ max_bytes: 4096 });
    const gz = await web.tools.fetch({ url: `${s.origin}/gzip` });
    expect([gz.truncated, gz.bytes, gz.text]).toEqual([true, 4096, 'z'.repeat(4096)]);
    const exact = await web.tools.fetch({ url: `${s.origin}/big`, max_bytes: 10_000 });
    expect([exact.truncated, exact.bytes, exact.note]).toEqual([false, 10_000, undefined]);
  });

  it('a truncated JSON body comes back as text with a note, not parsed', async () => {
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/big.json`, max_bytes: 100 });
    expect(out.json).toBeUndefined();
    expect(out.text).toHaveLength(100);
    expect(out.note).toBe(
      'the body is larger than max_bytes (100); only the first 100 bytes were read; the JSON body was truncated, so it is returned as text, not parsed',
    );
  });

  it('a server that never answers → E_TIMEOUT', async () => {
    const s = await site();
    const err = await rejection(loopbackAllowed().tools.fetch({ url: `${s.origin}/hang`, timeout_ms: 200 }));
    expect(err.code).toBe('E_TIMEOUT');
    expect(err.details).toEqual({ url: `${s.origin}/hang`, timeout_ms: 200 });
  });

  it('the caller cancelling (ctx.signal) stops the fetch', async () => {
    const s = await site();
    const ctrl = new AbortController();
    const p = loopbackAllowed().tools.fetch({ url: `${s.origin}/hang` }, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(new Error('halt')), 50);
    expect((await rejection(p)).code).toBe('E_TIMEOUT');
  });

  it('a refused connection → E_MODULE_ERROR with the errno', async () => {
    const s = await site();
    const port = s.port;
    await s.close();
    servers.splice(0);
    const err = await rejection(loopbackAllowed().tools.fetch({ url: `http://127.0.0.1:${port}/` }));
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.details).toEqual({ url: `http://127.0.0.1:${port}/`, errno: 'ECONNREFUSED' });
  });
});

describe('web.fetch redirects', () => {
  it('follows redirects, listing each hop; 303 turns into GET', async () => {
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/to?u=/see-other` });
    expect(out.final_url).toBe(`${s.origin}/data.json`);
    expect(out.redirects).toEqual([
      { status: 302, url: `${s.origin}/to?u=/see-other`, location: `${s.origin}/see-other` },
      { status: 303, url: `${s.origin}/see-other`, location: `${s.origin}/data.json` },
    ]);
    expect(out.json).toEqual({ a: [1, 2, { b: null }], ok: true });
  });

  it('more than max_redirects → E_INVALID_ARGS listing the hops', async () => {
    const s = await site();
    const web = loopbackAllowed();
    const err = await rejection(web.tools.fetch({ url: `${s.origin}/loop` }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details.max_redirects).toBe(5);
    expect(err.details.redirects).toHaveLength(6);
    expect(s.requests).toHaveLength(6);
    const zero = await rejection(web.tools.fetch({ url: `${s.origin}/loop`, max_redirects: 0 }));
    expect([zero.code, zero.details.redirects.length]).toEqual(['E_INVALID_ARGS', 1]);
  });

  it('drops authorization and cookie headers when a redirect leaves the origin', async () => {
    const target = await server((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const s = await site();
    const out = await loopbackAllowed().tools.fetch({
      url: `${s.origin}/to?u=${target.origin}/`,
      headers: { Authorization: 'Bearer secret', Cookie: 'a=b', 'X-Trace': '1' },
    });
    expect(out.text).toBe('ok');
    expect(s.requests[0]?.headers.authorization).toBe('Bearer secret');
    expect(target.requests[0]?.headers.authorization).toBeUndefined();
    expect(target.requests[0]?.headers.cookie).toBeUndefined();
    expect(target.requests[0]?.headers['x-trace']).toBe('1');
  });
});

describe('web.fetch large HTML', () => {
  it('converts HTML above the worker threshold off-thread, with the same text as inline', async () => {
    const block = '<div><h2>Part</h2><p>Text with a <a href="/p">link</a>.</p><script>SCRIPT-CONTENT</script></div>\n';
    const html = `<html><head><title>Big</title></head><body>${block.repeat(Math.ceil((WORKER_THRESHOLD * 2) / block.length))}</body></html>`;
    const s = await server((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
    const out = await loopbackAllowed().tools.fetch({ url: `${s.origin}/` });
    expect(out.title).toBe('Big');
    expect(out.text).toBe(htmlToText(html, `${s.origin}/`));
    expect(out.text).not.toContain('SCRIPT-CONTENT');
    expect(out.text?.startsWith(`Part\n\nText with a link [${s.origin}/p].`)).toBe(true);
  });

  it('an aborted conversion rejects with the abort reason (the worker is terminated)', async () => {
    const html = `<p>${'word '.repeat(WORKER_THRESHOLD)}</p>`;
    const ctrl = new AbortController();
    const p = htmlToTextAsync(html, 'http://x/', ctrl.signal);
    ctrl.abort(new Error('deadline'));
    await expect(p).rejects.toThrow('deadline');
  });
});

import { afterEach, describe, expect, it } from 'vitest';

import { createWebModule } from '../src/index.js';
import { rejection, startServer, type TestServer } from './helpers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A SearXNG-compatible fake: GET /search?q=…&format=json → {results:[{title,url,content,engine}]}. */
async function searxng(status = 200): Promise<TestServer> {
  const s = await startServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname !== '/search' || u.searchParams.get('format') !== 'json') {
      res.writeHead(404).end();
      return;
    }
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>');
      return;
    }
    const q = u.searchParams.get('q');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        query: q,
        number_of_results: 3,
        results: [
          { title: `About ${q}`, url: 'https://a.example/1', content: 'First &amp; best result', engine: 'duckduckgo' },
          { title: '', url: 'https://b.example/2', engine: 'bing' },
          { title: 'no url' },
          { title: 'Third', url: 'https://c.example/3', content: 'third snippet', engine: 'google' },
        ],
      }),
    );
  });
  servers.push(s);
  return s;
}

describe('web.search', () => {
  it('queries a SearXNG-compatible backend on loopback (operator URLs skip the SSRF gate) and maps the items', async () => {
    const s = await searxng();
    const web = createWebModule({ settings: { searxng: { url: s.origin } } });
    const out = await web.tools.search({ query: 'finger hub' });
    expect(out).toEqual({
      items: [
        { title: 'About finger hub', url: 'https://a.example/1', snippet: 'First & best result', provider: 'searxng' },
        { title: 'https://b.example/2', url: 'https://b.example/2', snippet: '', provider: 'searxng' },
        { title: 'Third', url: 'https://c.example/3', snippet: 'third snippet', provider: 'searxng' },
      ],
    });
    expect(s.requests.map((r) => r.url)).toEqual(['/search?q=finger+hub&format=json']);
  });

  it('honours limit, and a base URL with a path', async () => {
    const s = await searxng();
    const web = createWebModule({ settings: { searxng: { url: `${s.origin}/` } } });
    const out = await web.tools.search({ query: 'q', limit: 1 });
    expect(out.items.map((i) => i.url)).toEqual(['https://a.example/1']);
  });

  it('with no backend configured fails with E_ROUTE_FAILED naming the setting', async () => {
    const err = await rejection(createWebModule().tools.search({ query: 'anything' }));
    expect(err.code).toBe('E_ROUTE_FAILED');
    expect(err.message).toBe(
      'web.search has no search backend configured: set modules.settings.web.searxng.url or modules.settings.web.brave.api_key in the daemon config',
    );
    expect(err.details).toEqual({
      setting: 'modules.settings.web.searxng.url',
      alternatives: ['modules.settings.web.brave.api_key'],
    });
  });

  it('search_backend naming an unconfigured backend fails with E_ROUTE_FAILED naming its setting', async () => {
    const s = await searxng();
    const web = createWebModule({ settings: { search_backend: 'brave', searxng: { url: s.origin } } });
    const err = await rejection(web.tools.search({ query: 'x' }));
    expect(err.code).toBe('E_ROUTE_FAILED');
    expect(err.details).toEqual({ setting: 'modules.settings.web.brave.api_key' });
    expect(s.requests).toEqual([]);
  });

  it('maps the Brave answer, sending the key as X-Subscription-Token and the count', async () => {
    const s = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          type: 'search',
          web: {
            results: [
              {
                title: 'Brave <strong>one</strong>',
                url: 'https://one.example/',
                description: 'The <strong>first</strong> hit',
              },
              { title: 'Two', url: 'https://two.example/', description: 'second' },
            ],
          },
        }),
      );
    });
    servers.push(s);
    const web = createWebModule({ settings: { brave: { api_key: 'KEY-123', url: `${s.origin}/res/v1/web/search` } } });
    const out = await web.tools.search({ query: 'node ssrf', limit: 30 });
    expect(out).toEqual({
      items: [
        { title: 'Brave one', url: 'https://one.example/', snippet: 'The first hit', provider: 'brave' },
        { title: 'Two', url: 'https://two.example/', snippet: 'second', provider: 'brave' },
      ],
    });
    expect(s.requests[0]?.url).toBe('/res/v1/web/search?q=node+ssrf&count=20');
    expect(s.requests[0]?.headers['x-subscription-token']).toBe('KEY-123');
  });

  it('a backend error status → E_MODULE_ERROR with the status (and a hint for SearXNG 403)', async () => {
    const s = await searxng(403);
    const web = createWebModule({ settings: { searxng: { url: s.origin } } });
    const err = await rejection(web.tools.search({ query: 'x' }));
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.message).toContain('HTTP 403');
    expect(err.message).toContain('search.formats');
    expect(err.details).toEqual({ provider: 'searxng', status: 403, body: '<h1>Forbidden</h1>' });
  });

  it('a backend that does not answer in search_timeout_ms → E_TIMEOUT; an oversized answer → E_MODULE_ERROR', async () => {
    const hang = await startServer(() => {});
    servers.push(hang);
    const slow = createWebModule({ settings: { searxng: { url: hang.origin }, search_timeout_ms: 150 } });
    expect((await rejection(slow.tools.search({ query: 'x' }))).code).toBe('E_TIMEOUT');

    const s = await searxng();
    const small = createWebModule({ settings: { searxng: { url: s.origin }, search_max_bytes: 50 } });
    const err = await rejection(small.tools.search({ query: 'x' }));
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.details).toEqual({ provider: 'searxng', max_bytes: 50 });
  });

  it('an empty query → E_INVALID_ARGS', async () => {
    const web = createWebModule({ settings: { searxng: { url: 'http://127.0.0.1:9/' } } });
    expect((await rejection(web.tools.search({ query: '  ' }))).code).toBe('E_INVALID_ARGS');
  });
});

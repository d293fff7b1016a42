// Which arguments are URLs (names, declared formats, nesting), how resolved host names are judged,
// and the bounded resolver (timeout, TTL cache, one lookup in flight per name).

import { describe, expect, it } from 'vitest';

import { HostResolver } from '../../src/net/host-resolver.js';
import { hostsToResolve, judgeUrls, urlArguments } from '../../src/net/url-args.js';

describe('urlArguments', () => {
  it('finds url/uri/endpoint/href by name at any depth, and strings declared format uri/url', () => {
    const schema = {
      type: 'object',
      properties: {
        target: { type: 'string', format: 'uri' },
        mirrors: { type: 'array', items: { type: 'string', format: 'url' } },
        note: { type: 'string' },
      },
    };
    const args = {
      target: 'https://Example.COM./a',
      mirrors: ['http://10.0.0.1/', 'nope'],
      note: 'http://127.0.0.1/ (not declared, not named: not judged)',
      request: { Endpoint: 'ws://db.internal:5432', links: [{ href: 'http://[::1]/' }] },
      uri: 'file:///etc/passwd',
    };
    expect(urlArguments(args, schema)).toEqual([
      { path: 'target', host: 'example.com', port: '', literal: false },
      { path: 'mirrors[0]', host: '10.0.0.1', port: '', literal: true },
      { path: 'request.Endpoint', host: 'db.internal', port: '5432', literal: false },
      { path: 'request.links[0].href', host: '::1', port: '', literal: true },
    ]);
    expect(hostsToResolve(urlArguments(args, schema))).toEqual(['example.com', 'db.internal']);
  });

  it('IDN hosts are judged in punycode; localhost and metadata names need no resolution', () => {
    const urls = urlArguments({
      url: 'https://bücher.example/',
      href: 'http://localhost:1/',
      uri: 'http://metadata/x',
    });
    expect(urls.map((u) => u.host)).toEqual(['xn--bcher-kva.example', 'localhost', 'metadata']);
    expect(hostsToResolve(urls)).toEqual(['xn--bcher-kva.example']);
  });
});

describe('judgeUrls after resolution', () => {
  const hosts = new Map([
    ['db.internal', { addresses: ['10.0.0.1'] }],
    ['mixed.example', { addresses: ['93.184.216.34', '192.168.0.7'] }],
    ['rebind.example', { addresses: ['::ffff:169.254.169.254'] }],
    ['public.example', { addresses: ['93.184.216.34', '2606:2800:220:1::1'] }],
    ['gone.example', { error: 'ENOTFOUND' }],
  ]);
  const judge = (args: unknown) => judgeUrls(urlArguments(args), hosts).map((f) => `${f.level} ${f.id}: ${f.reason}`);

  it('names the address a host name resolved to, and the host', () => {
    expect(judge({ url: 'http://db.internal/' })).toEqual([
      'APPROVE url.address: reaches a private address 10.0.0.1 (db.internal)',
    ]);
    expect(judge({ url: 'https://mixed.example:8443/' })).toEqual([
      'APPROVE url.address: reaches a private address 192.168.0.7:8443 (mixed.example)',
    ]);
    expect(judge({ url: 'http://rebind.example/latest/' })).toEqual([
      'APPROVE url.address: reaches a cloud metadata address 169.254.169.254 (rebind.example)',
    ]);
    expect(judge({ url: 'http://public.example/' })).toEqual([]);
  });

  it('a host that did not resolve, or was not resolved, is CONFIRM', () => {
    expect(judge({ url: 'http://gone.example/' })).toEqual([
      'CONFIRM url.unresolved: cannot resolve gone.example (ENOTFOUND)',
    ]);
    expect(judge({ endpoint: 'http://never.example/' })).toEqual([
      'CONFIRM url.unresolved: argument endpoint: cannot resolve never.example (not resolved before judging)',
    ]);
  });
});

describe('HostResolver', () => {
  it('caches answers for the TTL, failures for the shorter one, and asks once per name in flight', async () => {
    let t = 0;
    const asked: string[] = [];
    const r = new HostResolver({
      clock: { now: () => t },
      ttl_ms: 1000,
      negative_ttl_ms: 100,
      lookup: (h) => {
        asked.push(h);
        return h === 'bad.example'
          ? Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))
          : Promise.resolve(['10.0.0.1']);
      },
    });
    const both = await Promise.all([r.resolveAll(['a.example', 'bad.example']), r.resolve('a.example')]);
    expect([...both[0]]).toEqual([
      ['a.example', { addresses: ['10.0.0.1'] }],
      ['bad.example', { error: 'ENOTFOUND' }],
    ]);
    expect(both[1]).toEqual({ addresses: ['10.0.0.1'] });
    expect(asked).toEqual(['a.example', 'bad.example']);
    t = 500;
    await r.resolveAll(['a.example', 'bad.example']);
    expect(asked).toEqual(['a.example', 'bad.example', 'bad.example']);
    t = 1600;
    await r.resolve('a.example');
    expect(asked).toEqual(['a.example', 'bad.example', 'bad.example', 'a.example']);
  });

  it('a lookup that never answers ends at the timeout as an error', async () => {
    const r = new HostResolver({ timeout_ms: 20, lookup: () => new Promise(() => undefined) });
    expect(await r.resolve('slow.example')).toEqual({ error: 'no answer within 20 ms' });
  });

  it('an empty answer is no address', async () => {
    const r = new HostResolver({ lookup: () => Promise.resolve([]) });
    expect(await r.resolve('empty.example')).toEqual({ error: 'no address' });
  });
});

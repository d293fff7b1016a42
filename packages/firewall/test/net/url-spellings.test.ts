// The URL arguments (net/url-args.ts) judged with the one address classification
// (@finger/net-address, tested in packages/net-address/test): every spelling of an address the
// WHATWG URL parser accepts is judged as the address it names.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { addressClass } from '@finger/net-address';

import { judgeUrls, urlArguments } from '../../src/net/url-args.js';

const octet = fc.integer({ min: 0, max: 255 });
const v4 = fc.tuple(octet, octet, octet, octet);
const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });

/** The spellings of one IPv4 address that WHATWG's host parser (inet_aton forms) and IPv6 literals accept. */
function spellings([a, b, c, d]: [number, number, number, number]): string[] {
  const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const hex = (x: number) => x.toString(16);
  return [
    `${a}.${b}.${c}.${d}`,
    String(n),
    `0x${hex(n)}`,
    `0X${hex(n).toUpperCase()}`,
    `0${n.toString(8)}`,
    `0x${hex(a)}.0x${hex(b)}.0x${hex(c)}.0x${hex(d)}`,
    `0${a.toString(8)}.0${b.toString(8)}.0${c.toString(8)}.0${d.toString(8)}`,
    `${a}.${(b << 16) + (c << 8) + d}`,
    `${a}.${b}.${(c << 8) + d}`,
    `${a}.${b}.${c}.${d}.`,
    `[::ffff:${a}.${b}.${c}.${d}]`,
    `[::ffff:${hex((a << 8) + b)}:${hex((c << 8) + d)}]`,
    `[0:0:0:0:0:FFFF:${hex((a << 8) + b)}:${hex((c << 8) + d)}]`,
  ];
}

describe('URL arguments in every spelling', () => {
  it('every spelling of an IPv4 address is judged as the address (fast-check)', () => {
    fc.assert(
      fc.property(v4, port, (parts, p) => {
        const dotted = parts.join('.');
        const kind = addressClass(dotted).kind;
        const at = p === undefined ? '' : `:${p}`;
        for (const s of spellings(parts)) {
          const urls = urlArguments({ url: `http://${s}${at}/x` });
          expect(urls).toEqual([
            { path: 'url', host: expect.any(String), port: p === undefined ? '' : String(p), literal: true },
          ]);
          const found = judgeUrls(urls, undefined);
          if (kind === 'public') expect(found).toEqual([]);
          else expect(found.map((f) => f.level)).toEqual(['APPROVE']);
          expect(addressClass(urls[0]!.host).kind).toBe(kind);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('loopback, private and metadata addresses in any spelling, userinfo trick or case are APPROVE with the address', () => {
    const reasons = (url: string) => judgeUrls(urlArguments({ url }), undefined).map((f) => `${f.level}: ${f.reason}`);
    expect(reasons('http://2130706433:6379/')).toEqual(['APPROVE: reaches loopback 127.0.0.1:6379']);
    expect(reasons('http://0x7f.1/')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('http://0177.0.0.1/')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('http://127.1:80/')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('HTTP://[::ffff:7f00:1]:8080/')).toEqual(['APPROVE: reaches loopback 127.0.0.1:8080']);
    expect(reasons('http://[::1]:8080/')).toEqual(['APPROVE: reaches loopback [::1]:8080']);
    expect(reasons('http://good.com@127.0.0.1/')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('http://user:pw@10.0.0.1./a')).toEqual(['APPROVE: reaches a private address 10.0.0.1']);
    expect(reasons('http://0xa9fea9fe/latest/meta-data/')).toEqual([
      'APPROVE: reaches a cloud metadata address 169.254.169.254',
    ]);
    expect(reasons('http://[fd00:ec2::254]/')).toEqual(['APPROVE: reaches a cloud metadata address fd00:ec2::254']);
    expect(reasons('http://METADATA.google.internal./computeMetadata/v1/')).toEqual([
      'APPROVE: reaches a cloud metadata address metadata.google.internal',
    ]);
    expect(reasons('http://100.100.100.200/')).toEqual(['APPROVE: reaches a cloud metadata address 100.100.100.200']);
    expect(reasons('http://LOCALHOST.:3000/')).toEqual(['APPROVE: reaches loopback localhost:3000']);
    expect(reasons('http://api.localhost/')).toEqual(['APPROVE: reaches loopback api.localhost']);
    expect(reasons('http://0.0.0.0:8080/')).toEqual(['APPROVE: reaches an unspecified address 0.0.0.0:8080']);
    expect(reasons('http://169.254.10.1/')).toEqual(['APPROVE: reaches a link-local address 169.254.10.1']);
    expect(reasons('http://100.64.1.1/')).toEqual(['APPROVE: reaches a private address 100.64.1.1']);
    expect(reasons('http://[fc00::5]/')).toEqual(['APPROVE: reaches a private address fc00::5']);
    expect(reasons('http://224.0.0.1/')).toEqual(['APPROVE: reaches a special-purpose address 224.0.0.1 [multicast]']);
    expect(reasons('ht\ntp://127.0.0.1/')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('  wss://127.0.0.1/socket')).toEqual(['APPROVE: reaches loopback 127.0.0.1']);
    expect(reasons('http://93.184.216.34/')).toEqual([]);
    expect(reasons('ftp://127.0.0.1/')).toEqual([]);
    expect(reasons('not a url 127.0.0.1')).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';

import { AddressPolicy, classifyAddress, createWebModule } from '../src/index.js';

describe('classifyAddress', () => {
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b:1::1', 'NAT64'],
    ['2002:0a00:0001::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['::7f00:1', 'IPv4-compatible'],
    ['::127.0.0.1', 'loopback'],
    ['2001:db8::1', 'reserved'],
    ['not-an-ip', 'not an IP address'],
  ];
  it.each(refused)('refuses %s (%s)', (address, reason) => {
    const v = classifyAddress(address);
    expect(v.allowed).toBe(false);
    expect(v.allowed ? '' : v.reason).toContain(reason);
  });

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:0808:0808::1',
  ];
  it.each(allowed)('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });
});

describe('AddressPolicy', () => {
  it('allow_cidrs lets a range through, in IPv4 and IPv4-mapped form, and nothing else', () => {
    const p = new AddressPolicy({ allow_cidrs: ['10.0.0.0/8', '::1'] });
    expect(p.checkAddress('10.9.8.7')).toEqual({ allowed: true });
    expect(p.checkAddress('::ffff:10.9.8.7')).toEqual({ allowed: true });
    expect(p.checkAddress('::1')).toEqual({ allowed: true });
    expect(p.checkAddress('127.0.0.1').allowed).toBe(false);
    expect(p.checkAddress('192.168.0.1').allowed).toBe(false);
  });

  it('allow_hosts matches exact names case-insensitively, *.suffix wildcards and IP literals', () => {
    const p = new AddressPolicy({ allow_hosts: ['Intranet.Example', '*.corp.test', '127.0.0.1'] });
    expect(p.isHostAllowed('intranet.example')).toBe(true);
    expect(p.isHostAllowed('intranet.example.')).toBe(true);
    expect(p.isHostAllowed('a.b.corp.test')).toBe(true);
    expect(p.isHostAllowed('corp.test')).toBe(false);
    expect(p.isHostAllowed('evilcorp.test')).toBe(false);
    expect(p.isHostAllowed('127.0.0.1')).toBe(true);
    expect(p.isHostAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(p.isHostAllowed('127.0.0.2')).toBe(false);
  });

  it('a malformed allow_cidrs entry fails the module start with E_MODULE_UNHEALTHY naming it', () => {
    expect(() => new AddressPolicy({ allow_cidrs: ['10.0.0.0/33'] })).toThrow(/10\.0\.0\.0\/33/);
    let code = '';
    try {
      createWebModule({ settings: { allow_cidrs: ['nonsense'] } });
    } catch (e) {
      code = (e as { code: string }).code;
      expect((e as Error).message).toContain('"nonsense"');
    }
    expect(code).toBe('E_MODULE_UNHEALTHY');
  });

  it('other malformed settings are refused with the key named', () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ allow_hosts: 'x' }, 'allow_hosts'],
      [{ max_bytes: -1 }, 'max_bytes'],
      [{ searxng: { url: 'ftp://x' } }, 'searxng.url'],
      [{ search_backend: 'google' }, 'search_backend'],
      [{ hosts: { 'a.test': ['not-ip'] } }, 'hosts.a.test'],
    ];
    for (const [settings, key] of bad) {
      try {
        createWebModule({ settings });
        expect.unreachable(`settings ${JSON.stringify(settings)} were accepted`);
      } catch (e) {
        expect((e as { code: string }).code).toBe('E_MODULE_UNHEALTHY');
        expect((e as { details: unknown }).details).toEqual({ setting: key });
      }
    }
  });
});

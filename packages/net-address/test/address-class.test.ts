// The one address classification (src/address-class.ts): how each range that is not global
// unicast is named, and the firewall's view (addressClass) and the web module's SSRF gate
// (classifyAddress) agree on every address.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { addressClass, classifyAddress } from '../src/index.js';

/** A list of addresses that are not global unicast, with how the firewall names them. */
const NOT_GLOBAL: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['::1', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['169.254.1.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['10.0.0.1', 'private'],
  ['172.16.5.4', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['224.0.0.1', 'special'],
  ['255.255.255.255', 'special'],
  ['192.0.2.1', 'special'],
  ['2001:db8::1', 'special'],
];

describe('addressClass', () => {
  it.each(NOT_GLOBAL)('%s is %s', (address, kind) => {
    expect(addressClass(address).kind).toBe(kind);
    expect(classifyAddress(address).allowed).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '1.1.1.1'])('%s is public', (address) => {
    expect(addressClass(address)).toEqual({ kind: 'public' });
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it('the firewall and the web module agree on every IPv4 and IPv6 address', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        expect(addressClass(address).kind === 'public').toBe(classifyAddress(address).allowed);
      }),
      { numRuns: 2000 },
    );
  });
});

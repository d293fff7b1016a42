/**
 * The one classification of network addresses: which addresses are global unicast, and what the
 * others are (loopback, link-local, private, unspecified, cloud metadata…). Pure logic, no I/O.
 * Two users: the firewall, which holds a URL argument that reaches a non-global address
 * (net/url-args.ts), and the `web` module's SSRF gate, which refuses to connect to one unless the
 * operator allows it by host name (`allow_hosts`) or by range (`allow_cidrs`) — {@link AddressPolicy}.
 * Both judge the same address the same way because both call this file (`@finger/net-address`, which
 * the firewall imports as well).
 */
import net from 'node:net';

import ipaddr from 'ipaddr.js';

import { metadataHost } from './cloud-metadata.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The verdict on one address: allowed, or refused with the name of the range it falls in. */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Operator exceptions to the policy (settings `allow_hosts` and `allow_cidrs`). */
export interface AddressPolicyOptions {
  /** Host names (exact, case-insensitive, or `*.example.com` for every subdomain) and IP literals. */
  allow_hosts?: readonly string[];
  /** Ranges such as `10.0.0.0/8` or `::1/128`; a bare address means that one address. */
  allow_cidrs?: readonly string[];
}

/** Readable names of ipaddr.js range names, used in `details.reason` of E_FORBIDDEN. */
const REASONS: Record<string, string> = {
  unspecified: 'unspecified address (0.0.0.0/8, ::)',
  broadcast: 'broadcast address',
  multicast: 'multicast address',
  linkLocal: 'link-local address (169.254.0.0/16, fe80::/10)',
  loopback: 'loopback address (127.0.0.0/8, ::1)',
  carrierGradeNat: 'shared address space (CGNAT 100.64.0.0/10)',
  private: 'private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
  uniqueLocal: 'private address (unique local fc00::/7)',
  deprecatedSiteLocal: 'private address (site-local fec0::/10)',
  reserved: 'reserved or documentation range',
  benchmarking: 'benchmarking range',
  teredo: 'Teredo tunnel address (2001::/32)',
  rfc6052: 'NAT64 local-use range (64:ff9b:1::/48)',
  ipv4Compatible: 'IPv4-compatible IPv6 address (::/96, deprecated)',
};

/** Parses an IP literal, normalising IPv4-mapped IPv6 (`::ffff:a.b.c.d`) to IPv4. */
export function parseAddress(text: string): Address | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (net.isIP(bare) === 0) return null;
  try {
    return ipaddr.process(bare);
  } catch {
    return null;
  }
}

/** The canonical text of an IP literal (IPv4-mapped IPv6 becomes IPv4), or the input when not an IP. */
export function canonicalAddress(text: string): string {
  return parseAddress(text)?.toString() ?? text;
}

/** The IPv4 address embedded in a translation prefix (SIIT, NAT64 /96, 6to4), when there is one. */
function embeddedIPv4(a: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === 'rfc6145') return v4(p[6] ?? 0, p[7] ?? 0);
  if (range === 'rfc6052' && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return v4(p[6] ?? 0, p[7] ?? 0);
  if (range === '6to4') return v4(p[1] ?? 0, p[2] ?? 0);
  return null;
}

/** The IPv4 address an IPv6 translation form (SIIT, NAT64 /96, 6to4) carries, or null. */
function embedded(a: Address): ipaddr.IPv4 | null {
  return a.kind() === 'ipv6' ? embeddedIPv4(a as ipaddr.IPv6, (a as ipaddr.IPv6).range()) : null;
}

/** The range name of an address; `unicast` means globally routable. */
function rangeOf(a: Address): string {
  if (a.kind() === 'ipv4') return a.range();
  const v6 = a as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'unicast' && v6.parts.slice(0, 6).every((x) => x === 0)) return 'ipv4Compatible';
  const inner = embeddedIPv4(v6, range);
  if (inner !== null) return inner.range();
  return range;
}

/**
 * Classifies one address without exceptions: global unicast → allowed; loopback, link-local,
 * private, CGNAT, unspecified, multicast, broadcast, reserved, documentation, and IPv6 forms that
 * embed one of those (IPv4-mapped, NAT64, 6to4) → refused. Unparseable text is refused.
 */
export function classifyAddress(text: string): AddressVerdict {
  const a = parseAddress(text);
  if (a === null) return { allowed: false, reason: 'not an IP address' };
  const range = rangeOf(a);
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: REASONS[range] ?? `special-purpose range (${range})` };
}

/** What a non-global address is, as a person reads it in a hold's reason. */
export type AddressKind = 'metadata' | 'loopback' | 'link-local' | 'private' | 'unspecified' | 'special';

/** The kind of an address, or `public` (global unicast); `range` is ipaddr.js's name, `metadata` the endpoint. */
export type AddressClass = { kind: 'public' } | { kind: AddressKind; range: string; metadata?: string };

const KIND_OF_RANGE: Record<string, AddressKind> = {
  loopback: 'loopback',
  linkLocal: 'link-local',
  private: 'private',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  carrierGradeNat: 'private',
  unspecified: 'unspecified',
};

/**
 * The class of one IP literal (any spelling `net.isIP` accepts, brackets allowed; IPv4-mapped and
 * translated IPv6 forms are judged by the IPv4 address they carry). A cloud metadata endpoint
 * (169.254.169.254, fd00:ec2::254, 100.100.100.200… — risk/cloud-metadata.ts's list) is
 * `metadata` before its range; unparseable text is `special` (never `public`).
 */
export function addressClass(text: string): AddressClass {
  const a = parseAddress(text);
  if (a === null) return { kind: 'special', range: 'not an IP address' };
  const range = rangeOf(a);
  const meta = metadataHost(a.toString()) ?? metadataHost(embedded(a)?.toString() ?? '');
  if (meta !== null) return { kind: 'metadata', range, metadata: meta };
  if (range === 'unicast') return { kind: 'public' };
  return { kind: KIND_OF_RANGE[range] ?? 'special', range };
}

/**
 * The compiled policy. `checkHost` is asked first with the URL's host name (an allowed host skips
 * the address checks); `checkAddress` then judges every resolved address.
 */
export class AddressPolicy {
  readonly #exactHosts = new Set<string>();
  readonly #suffixes: string[] = [];
  readonly #cidrs: Array<[Address, number]> = [];

  /** Throws a plain Error naming the bad entry when an `allow_cidrs` entry does not parse. */
  constructor(opts: AddressPolicyOptions = {}) {
    for (const h of opts.allow_hosts ?? []) {
      const host = h.trim().toLowerCase();
      if (host.startsWith('*.')) this.#suffixes.push(host.slice(1));
      else this.#exactHosts.add(canonicalAddress(host));
    }
    for (const c of opts.allow_cidrs ?? []) {
      this.#cidrs.push(parseCidr(c));
    }
  }

  /** True when the operator allowed this host name (or IP literal) by `allow_hosts`. */
  isHostAllowed(hostname: string): boolean {
    const host = canonicalAddress(hostname.toLowerCase().replace(/\.$/, ''));
    if (this.#exactHosts.has(host)) return true;
    return this.#suffixes.some((s) => host.endsWith(s));
  }

  /** The verdict on one resolved address: `allow_cidrs` first, then {@link classifyAddress}. */
  checkAddress(address: string): AddressVerdict {
    const a = parseAddress(address);
    if (a !== null) {
      for (const [net, bits] of this.#cidrs) {
        if (net.kind() === a.kind() && a.match(net, bits)) return { allowed: true };
      }
    }
    return classifyAddress(address);
  }
}

/** Parses `a.b.c.d/n`, `x::y/n` or a bare address (a /32 or /128). Throws on anything else. */
function parseCidr(text: string): [Address, number] {
  const t = text.trim();
  if (t.includes('/')) {
    try {
      const [net, bits] = ipaddr.parseCIDR(t);
      if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(net as ipaddr.IPv6).toIPv4Address(), bits - 96];
      }
      return [net, bits];
    } catch {
      throw new Error(`allow_cidrs entry "${text}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    }
  }
  const a = parseAddress(t);
  if (a === null) throw new Error(`allow_cidrs entry "${text}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
  return [a, a.kind() === 'ipv4' ? 32 : 128];
}

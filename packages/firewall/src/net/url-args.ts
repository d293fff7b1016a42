// Which arguments of a call are URLs, and what the firewall says of the addresses they reach.
// Pure: the host names are resolved before the engine runs (net/host-resolver.ts, called by the
// interceptor) and come in as `ToolCallFacts.hosts`. A URL argument is a string that the WHATWG URL
// parser (`new URL`) reads as http(s) or ws(s) and that is either declared as a URL in the tool's
// input schema (`format: "uri"`, `"url"`, `"uri-reference"`, `"iri"`, `"iri-reference"`) or held by
// a property named `url`, `uri`, `endpoint` or `href` — at any depth (MCP tools nest them). The
// parser normalises every spelling of a host (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`,
// `[::ffff:7f00:1]`, upper case, IDN, `user@host` — the host is what follows the `@`), so only its
// result is judged. docs/policy.md, "URLs".

import net from 'node:net';

import { metadataHost } from '@finger/net-address';
import { addressClass, type AddressKind, canonicalAddress } from '@finger/net-address';

/** What the resolver found for one host name: its addresses, or why there are none. */
export type HostResolution = { addresses: readonly string[] } | { error: string };

/** Host name (as {@link UrlArgument.host}) → what it resolved to, for one call. */
export type ResolvedHosts = ReadonlyMap<string, HostResolution>;

/** One URL argument of a call. */
export interface UrlArgument {
  /** Where it is in the arguments: `url`, `request.endpoint`, `links[2]`. */
  path: string;
  /** The parsed URL's host: lower case, punycode, IPv4 in dotted form, IPv6 without brackets, no trailing dot. */
  host: string;
  /** The URL's explicit port, `''` when it has none. */
  port: string;
  /** True when {@link host} is an IP literal (judged without resolving). */
  literal: boolean;
}

/** One contribution of a URL argument (`url.address` APPROVE, `url.unresolved` CONFIRM). */
export interface UrlFinding {
  id: 'url.address' | 'url.unresolved';
  level: 'APPROVE' | 'CONFIRM';
  reason: string;
}

const URL_NAMES: ReadonlySet<string> = new Set(['url', 'uri', 'endpoint', 'href']);
const URL_FORMATS: ReadonlySet<string> = new Set(['uri', 'url', 'uri-reference', 'iri', 'iri-reference']);
const SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'ws:', 'wss:']);
/** What the WHATWG parser ignores at the start of a URL (C0 controls, space) and anywhere (tab, CR, LF). */
const STRIPPED = /[\t\n\r]/g;
const MAX_DEPTH = 8;
/** Bound of the strings one call's arguments are searched through (and of the URLs judged). */
const MAX_STRINGS = 512;

function isUrlSchema(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const f = (schema as { format?: unknown }).format;
  return typeof f === 'string' && URL_FORMATS.has(f);
}

function childSchema(schema: unknown, key: string | number): unknown {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as { properties?: Record<string, unknown>; items?: unknown };
  if (typeof key === 'number') return Array.isArray(s.items) ? undefined : s.items;
  const p = s.properties;
  return typeof p === 'object' && p !== null && Object.hasOwn(p, key) ? p[key] : undefined;
}

/** The http(s)/ws(s) URL `text` is for the WHATWG parser, or null. */
export function parseHttpUrl(text: string): URL | null {
  // a quick test first: most strings are no URL (the parser also drops tabs and newlines anywhere)
  const t = text.replace(STRIPPED, '').trimStart();
  if (!/^(?:https?|wss?):/i.test(t)) return null;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  return SCHEMES.has(u.protocol) && u.hostname !== '' ? u : null;
}

/** The host of a parsed URL as the firewall names it (no brackets, no trailing dot). */
function hostOf(u: URL): string {
  let h = u.hostname;
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.') && h.length > 1) h = h.slice(0, -1);
  return h;
}

/**
 * Every URL argument of `args` (see the file comment), in the order met; at most 512 strings are
 * looked at. `schema` is the tool's input schema (its `properties`/`items` are followed).
 */
export function urlArguments(args: unknown, schema?: Record<string, unknown>): UrlArgument[] {
  const out: UrlArgument[] = [];
  let budget = MAX_STRINGS;
  const visit = (value: unknown, s: unknown, path: string, named: boolean, depth: number): void => {
    if (budget <= 0) return;
    if (typeof value === 'string') {
      budget--;
      if (!named && !isUrlSchema(s)) return;
      const u = parseHttpUrl(value);
      if (u === null) return;
      const host = hostOf(u);
      out.push({ path, host, port: u.port, literal: net.isIP(host) !== 0 });
      return;
    }
    if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      const items = childSchema(s, 0);
      value.forEach((v, i) => visit(v, items, `${path}[${i}]`, named, depth + 1));
      return;
    }
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      visit(v, childSchema(s, k), path === '' ? k : `${path}.${k}`, URL_NAMES.has(k.toLowerCase()), depth + 1);
    }
  };
  visit(args, schema, '', false, 0);
  return out;
}

/** The host names among `urls` that must be resolved before judging (not IP literals, not judged by name). */
export function hostsToResolve(urls: readonly UrlArgument[]): string[] {
  const out = new Set<string>();
  for (const u of urls) if (!u.literal && byName(u.host) === null) out.add(u.host);
  return [...out];
}

/** What a host is by its name alone: a cloud metadata name, or loopback (`localhost`, `*.localhost`, RFC 6761). */
function byName(host: string): { kind: 'metadata' | 'loopback'; name: string } | null {
  const meta = metadataHost(host);
  if (meta !== null) return { kind: 'metadata', name: meta };
  if (host === 'localhost' || host.endsWith('.localhost')) return { kind: 'loopback', name: host };
  return null;
}

const WHAT: Readonly<Record<AddressKind, string>> = {
  metadata: 'a cloud metadata address',
  loopback: 'loopback',
  'link-local': 'a link-local address',
  private: 'a private address',
  unspecified: 'an unspecified address',
  special: 'a special-purpose address',
};
/** Which non-global address names a URL when its host has several: the most telling first. */
const PRIORITY: readonly AddressKind[] = ['metadata', 'loopback', 'unspecified', 'link-local', 'private', 'special'];

function where(address: string, port: string): string {
  if (port === '') return address;
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

function prefix(path: string): string {
  return path === 'url' ? '' : `argument ${path}: `;
}

/** The finding of one URL argument, or null when it reaches only global unicast addresses. */
function judgeOne(u: UrlArgument, hosts: ResolvedHosts | undefined): UrlFinding | null {
  const approve = (reason: string): UrlFinding => ({
    id: 'url.address',
    level: 'APPROVE',
    reason: prefix(u.path) + reason,
  });
  const named = u.literal ? null : byName(u.host);
  if (named !== null) return approve(`reaches ${WHAT[named.kind]} ${where(named.name, u.port)}`);
  let addresses: readonly string[];
  if (u.literal) addresses = [u.host];
  else {
    const r = hosts?.get(u.host);
    const why = r === undefined ? 'not resolved before judging' : 'error' in r ? r.error : 'no address';
    if (r === undefined || 'error' in r || r.addresses.length === 0)
      return { id: 'url.unresolved', level: 'CONFIRM', reason: `${prefix(u.path)}cannot resolve ${u.host} (${why})` };
    addresses = r.addresses;
  }
  let best: { kind: AddressKind; address: string; range: string } | undefined;
  for (const a of addresses) {
    const c = addressClass(a);
    if (c.kind === 'public') continue;
    if (best === undefined || PRIORITY.indexOf(c.kind) < PRIORITY.indexOf(best.kind))
      best = { kind: c.kind, address: c.metadata ?? canonicalAddress(a), range: c.range };
  }
  if (best === undefined) return null;
  const via = u.literal ? '' : ` (${u.host})`;
  const range = best.kind === 'special' ? ` [${best.range}]` : '';
  return approve(`reaches ${WHAT[best.kind]} ${where(best.address, u.port)}${range}${via}`);
}

/**
 * What the URL arguments contribute: APPROVE (`url.address`) for each that reaches a loopback,
 * link-local, private (RFC 1918, ULA, CGNAT), unspecified, cloud metadata or other non-global
 * address — an IP literal, `localhost`, a metadata name, or a host name any of whose resolved
 * addresses is one; CONFIRM (`url.unresolved`) for a host name `hosts` has no address for. A URL
 * that reaches only global unicast addresses contributes nothing. The reason names the address
 * ("reaches loopback 127.0.0.1:6379", "reaches a private address 10.0.0.1 (db.internal)").
 */
export function judgeUrls(urls: readonly UrlArgument[], hosts: ResolvedHosts | undefined): UrlFinding[] {
  const out: UrlFinding[] = [];
  const seen = new Set<string>();
  for (const u of urls) {
    const f = judgeOne(u, hosts);
    if (f === null || seen.has(f.reason)) continue;
    seen.add(f.reason);
    out.push(f);
  }
  return out;
}

import type { FastifyInstance, FastifyRequest } from 'fastify';

import { FingerError } from '@finger/protocol';

/** A Host header: a name or IP literal, then an optional port. Anything else is refused unparsed. */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/**
 * {@link hostnameOf}'s answers by authority (null: not a host): every request names one of a
 * few, and a WHATWG URL parse per request cost ≈ 0.25 µs. Cleared whole past its bound.
 */
const seenHosts = new Map<string, string | null>();
const MAX_SEEN_HOSTS = 64;

/** Which names the Host header (and the Origin of a WebSocket upgrade) may carry. */
export interface HostPolicy {
  /** Whether requests are checked at all: on loopback always, elsewhere only with `allowed_hosts` set. */
  readonly enforce: boolean;
  /** Names accepted besides the loopback ones: `server.host` and `server.allowed_hosts`, normalised. */
  readonly names: ReadonlySet<string>;
}

/**
 * The host name of `authority` (`name`, `name:port`, `[v6]:port`) as WHATWG URL normalises it
 * (lower case; IPv6 in brackets, compressed; numeric IPv4 forms dotted), or undefined when it is
 * not one.
 */
export function hostnameOf(authority: string): string | undefined {
  const known = seenHosts.get(authority);
  if (known !== undefined) return known === null ? undefined : known;
  let hostname: string | undefined;
  if (HOST_HEADER.test(authority)) {
    try {
      hostname = new URL(`http://${authority}`).hostname;
    } catch {
      hostname = undefined;
    }
  }
  if (seenHosts.size >= MAX_SEEN_HOSTS) seenHosts.clear();
  seenHosts.set(authority, hostname ?? null);
  return hostname;
}

/** A configured name (`server.host`, an `allowed_hosts` entry) normalised like {@link hostnameOf}. */
function normalise(name: string): string | undefined {
  const bare = name.startsWith('[') ? name : name.includes(':') ? `[${name}]` : name;
  return hostnameOf(bare);
}

/** True for `localhost`, 127.0.0.0/8 and `[::1]` (a normalised host name). */
export function isLoopbackName(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The policy of a daemon listening on `host`: one bound to a loopback address refuses every Host
 * that is not a loopback name, `host` itself or an `allowed_hosts` entry (DNS rebinding: a web page
 * whose name was re-pointed at 127.0.0.1 is same-origin with the daemon in the browser's eyes, but
 * its requests still carry its own name). One bound elsewhere checks only when `allowed_hosts` is set.
 */
export function hostPolicy(server: { host: string; allowed_hosts?: readonly string[] }): HostPolicy {
  const names = new Set<string>();
  const own = normalise(server.host);
  const wildcard = server.host === '0.0.0.0' || server.host === '::' || server.host === '[::]';
  if (own !== undefined && !wildcard) names.add(own);
  const extra = server.allowed_hosts ?? [];
  for (const n of extra) {
    const h = normalise(n);
    if (h !== undefined) names.add(h);
  }
  const loopback = own !== undefined && isLoopbackName(own);
  return { enforce: loopback || extra.length > 0, names };
}

/** True when `hostname` (normalised) may be named in a request under `policy`. */
export function hostAllowed(policy: HostPolicy, hostname: string): boolean {
  return isLoopbackName(hostname) || policy.names.has(hostname);
}

function isUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * Installs an `onRequest` hook, to run before authentication, that refuses with 403 E_FORBIDDEN
 * (`details.reason: "host_not_allowed"`) a request whose Host header `policy` does not accept
 * (missing or malformed included), and a WebSocket upgrade whose `Origin` is neither the daemon's
 * own page (the Host's name) nor, under an enforced policy, an accepted name
 * (`details.reason: "origin_not_allowed"`; an upgrade without Origin — a non-browser client — passes).
 */
export function installHostCheck(app: FastifyInstance, policy: HostPolicy): void {
  // every request passes here: a callback-style hook, no promise per request
  app.addHook('onRequest', (request, _reply, done) => {
    let refusal: FingerError | undefined;
    try {
      checkHost(request, policy);
    } catch (e) {
      refusal = e as FingerError;
    }
    if (refusal === undefined) done();
    else done(refusal);
  });
}

/** Throws the 403 of {@link installHostCheck} for a request `policy` refuses. */
function checkHost(request: FastifyRequest, policy: HostPolicy): void {
  const header = request.headers.host;
  const hostname = header === undefined ? undefined : hostnameOf(header);
  if (policy.enforce && (hostname === undefined || !hostAllowed(policy, hostname))) {
    throw new FingerError(
      'E_FORBIDDEN',
      `Host ${JSON.stringify(header ?? '')} is not a name of this daemon (loopback names, server.host or server.allowed_hosts)`,
      { reason: 'host_not_allowed', host: header ?? null },
    );
  }
  const origin = request.headers.origin;
  if (origin === undefined || !isUpgrade(request)) return;
  let originHost: string | undefined;
  try {
    const u = new URL(origin);
    if (u.protocol === 'http:' || u.protocol === 'https:') originHost = u.hostname;
  } catch {
    originHost = undefined;
  }
  const sameHost = originHost !== undefined && originHost === hostname;
  if (originHost === undefined || !(sameHost || (policy.enforce && hostAllowed(policy, originHost)))) {
    throw new FingerError(
      'E_FORBIDDEN',
      `WebSocket from origin ${JSON.stringify(origin)} refused: a page may open one only from the daemon's own names`,
      { reason: 'origin_not_allowed', origin },
    );
  }
}

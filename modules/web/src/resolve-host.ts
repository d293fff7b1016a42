/**
 * The SSRF gate of one hop: resolve the URL's host once, judge every address, and hand back the
 * checked addresses so the connection is pinned to them (no second DNS answer can sneak in).
 * The firewall judged the first hop's host before the call ran (`@finger/firewall`, net/url-args.ts:
 * a loopback, private or metadata address is held at APPROVE); it judges with the same
 * classification (`@finger/net-address`) but its own lookup. This gate resolves again and judges
 * again, and the connection goes only to what this gate checked: a name whose answer changed
 * between the two (DNS rebinding) is refused here, whatever the firewall saw.
 */
import dns from 'node:dns';
import net from 'node:net';

import { type AddressPolicy, classifyAddress } from '@finger/net-address';
import { FingerError } from '@finger/protocol';

import { bareHostname, type ResolvedAddress } from './http-client.js';

/**
 * Resolves a host name to every address it has. Injectable (factory option `lookup`) so tests can
 * map a public-looking name to a private address; the default is node's `dns.lookup` with
 * `all: true`, which is what node itself would use to connect.
 */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** node's resolver (`dns.lookup(host, {all: true, verbatim: true})`). */
export const systemLookup: HostLookup = async (hostname) => {
  const list = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** What the gate needs besides the URL. */
export interface HostGate {
  policy: AddressPolicy;
  /** Static name → addresses map (setting `hosts`), consulted before `lookup`. */
  hosts: Readonly<Record<string, readonly string[]>>;
  lookup: HostLookup;
  /**
   * finger's own daemon's ports (live: known once it listens). A request to a non-global address
   * (loopback, unspecified, private — what `allow_cidrs` may open) on one of them is refused
   * whatever the operator allowed: an agent must not govern its own firewall.
   */
  daemonPorts?: () => readonly number[];
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** The reason a request to finger's own daemon is refused (`details.reason` of E_FORBIDDEN). */
export const OWN_DAEMON = "finger's own daemon (an agent must not govern its own firewall)";

/** Whether `address` on the URL's port is finger's own daemon (a local address on one of its ports). */
function ownDaemon(url: URL, address: string, gate: HostGate): boolean {
  const ports = gate.daemonPorts?.() ?? [];
  if (ports.length === 0) return false;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return ports.includes(port) && !classifyAddress(address).allowed;
}

/** E_FORBIDDEN for a request to finger's own daemon, `details.reason` {@link OWN_DAEMON}. */
function refuseOwnDaemon(url: URL, address: string): FingerError {
  return new FingerError('E_FORBIDDEN', `refused to fetch ${url.href}: ${address} is ${OWN_DAEMON}`, {
    url: url.href,
    address,
    reason: OWN_DAEMON,
  });
}

function refuse(url: URL, address: string, reason: string): FingerError {
  return new FingerError('E_FORBIDDEN', `refused to fetch ${url.href}: ${address} is a ${reason}`, {
    url: url.href,
    address,
    reason,
  });
}

/**
 * Checks one hop. Returns `undefined` for an IP literal (node connects to it without DNS) and the
 * addresses to pin otherwise. Rejects E_FORBIDDEN `{url, address, reason}` when the host is not
 * allowed by name and any of its addresses is refused (a mixed public/private answer is refused
 * whole); rejects with the resolver's error (ENOTFOUND …) when the name does not resolve.
 */
export async function checkHop(url: URL, gate: HostGate, signal: AbortSignal): Promise<ResolvedAddress[] | undefined> {
  const host = bareHostname(url);
  const byName = gate.policy.isHostAllowed(host);
  if (net.isIP(host) !== 0) {
    if (ownDaemon(url, host, gate)) throw refuseOwnDaemon(url, host);
    if (!byName) {
      const v = gate.policy.checkAddress(host);
      if (!v.allowed) throw refuse(url, host, v.reason);
    }
    return undefined;
  }
  const key = host.toLowerCase().replace(/\.$/, '');
  const fixed = gate.hosts[key];
  const addresses: ResolvedAddress[] =
    fixed !== undefined
      ? fixed.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }))
      : await raceAbort(gate.lookup(host), signal);
  const usable = addresses.filter((a) => net.isIP(a.address) !== 0);
  if (usable.length === 0) {
    throw Object.assign(new Error(`${host} did not resolve to any address`), { code: 'ENOTFOUND' });
  }
  for (const a of usable) if (ownDaemon(url, a.address, gate)) throw refuseOwnDaemon(url, a.address);
  if (!byName) {
    for (const a of usable) {
      const v = gate.policy.checkAddress(a.address);
      if (!v.allowed) throw refuse(url, a.address, v.reason);
    }
  }
  return usable.map((a) => ({ address: a.address, family: net.isIPv6(a.address) ? 6 : 4 }));
}

/**
 * The SSRF gate of one hop: resolve the URL's host once, judge every address, and hand back the
 * checked addresses so the connection is pinned to them (no second DNS answer can sneak in).
 */
import dns from 'node:dns';
import net from 'node:net';

import { FingerError } from '@finger/protocol';

import type { AddressPolicy } from './address-policy.js';
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
  if (!byName) {
    for (const a of usable) {
      const v = gate.policy.checkAddress(a.address);
      if (!v.allowed) throw refuse(url, a.address, v.reason);
    }
  }
  return usable.map((a) => ({ address: a.address, family: net.isIPv6(a.address) ? 6 : 4 }));
}

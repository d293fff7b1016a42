// Resolves the host names of a call's URL arguments before the (synchronous) engine judges them:
// bounded — each lookup waits at most `timeout_ms` (default 2 s), answers are kept `ttl_ms`
// (default 30 s; failures 5 s) in a cache of at most `max_entries` names, and one lookup per name
// is in flight at a time. A lookup that fails or times out is an answer too (`{error}`): the
// engine holds such a URL at CONFIRM ("cannot resolve …"). The `web` module resolves again when it
// connects and checks that answer with the same classification (net/address-class.ts): a name
// whose answer changes between the two (DNS rebinding) is refused by the module.

import dns from 'node:dns';

import type { HostResolution } from './url-args.js';

/** Every address of a host name (the default: node's `dns.lookup` with `all`, what node connects to). */
export type HostLookupFn = (host: string) => Promise<readonly string[]>;

/** How a {@link HostResolver} is built. */
export interface HostResolverOptions {
  /** Default: `dns.promises.lookup(host, {all: true, verbatim: true})`. */
  lookup?: HostLookupFn;
  /** Per lookup, default 2000 ms. */
  timeout_ms?: number;
  /** How long an answer is kept, default 30 000 ms. */
  ttl_ms?: number;
  /** How long a failure is kept, default 5000 ms. */
  negative_ttl_ms?: number;
  /** Cache bound (then it is emptied), default 1024 names. */
  max_entries?: number;
  /** For the cache's expiry (the hub's Clock satisfies it). */
  clock?: { now(): number };
}

/** node's resolver, as `web`'s `systemLookup` uses it. */
export const systemHostLookup: HostLookupFn = async (host) => {
  const list = await dns.promises.lookup(host, { all: true, verbatim: true });
  return list.map((a) => a.address);
};

/** Resolves host names with a timeout and a small TTL cache (see the file comment). */
export class HostResolver {
  readonly #lookup: HostLookupFn;
  readonly #timeout: number;
  readonly #ttl: number;
  readonly #negativeTtl: number;
  readonly #max: number;
  readonly #clock: { now(): number };
  readonly #cache = new Map<string, { at: number; r: HostResolution }>();
  readonly #inFlight = new Map<string, Promise<HostResolution>>();

  constructor(o: HostResolverOptions = {}) {
    this.#lookup = o.lookup ?? systemHostLookup;
    this.#timeout = o.timeout_ms ?? 2000;
    this.#ttl = o.ttl_ms ?? 30_000;
    this.#negativeTtl = o.negative_ttl_ms ?? 5000;
    this.#max = o.max_entries ?? 1024;
    this.#clock = o.clock ?? Date;
  }

  /** What each name resolves to; never rejects, never waits longer than the timeout. */
  async resolveAll(hosts: readonly string[]): Promise<Map<string, HostResolution>> {
    const answers = await Promise.all(hosts.map((h) => this.resolve(h)));
    return new Map(hosts.map((h, i) => [h, answers[i]!]));
  }

  /** What one name resolves to (cached). */
  resolve(host: string): Promise<HostResolution> {
    const now = this.#clock.now();
    const hit = this.#cache.get(host);
    if (hit !== undefined && now - hit.at < ('error' in hit.r ? this.#negativeTtl : this.#ttl))
      return Promise.resolve(hit.r);
    let p = this.#inFlight.get(host);
    if (p === undefined) {
      p = this.#ask(host).then((r) => {
        this.#inFlight.delete(host);
        if (this.#cache.size >= this.#max) this.#cache.clear();
        this.#cache.set(host, { at: this.#clock.now(), r });
        return r;
      });
      this.#inFlight.set(host, p);
    }
    return p;
  }

  async #ask(host: string): Promise<HostResolution> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<HostResolution>((resolve) => {
      timer = setTimeout(() => resolve({ error: `no answer within ${this.#timeout} ms` }), this.#timeout);
      timer.unref();
    });
    const asked = this.#lookup(host).then(
      (addresses): HostResolution => (addresses.length === 0 ? { error: 'no address' } : { addresses: [...addresses] }),
      (e: unknown): HostResolution => {
        const code = (e as { code?: unknown } | null)?.code;
        return { error: typeof code === 'string' ? code : String(e) };
      },
    );
    try {
      return await Promise.race([asked, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

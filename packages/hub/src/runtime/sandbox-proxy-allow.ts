import net from 'node:net';

/**
 * The public package registries that config `sandbox.network.allow: ["registries"]` lets through
 * the workspace-write sandbox's filtering proxy, all on port 443 (HTTPS through CONNECT). This is
 * the one list: docs/operations.md ("Package registries through the sandbox") names the same hosts.
 *
 * Only registries that serve what they hold: Go's module mirror (`proxy.golang.org`) and checksum
 * database (`sum.golang.org`) are not here, because they fetch a module they have not seen from
 * its origin — any host the module path names (`attacker.example/<anything>`), so a request to
 * them reaches every host on the internet, and the filtering proxy would filter nothing.
 */
export const PACKAGE_REGISTRIES: readonly string[] = [
  // npm, yarn (classic and berry), pnpm and bun use the npm registry
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'repo.yarnpkg.com',
  // PyPI: the index and the files (pip, uv, poetry, pipenv)
  'pypi.org',
  'files.pythonhosted.org',
  // crates.io: the API, the sparse index and the downloads
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  // RubyGems (bundler)
  'rubygems.org',
  'index.rubygems.org',
  // Maven Central
  'repo.maven.apache.org',
  'repo1.maven.org',
  // NuGet (dotnet restore)
  'api.nuget.org',
];

/** One host:port the proxy lets through; `literal`: an IP address listed as such (its class is not judged). */
export interface ProxyAllowEntry {
  host: string;
  port: number;
  literal: boolean;
}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `host` lower-cased without a trailing dot, an IPv6 literal without brackets; null when neither a DNS name nor an IP. */
export function normalHost(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (net.isIP(bare) !== 0) return bare.toLowerCase();
  const h = bare.toLowerCase().replace(/\.$/, '');
  return DNS_NAME.test(h) ? h : null;
}

/**
 * Parses one entry of `sandbox.network.allow`: `registries` (every host of
 * {@link PACKAGE_REGISTRIES} on 443), `host` (443), `host:port`, `1.2.3.4:port`, `[::1]:port`.
 * Throws a plain Error naming the entry when it is none of these (the config check says which).
 */
export function parseAllowEntry(entry: string): ProxyAllowEntry[] {
  const e = entry.trim();
  if (e === 'registries') return PACKAGE_REGISTRIES.map((host) => ({ host, port: 443, literal: false }));
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(e);
  const host = m !== null ? normalHost(m[1]!) : null;
  const port = m?.[2] !== undefined ? Number(m[2]) : 443;
  if (host === null || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(
      `sandbox.network.allow entry ${JSON.stringify(entry)} is not "registries", a host name or IP address with an optional :port`,
    );
  return [{ host, port, literal: net.isIP(host) !== 0 }];
}

/** Every entry of `allow` expanded, without duplicates, keyed `host:port` (IPv6 without brackets). */
export function expandAllow(allow: readonly string[]): Map<string, ProxyAllowEntry> {
  const out = new Map<string, ProxyAllowEntry>();
  for (const entry of allow) for (const a of parseAllowEntry(entry)) out.set(`${a.host}:${a.port}`, a);
  return out;
}

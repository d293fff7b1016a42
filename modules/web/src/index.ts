/**
 * web: the in-process module behind `web.fetch` (http(s) GET/HEAD with SSRF protection, redirect
 * and size caps, content-type aware output) and `web.search` (SearXNG or Brave). The default export
 * is the factory the hub's in-process runtime calls with the operator settings; tests and embedders
 * call {@link createWebModule} directly to inject a resolver.
 */
import type { InProcessModuleFactoryOptions, Logger } from '@finger/module-sdk';
import { AddressPolicy } from '@finger/net-address';
import { FingerError } from '@finger/protocol';

import { createFetchTool, type FetchParams, type FetchResult } from './fetch-tool.js';
import { type HostLookup, systemLookup } from './resolve-host.js';
import { createSearchTool, type SearchParams, type SearchResult } from './search.js';
import { parseWebSettings, type WebSettings } from './settings.js';

/** The address classification is @finger/net-address's, the firewall's too (one for both): re-exported for embedders. */
export type { CallLimits } from './deadline.js';
export type { FetchParams, FetchResult, RedirectHop } from './fetch-tool.js';
export type { ResolvedAddress } from './http-client.js';
export type { HostLookup } from './resolve-host.js';
export { checkHop, OWN_DAEMON, systemLookup } from './resolve-host.js';
export type { SearchItem, SearchParams, SearchResult } from './search.js';
export type { BraveSettings, SearxngSettings, WebSettings } from './settings.js';
export { parseWebSettings, WEB_DEFAULTS } from './settings.js';
export type { AddressPolicyOptions, AddressVerdict } from '@finger/net-address';
export { AddressPolicy, classifyAddress } from '@finger/net-address';

/** Options of {@link createWebModule}. */
export interface WebModuleOptions {
  /**
   * The module's settings (`modules.settings.web` plus the daemon's common keys); `daemon_ports`
   * (a function, from the daemon): finger's own ports, never fetched on a local address.
   */
  settings?: Record<string, unknown>;
  /** Host name resolver; default node's `dns.lookup` (all addresses). */
  lookup?: HostLookup;
  logger?: Logger;
}

/** The module object: two tools, each `(args, ctx?) => Promise<result>`. */
export interface WebModule {
  tools: {
    fetch: (args: FetchParams, ctx?: { signal?: AbortSignal; deadline?: number }) => Promise<FetchResult>;
    search: (args: SearchParams, ctx?: { signal?: AbortSignal; deadline?: number }) => Promise<SearchResult>;
  };
  /** The settings in force after defaults (for diagnostics and tests). */
  readonly settings: WebSettings;
}

/**
 * Builds the module. Throws E_MODULE_UNHEALTHY naming the setting when a setting is malformed
 * (a bad `allow_cidrs` entry, a non-URL `searxng.url` …), so a typo cannot weaken the policy.
 */
export function createWebModule(opts: WebModuleOptions = {}): WebModule {
  const settings = parseWebSettings(opts.settings ?? {});
  let policy: AddressPolicy;
  try {
    policy = new AddressPolicy({ allow_hosts: settings.allow_hosts, allow_cidrs: settings.allow_cidrs });
  } catch (e) {
    throw new FingerError('E_MODULE_UNHEALTHY', `module "web": ${e instanceof Error ? e.message : String(e)}`, {
      setting: 'allow_cidrs',
    });
  }
  // finger's own daemon's ports, from the daemon (a function: known once it listens)
  const ports = opts.settings?.daemon_ports;
  const daemonPorts = typeof ports === 'function' ? (ports as () => readonly number[]) : undefined;
  const gate = {
    policy,
    hosts: settings.hosts,
    lookup: opts.lookup ?? systemLookup,
    ...(daemonPorts !== undefined ? { daemonPorts } : {}),
  };
  return {
    tools: { fetch: createFetchTool(settings, gate), search: createSearchTool(settings) },
    settings,
  };
}

/** The entry the in-process runtime loads: `({settings}) => createWebModule({settings})`. */
export default function createModule(opts: InProcessModuleFactoryOptions): WebModule {
  return createWebModule({ settings: opts.settings, logger: opts.logger });
}

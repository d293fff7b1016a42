/**
 * The operator settings of the `web` module (`modules.settings.web` in the daemon config), read
 * once when the module starts. Every key has a default; a malformed key fails the start with a
 * message naming it, so a typo never silently weakens the SSRF policy.
 */
import net from 'node:net';

import { FingerError } from '@finger/protocol';

/** The SearXNG backend of `web.search`. */
export interface SearxngSettings {
  /** Base URL of the instance, e.g. `http://searx.local:8080` (`/search` is appended). */
  url: string;
}

/** The Brave Search API backend of `web.search`. */
export interface BraveSettings {
  api_key: string;
  /** Default `https://api.search.brave.com/res/v1/web/search`. */
  url: string;
}

/** The settings after defaults are applied. */
export interface WebSettings {
  allow_hosts: string[];
  allow_cidrs: string[];
  /** Static name → addresses map consulted before DNS (the addresses are still checked). */
  hosts: Record<string, string[]>;
  timeout_ms: number;
  max_bytes: number;
  max_bytes_limit: number;
  max_redirects: number;
  user_agent: string;
  search_backend: 'searxng' | 'brave' | undefined;
  searxng: SearxngSettings | undefined;
  brave: BraveSettings | undefined;
  search_timeout_ms: number;
  search_max_bytes: number;
}

/** Defaults of every setting; documented in the module README. */
export const WEB_DEFAULTS = {
  timeout_ms: 15_000,
  max_bytes: 2 * 1024 * 1024,
  max_bytes_limit: 10 * 1024 * 1024,
  max_redirects: 5,
  user_agent: 'finger-web/0.1',
  brave_url: 'https://api.search.brave.com/res/v1/web/search',
  search_timeout_ms: 10_000,
  search_max_bytes: 1024 * 1024,
} as const;

function bad(key: string, expected: string): never {
  throw new FingerError('E_MODULE_UNHEALTHY', `module "web": setting ${key} must be ${expected}`, { setting: key });
}

function strings(s: Record<string, unknown>, key: string): string[] {
  const v = s[key];
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) bad(key, 'an array of strings');
  return v as string[];
}

function int(s: Record<string, unknown>, key: string, dflt: number, min: number, max: number): number {
  const v = s[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(key, `an integer in [${min}, ${max}]`);
  return v;
}

function httpUrl(v: unknown, key: string): string {
  if (typeof v !== 'string') bad(key, 'an http(s) URL');
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    bad(key, 'an http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') bad(key, 'an http(s) URL');
  return v;
}

function object(v: unknown, key: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) bad(key, 'an object');
  return v as Record<string, unknown>;
}

/**
 * Applies defaults and validates. Throws E_MODULE_UNHEALTHY naming the key when a value is
 * malformed (the hub then refuses to start the module). Unknown keys are ignored: the daemon adds
 * `home`, `workspace_roots` and `backups_dir` to every module's settings.
 */
export function parseWebSettings(raw: Record<string, unknown>): WebSettings {
  const hostsRaw = object(raw.hosts, 'hosts') ?? {};
  const hosts: Record<string, string[]> = {};
  for (const [name, addrs] of Object.entries(hostsRaw)) {
    const list = typeof addrs === 'string' ? [addrs] : addrs;
    if (!Array.isArray(list) || list.length === 0 || !list.every((a) => typeof a === 'string' && net.isIP(a) !== 0)) {
      bad(`hosts.${name}`, 'an IP address or a non-empty array of IP addresses');
    }
    hosts[name.toLowerCase()] = list as string[];
  }
  const sx = object(raw.searxng, 'searxng');
  const br = object(raw.brave, 'brave');
  const searxng = sx?.url === undefined ? undefined : { url: httpUrl(sx.url, 'searxng.url') };
  let brave: BraveSettings | undefined;
  if (br?.api_key !== undefined) {
    if (typeof br.api_key !== 'string' || br.api_key === '') bad('brave.api_key', 'a non-empty string');
    brave = { api_key: br.api_key, url: br.url === undefined ? WEB_DEFAULTS.brave_url : httpUrl(br.url, 'brave.url') };
  }
  const backend = raw.search_backend;
  if (backend !== undefined && backend !== 'searxng' && backend !== 'brave') {
    bad('search_backend', '"searxng" or "brave"');
  }
  const userAgent = raw.user_agent ?? WEB_DEFAULTS.user_agent;
  if (typeof userAgent !== 'string') bad('user_agent', 'a string');
  const maxBytesLimit = int(raw, 'max_bytes_limit', WEB_DEFAULTS.max_bytes_limit, 1, 1024 * 1024 * 1024);
  return {
    allow_hosts: strings(raw, 'allow_hosts'),
    allow_cidrs: strings(raw, 'allow_cidrs'),
    hosts,
    timeout_ms: int(raw, 'timeout_ms', WEB_DEFAULTS.timeout_ms, 1, 120_000),
    max_bytes: int(raw, 'max_bytes', Math.min(WEB_DEFAULTS.max_bytes, maxBytesLimit), 1, maxBytesLimit),
    max_bytes_limit: maxBytesLimit,
    max_redirects: int(raw, 'max_redirects', WEB_DEFAULTS.max_redirects, 0, 20),
    user_agent: userAgent,
    search_backend: backend,
    searxng,
    brave,
    search_timeout_ms: int(raw, 'search_timeout_ms', WEB_DEFAULTS.search_timeout_ms, 1, 120_000),
    search_max_bytes: int(raw, 'search_max_bytes', WEB_DEFAULTS.search_max_bytes, 1, 1024 * 1024 * 1024),
  };
}

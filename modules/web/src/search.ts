/**
 * `web.search`: one query to the operator's search backend (SearXNG or Brave), answered in one
 * shape. The backend URL comes from the operator's config, so it is trusted: these requests do not
 * pass the SSRF gate (a self-hosted SearXNG on a private address must work), but they have a
 * timeout and a byte cap. With no backend configured the tool fails; it never invents results.
 */
import { FingerError } from '@finger/protocol';

import { htmlToText } from './content.js';
import { type CallLimits, requestFailure, startDeadline } from './deadline.js';
import { openRequest, readBody } from './http-client.js';
import type { WebSettings } from './settings.js';

/** Arguments of `web.search`. */
export interface SearchParams {
  query: string;
  /** Default 10, at most 50 (Brave answers at most 20). */
  limit?: number;
}

/** One result, whatever the backend. */
export interface SearchItem {
  title: string;
  url: string;
  snippet: string;
  provider: 'searxng' | 'brave';
}

/** Result of `web.search`. */
export interface SearchResult {
  items: SearchItem[];
}

/** The settings a missing backend error names. */
export const SEARCH_SETTINGS_HINT = 'modules.settings.web.searxng.url or modules.settings.web.brave.api_key';

function pickBackend(s: WebSettings): 'searxng' | 'brave' {
  if (s.search_backend === 'searxng' && s.searxng === undefined) {
    throw new FingerError(
      'E_ROUTE_FAILED',
      'web.search: search_backend is "searxng" but modules.settings.web.searxng.url is not set',
      { setting: 'modules.settings.web.searxng.url' },
    );
  }
  if (s.search_backend === 'brave' && s.brave === undefined) {
    throw new FingerError(
      'E_ROUTE_FAILED',
      'web.search: search_backend is "brave" but modules.settings.web.brave.api_key is not set',
      { setting: 'modules.settings.web.brave.api_key' },
    );
  }
  if (s.search_backend !== undefined) return s.search_backend;
  if (s.searxng !== undefined) return 'searxng';
  if (s.brave !== undefined) return 'brave';
  throw new FingerError(
    'E_ROUTE_FAILED',
    `web.search has no search backend configured: set ${SEARCH_SETTINGS_HINT} in the daemon config`,
    { setting: 'modules.settings.web.searxng.url', alternatives: ['modules.settings.web.brave.api_key'] },
  );
}

/** Plain text of a snippet that may carry markup (Brave marks matches with <strong>). */
function plain(s: unknown): string {
  if (typeof s !== 'string' || s === '') return '';
  return /[<&]/.test(s) ? htmlToText(s, 'http://localhost/').replace(/\s+/g, ' ').trim() : s.trim();
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function mapItems(list: unknown, provider: SearchItem['provider'], snippetKey: string, limit: number): SearchItem[] {
  if (!Array.isArray(list)) return [];
  const out: SearchItem[] = [];
  for (const raw of list) {
    const r = record(raw);
    if (typeof r.url !== 'string' || r.url === '') continue;
    const title = plain(r.title);
    out.push({ title: title === '' ? r.url : title, url: r.url, snippet: plain(r[snippetKey]), provider });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Builds the `search` tool. Rejects with E_ROUTE_FAILED naming the setting when no backend is
 * configured, E_INVALID_ARGS for an empty query or a bad limit, E_TIMEOUT past
 * `search_timeout_ms`, and E_MODULE_ERROR when the backend is unreachable, answers a non-2xx
 * status, more than `search_max_bytes`, or something that is not the expected JSON.
 */
export function createSearchTool(settings: WebSettings) {
  return async function searchTool(args: SearchParams, ctx?: CallLimits): Promise<SearchResult> {
    const a = (args ?? {}) as SearchParams;
    if (typeof a.query !== 'string' || a.query.trim() === '') {
      throw new FingerError('E_INVALID_ARGS', 'query must be a non-empty string', {
        issues: [{ path: '$.query', message: 'must be a non-empty string' }],
      });
    }
    const limit = a.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 50) {
      throw new FingerError('E_INVALID_ARGS', 'limit must be an integer in [1, 50]', {
        issues: [{ path: '$.limit', message: 'must be an integer in [1, 50]' }],
      });
    }
    const backend = pickBackend(settings);
    let url: URL;
    const headers: Record<string, string> = {
      'user-agent': settings.user_agent,
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      connection: 'close',
    };
    if (backend === 'searxng') {
      const base = settings.searxng!.url;
      url = new URL('search', base.endsWith('/') ? base : `${base}/`);
      url.searchParams.set('q', a.query);
      url.searchParams.set('format', 'json');
    } else {
      url = new URL(settings.brave!.url);
      url.searchParams.set('q', a.query);
      url.searchParams.set('count', String(Math.min(limit, 20)));
      headers['x-subscription-token'] = settings.brave!.api_key;
    }
    const shown = backend === 'brave' ? `${url.origin}${url.pathname}` : url.href;
    const d = startDeadline(settings.search_timeout_ms, ctx);
    let data: unknown;
    try {
      const res = await openRequest({ url, method: 'GET', headers, signal: d.signal });
      const body = await readBody(res, settings.search_max_bytes, d.signal);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        const hint =
          backend === 'searxng' && status === 403
            ? ' (enable the "json" format in search.formats of its settings.yml)'
            : '';
        throw new FingerError('E_MODULE_ERROR', `search backend ${backend} answered HTTP ${status}${hint}`, {
          provider: backend,
          status,
          body: body.body.toString('utf8', 0, Math.min(body.bytes, 500)),
        });
      }
      if (body.truncated) {
        throw new FingerError(
          'E_MODULE_ERROR',
          `search backend ${backend} answered more than search_max_bytes (${settings.search_max_bytes}) bytes`,
          { provider: backend, max_bytes: settings.search_max_bytes },
        );
      }
      try {
        data = JSON.parse(body.body.toString('utf8'));
      } catch {
        throw new FingerError('E_MODULE_ERROR', `search backend ${backend} did not answer JSON`, { provider: backend });
      }
    } catch (e) {
      throw requestFailure(e, `search request to ${backend} at`, shown, d);
    } finally {
      d.dispose();
    }
    const items =
      backend === 'searxng'
        ? mapItems(record(data).results, 'searxng', 'content', limit)
        : mapItems(record(record(data).web).results, 'brave', 'description', limit);
    return { items };
  };
}

/**
 * `web.fetch`: GET or HEAD one http(s) URL, following redirects by hand so that every hop passes
 * the SSRF gate, under one timeout and one byte cap; the body comes back in a form an agent can
 * read (see content.ts).
 */
import http, { type IncomingHttpHeaders } from 'node:http';

import { FingerError } from '@finger/protocol';

import { convertBody } from './content.js';
import { type CallLimits, requestFailure, startDeadline } from './deadline.js';
import { openRequest, readBody } from './http-client.js';
import { checkHop, type HostGate } from './resolve-host.js';
import type { WebSettings } from './settings.js';

/** Arguments of `web.fetch`. */
export interface FetchParams {
  url: string;
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  max_bytes?: number;
  timeout_ms?: number;
  max_redirects?: number;
}

/** One followed redirect. */
export interface RedirectHop {
  status: number;
  url: string;
  location: string;
}

/** Result of `web.fetch`. At most one of `text`, `json`, `base64` is set (none for HEAD). */
export interface FetchResult {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  title?: string;
  text?: string;
  json?: unknown;
  base64?: string;
  /** Body bytes read (after content-encoding is decoded); at most `max_bytes`. */
  bytes: number;
  /** The Content-Length the server announced, when it did. */
  content_length?: number;
  truncated: boolean;
  /** Present whenever the body is not all there or not in the form its type promised. */
  note?: string;
  headers: Record<string, string>;
  redirects: RedirectHop[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers the caller may not set: connection-level, or managed here (decoding needs accept-encoding). */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
]);
/** Dropped when a redirect leaves the origin, as browsers do. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

function invalid(message: string, path: string): FingerError {
  return new FingerError('E_INVALID_ARGS', message, { issues: [{ path, message }] });
}

function checkInt(v: unknown, path: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(`${path.slice(2)} must be an integer in [${min}, ${max}]`, path);
  }
  return v;
}

function parseUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || raw === '') throw invalid('url must be a non-empty string', '$.url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`url "${raw}" is not an absolute URL`, '$.url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`only http and https URLs can be fetched; "${url.protocol}" is not allowed`, '$.url');
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid('credentials in the URL are not supported; send an authorization header instead', '$.url');
  }
  url.hash = '';
  return url;
}

function callerHeaders(raw: unknown): Record<string, string> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid('headers must be an object', '$.headers');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-')) {
      throw invalid(`header "${name}" cannot be set by the caller`, `$.headers.${name}`);
    }
    if (typeof value !== 'string') throw invalid(`header "${name}" must be a string`, `$.headers.${name}`);
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch (e) {
      throw invalid(`header "${name}": ${e instanceof Error ? e.message : String(e)}`, `$.headers.${name}`);
    }
    out[lower] = value;
  }
  return out;
}

function flatHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * Builds the `fetch` tool over the given settings and SSRF gate. The tool rejects with
 * E_INVALID_ARGS (bad URL, scheme, header, limit; more redirects than allowed), E_FORBIDDEN
 * `{url, address, reason}` (a hop resolves to a refused address or redirects to another scheme),
 * E_TIMEOUT (the whole exchange, redirects included, passed `timeout_ms` or the caller's
 * deadline) and E_MODULE_ERROR (DNS, connection, TLS or decoding failure; `details.errno`).
 * HTTP error statuses are results, not errors.
 */
export function createFetchTool(settings: WebSettings, gate: HostGate) {
  return async function fetchTool(args: FetchParams, ctx?: CallLimits): Promise<FetchResult> {
    const a = (args ?? {}) as FetchParams;
    const start = parseUrl(a.url);
    const method = a.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') throw invalid('method must be "GET" or "HEAD"', '$.method');
    const maxBytes = checkInt(a.max_bytes, '$.max_bytes', 1, settings.max_bytes_limit) ?? settings.max_bytes;
    const timeout = checkInt(a.timeout_ms, '$.timeout_ms', 1, 120_000) ?? settings.timeout_ms;
    const maxRedirects = checkInt(a.max_redirects, '$.max_redirects', 0, 20) ?? settings.max_redirects;
    let headers: Record<string, string> = {
      'user-agent': settings.user_agent,
      accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5',
      ...callerHeaders(a.headers),
      'accept-encoding': 'gzip, deflate, br',
      connection: 'close',
    };

    const d = startDeadline(timeout, ctx);
    const redirects: RedirectHop[] = [];
    let url = start;
    let hopMethod: 'GET' | 'HEAD' = method;
    try {
      for (;;) {
        const pin = await checkHop(url, gate, d.signal);
        const res = await openRequest({ url, method: hopMethod, headers, signal: d.signal, pin });
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (REDIRECTS.has(status) && typeof location === 'string' && location !== '') {
          res.destroy();
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw new FingerError('E_MODULE_ERROR', `${url.href} redirected to an invalid location "${location}"`, {
              url: url.href,
              location,
            });
          }
          next.hash = '';
          if (next.protocol !== 'http:' && next.protocol !== 'https:') {
            const reason = `redirect to a non-http(s) scheme (${next.protocol})`;
            throw new FingerError('E_FORBIDDEN', `refused to follow ${url.href}: ${reason}`, {
              url: next.href,
              reason,
            });
          }
          if (redirects.length >= maxRedirects) {
            throw new FingerError('E_INVALID_ARGS', `${start.href} redirects more than ${maxRedirects} times`, {
              url: start.href,
              max_redirects: maxRedirects,
              redirects: [...redirects, { status, url: url.href, location: next.href }],
            });
          }
          redirects.push({ status, url: url.href, location: next.href });
          if (next.origin !== url.origin) {
            headers = { ...headers };
            for (const h of CREDENTIAL_HEADERS) delete headers[h];
          }
          if (status === 303 && hopMethod !== 'HEAD') hopMethod = 'GET';
          url = next;
          continue;
        }
        return await finish(res, url);
      }
    } catch (e) {
      throw requestFailure(e, 'fetch of', url.href, d);
    } finally {
      d.dispose();
    }

    async function finish(res: http.IncomingMessage, finalUrl: URL): Promise<FetchResult> {
      const contentType = String(res.headers['content-type'] ?? '');
      const out: FetchResult = {
        url: start.href,
        final_url: finalUrl.href,
        status: res.statusCode ?? 0,
        content_type: contentType,
        bytes: 0,
        truncated: false,
        headers: flatHeaders(res.headers),
        redirects,
      };
      const declared = Number(res.headers['content-length']);
      if (res.headers['content-length'] !== undefined && Number.isSafeInteger(declared)) out.content_length = declared;
      if (hopMethod === 'HEAD') {
        res.destroy();
        return out;
      }
      const body = await readBody(res, maxBytes, d.signal);
      out.bytes = body.bytes;
      out.truncated = body.truncated;
      const notes: string[] = [];
      if (body.truncated) {
        notes.push(`the body is larger than max_bytes (${maxBytes}); only the first ${body.bytes} bytes were read`);
      }
      const converted =
        body.undecoded_encoding !== undefined
          ? {
              base64: body.body.toString('base64'),
              note: `content-encoding "${body.undecoded_encoding}" was not decoded`,
            }
          : await convertBody(body.body, contentType, finalUrl.href, body.truncated, d.signal);
      if ('title' in converted && converted.title !== undefined) out.title = converted.title;
      if ('text' in converted && converted.text !== undefined) out.text = converted.text;
      if ('json' in converted) out.json = converted.json;
      if ('base64' in converted && converted.base64 !== undefined) out.base64 = converted.base64;
      if (converted.note !== undefined) notes.push(converted.note);
      if (notes.length > 0) out.note = notes.join('; ');
      return out;
    }
  };
}

import { FingerError } from '@finger/protocol';

import { safeText } from './model-reply.js';
import { HttpStatusError, TransportError } from './retry.js';

/** Largest response body (plain) or SSE buffer read from a model endpoint: 4 MiB. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The fetch function an adapter uses (injectable for tests; default global fetch). */
export type FetchFn = typeof fetch;

/**
 * POSTs JSON and returns the response when it is 2xx. Throws TransportError when the connection
 * fails and HttpStatusError (status, headers, body text) otherwise — redirects included, which
 * are never followed (the key must not travel elsewhere); an abort propagates as is.
 */
export async function postJson(
  fetchFn: FetchFn,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
      // never follow: a redirect would carry the API key (x-api-key survives cross-origin hops)
      redirect: 'manual',
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new TransportError(`cannot reach ${new URL(url).origin}: ${causeText(err)}`, { cause: err });
  }
  if (!res.ok) {
    const text = await readText(res, 64 * 1024, signal).catch(() => '');
    throw new HttpStatusError(res.status, res.headers, text);
  }
  return res;
}

function causeText(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}

/** Reads a body as UTF-8, at most `max` bytes (TransportError beyond, or when the stream breaks). */
export async function readText(res: Response, max: number, signal: AbortSignal): Promise<string> {
  let out = '';
  for await (const chunk of bodyChunks(res, signal)) {
    out += chunk;
    if (out.length > max) throw new TransportError(`model reply larger than ${max} bytes`);
  }
  return out;
}

/** The body as decoded text chunks; a broken connection becomes TransportError, an abort propagates. */
export async function* bodyChunks(res: Response, signal: AbortSignal): AsyncGenerator<string> {
  if (res.body === null) return;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (err) {
        if (signal.aborted) throw err;
        throw new TransportError(`model reply cut off: ${causeText(err)}`, { cause: err });
      }
      if (r.done) break;
      yield decoder.decode(r.value, { stream: true });
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    reader.releaseLock();
    await res.body.cancel().catch(() => undefined);
  }
}

/** Parses a plain JSON reply (a leading BOM dropped); unparseable JSON is a TransportError (the endpoint misbehaved). */
export async function readJson(res: Response, signal: AbortSignal, max = MAX_RESPONSE_BYTES): Promise<unknown> {
  const text = (await readText(res, max, signal)).replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text);
  } catch {
    throw new TransportError(`model reply is not JSON: ${safeText(text, 120)}`);
  }
}

/**
 * A signal that aborts when `outer` aborts (its reason) or after `timeout_ms` (reason: an
 * E_TIMEOUT FingerError). Call `dispose()` when the call ends.
 */
export function callSignal(
  outer: AbortSignal | undefined,
  timeout_ms: number,
): { signal: AbortSignal; dispose: () => void } {
  const ctl = new AbortController();
  const timer = setTimeout(
    () => ctl.abort(new FingerError('E_TIMEOUT', `model call passed timeout_ms (${timeout_ms} ms)`, { timeout_ms })),
    timeout_ms,
  );
  const onOuter = (): void => ctl.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: ctl.signal,
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/** Text of an error object in an OpenAI or Anthropic error body, if any. */
export function errorMessageOf(body: unknown): string | undefined {
  const e = (body as { error?: { message?: unknown } } | undefined)?.error;
  return typeof e?.message === 'string' ? e.message : undefined;
}

/** Joins a base URL and a path without doubling or dropping a slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

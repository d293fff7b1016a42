// The console's only door to the daemon: same-origin fetch with the session cookie (never a
// token in script memory), the CSRF token on every state-changing request, and the daemon's error
// body `{error: {code, message, details}}` turned into an ApiError that keeps the code.

/** An error answer of the daemon, with its stable code (`E_FORBIDDEN`, `E_NOT_FOUND`, …). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The signed-in session as `POST`/`GET /v1/session` return it. */
export interface Session {
  principal: { kind: string; id: string };
  roles: string[];
  csrf_token: string;
  expires_at: string;
}

const CSRF_KEY = 'finger.csrf';

/**
 * The session's CSRF token, kept in the origin's localStorage so a reload, or an approval link
 * opened in another tab, can show it to `GET /v1/session` (the daemon asks for it there too).
 * Storage is per origin (scheme, host and port), so a page on another loopback port cannot read
 * it; it only proves a request came from this console and not from a site riding the cookie.
 */
let csrfToken = readStoredCsrf();
let onUnauthenticated: (() => void) | undefined;

function readStoredCsrf(): string {
  try {
    return localStorage.getItem(CSRF_KEY) ?? '';
  } catch {
    return '';
  }
}

/** Remembers the CSRF token of the current session (sent as `X-CSRF-Token`); '' forgets it. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
  try {
    if (token === '') localStorage.removeItem(CSRF_KEY);
    else localStorage.setItem(CSRF_KEY, token);
  } catch {
    // storage refused (private mode): the token lives in memory only; a reload signs in again
  }
}

/** The CSRF token of the current session (the WebSocket shows it in its `auth` message). */
export function csrfTokenOf(): string {
  return csrfToken;
}

/** Called when a request answers 401 (the session ended: expiry, revocation, sign-out elsewhere). */
export function onSessionLost(fn: () => void): void {
  onUnauthenticated = fn;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Sends one JSON request to the daemon. Rejects with ApiError for any non-2xx answer; a 401 also
 * tells the app its session is gone (except for the sign-in request itself).
 */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // required on every state-changing request; sent on reads too (the daemon may ask for it there)
  if (csrfToken !== '' || !SAFE_METHODS.has(method)) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!res.ok) {
    const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    if (res.status === 401 && path !== '/v1/session') onUnauthenticated?.();
    throw new ApiError(res.status, err?.code ?? `HTTP_${res.status}`, err?.message ?? res.statusText, err?.details);
  }
  return parsed as T;
}

/** A readable one-line message of an error (code first when the daemon gave one). */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

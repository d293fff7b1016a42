import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { FingerError, type Principal } from '@finger/protocol';

import { hostnameOf } from '../http/host-check.js';
import { SESSION_COOKIE, type SessionStore } from './session-store.js';
import type { Role, TokenStore } from './token-store.js';

/** Who may call a route: `'public'` (no token) or the roles allowed. */
export type RouteRoles = 'public' | readonly Role[];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Access rule of the route; every route must declare one (checked at registration). */
    roles?: RouteRoles;
    /** WebSocket routes: a missing bearer header is allowed through; the socket authenticates itself. */
    wsAuth?: 'deferred';
  }
  interface FastifyRequest {
    /** The authenticated principal (from the bearer token or session cookie, never from the body). */
    principal: Principal | undefined;
    /** Set when the request was authenticated by a browser session cookie: the session's key. */
    sessionKey: string | undefined;
  }
}

const AGENTS = ['agent:supervisor', 'agent:executor', 'agent:reviewer'] as const satisfies readonly Role[];

/** Role sets used by the routes (admin > operator > viewer; agents may dispatch). */
export const ACCESS = {
  public: 'public',
  viewer: ['admin', 'operator', 'viewer'],
  operator: ['admin', 'operator'],
  dispatch: ['admin', 'operator', ...AGENTS],
  admin: ['admin'],
} as const satisfies Record<string, RouteRoles>;

/** Extracts the token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** True when `principal` holds one of `roles`. */
export function hasRole(principal: Principal | undefined, roles: RouteRoles): boolean {
  if (roles === 'public') return true;
  if (!principal) return false;
  return principal.roles.some((r) => (roles as readonly string[]).includes(r));
}

/** Methods that change nothing: a cookie-authenticated one needs no `Origin`. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The value of the session cookie in a `Cookie` header, or undefined. */
export function sessionCookieOf(header: string | undefined): string | undefined {
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * True when the request's `Origin` is exactly the daemon's own origin as this request reached it:
 * the scheme it was served with, the Host it named (checked by the Host check) and the port it
 * arrived on. A page on another loopback port, `null` or a missing Origin are not.
 */
export function isOwnOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (typeof origin !== 'string' || typeof host !== 'string' || hostnameOf(host) === undefined) return false;
  let own: URL;
  let got: URL;
  try {
    own = new URL(`${request.protocol}://${host}`);
    got = new URL(origin);
  } catch {
    return false;
  }
  if (got.origin !== origin || got.origin !== own.origin) return false;
  const local = request.raw.socket?.localPort;
  if (typeof local === 'number') {
    const port = Number(own.port || (own.protocol === 'https:' ? 443 : 80));
    if (port !== local) return false;
  }
  return true;
}

/** E_FORBIDDEN for a cookie request that fails the CSRF (`reason: "csrf"`) or Origin (`"origin"`) check. */
export function csrfRefusal(reason: 'csrf' | 'origin'): FingerError {
  return reason === 'csrf'
    ? new FingerError(
        'E_FORBIDDEN',
        'a request authenticated by the session cookie needs the header X-CSRF-Token with the session’s csrf_token',
        { reason: 'csrf' },
      )
    : new FingerError(
        'E_FORBIDDEN',
        'a state-changing request authenticated by the session cookie needs an Origin equal to the daemon’s own',
        { reason: 'origin' },
      );
}

/**
 * Authenticates `request` by its session cookie: undefined without one; E_UNAUTHENTICATED when it
 * names no live session; E_FORBIDDEN `csrf` without the session's `X-CSRF-Token` (when `csrf`), E_FORBIDDEN
 * `origin` when the method changes state (or `origin: 'always'`) and `Origin` is not the daemon's own.
 */
export function cookieSession(
  request: FastifyRequest,
  sessions: SessionStore,
  checks: { csrf: boolean; origin?: 'always' | 'unsafe' },
): { key: string; principal: Principal } | undefined {
  const cookie = sessionCookieOf(request.headers.cookie);
  if (cookie === undefined) return undefined;
  const s = sessions.authenticate(cookie);
  if (!s) throw new FingerError('E_UNAUTHENTICATED', 'the browser session has ended (signed out, expired or revoked)');
  if (checks.csrf) {
    const header = request.headers['x-csrf-token'];
    if (typeof header !== 'string' || !sessions.checkCsrf(s.key, header)) throw csrfRefusal('csrf');
  }
  const needsOrigin = checks.origin === 'always' || !SAFE_METHODS.has(request.method);
  if (needsOrigin && !isOwnOrigin(request)) throw csrfRefusal('origin');
  return s;
}

/** Prefixes whose routes (registered by plugins) get a default rule instead of failing. */
export interface AuthHookOptions {
  tokens: TokenStore;
  /** Browser sessions: without an Authorization header, the session cookie authenticates. */
  sessions?: SessionStore;
  /**
   * URL prefixes whose GET/HEAD requests a session cookie authenticates without `X-CSRF-Token`
   * (pages a browser navigates to, such as `/docs`; they hold no data).
   */
  navigable?: readonly string[];
  /** URL prefix → rule for plugin routes that cannot declare `config.roles` (e.g. `/docs`). */
  defaults?: Record<string, RouteRoles>;
  /** When it returns true, new requests are refused with E_PROVIDER_CLOSED (daemon closing). */
  isClosing?: () => boolean;
}

/**
 * Installs authentication and authorisation: an `onRoute` hook that makes every route declare
 * `config.roles` (a route without one fails registration — fail safe), and an `onRequest` hook
 * that resolves the bearer token into `request.principal` (401 E_UNAUTHENTICATED when missing or
 * invalid, except on public routes) and checks the route's roles (403 E_FORBIDDEN). Unknown URLs
 * also need a valid token before they answer 404. Call before registering any route.
 */
export function installAuth(app: FastifyInstance, options: AuthHookOptions): void {
  const { tokens, sessions, defaults = {}, isClosing, navigable = [] } = options;
  app.decorateRequest('principal', undefined);
  app.decorateRequest('sessionKey', undefined);

  app.addHook('onRoute', (route) => {
    if (route.config?.roles) return;
    const url = route.url ?? route.path ?? '';
    const prefix = Object.keys(defaults).find((p) => url === p || url.startsWith(p.endsWith('/') ? p : `${p}/`));
    if (prefix === undefined) throw new Error(`route ${String(route.method)} ${url} declares no config.roles`);
    route.config = { ...(route.config ?? {}), roles: defaults[prefix]! };
  });

  // every request passes here: a callback-style hook, no promise per request
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    let refusal: Error | undefined;
    try {
      authenticate(request);
    } catch (e) {
      refusal = e as Error;
    }
    if (refusal === undefined) done();
    else done(refusal);
  });

  /** Resolves `request.principal` and checks the route's roles; throws the refusal. */
  function authenticate(request: FastifyRequest): void {
    if (isClosing?.()) throw new FingerError('E_PROVIDER_CLOSED', 'the daemon is shutting down');
    const config = request.routeOptions.config as { roles?: RouteRoles; wsAuth?: 'deferred' } | undefined;
    const roles = config?.roles;
    if (roles === 'public') return;
    const header = request.headers.authorization;
    const isUpgrade = String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
    if (!header && sessions && sessionCookieOf(request.headers.cookie) !== undefined) {
      // A browser: the cookie authenticates. Every request but a navigation to a page (/docs) shows
      // the session's CSRF token (a cookie is sent to every port of the host, so another loopback
      // server may hold it: the CSRF token, kept by the page, is what it lacks); a state-changing
      // one also needs the daemon's own Origin. A WebSocket upgrade needs that Origin and shows the
      // CSRF token in its first message (browsers cannot add headers to an upgrade).
      const url = request.routeOptions.url ?? request.url;
      const page =
        SAFE_METHODS.has(request.method) &&
        navigable.some((p) => url === p || url.startsWith(p.endsWith('/') ? p : `${p}/`));
      const s = cookieSession(request, sessions, {
        csrf: !page && !isUpgrade,
        ...(isUpgrade ? { origin: 'always' as const } : {}),
      })!;
      request.principal = s.principal;
      request.sessionKey = s.key;
      checkRoles(request, s.principal, roles);
      return;
    }
    if (!header && isUpgrade && config?.wsAuth === 'deferred') return;
    const principal = tokens.authenticate(bearerToken(header));
    if (!principal) {
      if (isUpgrade && config?.wsAuth === 'deferred') return; // the socket reports E_UNAUTHENTICATED and closes 4401
      throw new FingerError(
        'E_UNAUTHENTICATED',
        header ? 'invalid bearer token' : 'missing bearer token (Authorization: Bearer <token>)',
      );
    }
    request.principal = principal;
    checkRoles(request, principal, roles);
  }
}

function checkRoles(request: FastifyRequest, principal: Principal, roles: RouteRoles | undefined): void {
  // Routes not found have no roles: any authenticated principal may learn that they do not exist.
  if (roles && !hasRole(principal, roles)) {
    throw new FingerError(
      'E_FORBIDDEN',
      `role ${principal.roles.join(',')} may not ${request.method} ${request.routeOptions.url ?? request.url}`,
      {
        required: roles,
      },
    );
  }
}

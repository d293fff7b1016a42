import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { FingerError, type Principal } from '@finger/protocol';

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
    /** The authenticated principal (from the bearer token, never from the body). */
    principal: Principal | undefined;
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

/** Prefixes whose routes (registered by plugins) get a default rule instead of failing. */
export interface AuthHookOptions {
  tokens: TokenStore;
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
  const { tokens, defaults = {}, isClosing } = options;
  app.decorateRequest('principal', undefined);

  app.addHook('onRoute', (route) => {
    if (route.config?.roles) return;
    const url = route.url ?? route.path ?? '';
    const prefix = Object.keys(defaults).find((p) => url === p || url.startsWith(p.endsWith('/') ? p : `${p}/`));
    if (prefix === undefined) throw new Error(`route ${String(route.method)} ${url} declares no config.roles`);
    route.config = { ...(route.config ?? {}), roles: defaults[prefix]! };
  });

  app.addHook('onRequest', async (request: FastifyRequest, _reply: FastifyReply) => {
    if (isClosing?.()) throw new FingerError('E_PROVIDER_CLOSED', 'the daemon is shutting down');
    const config = request.routeOptions.config as { roles?: RouteRoles; wsAuth?: 'deferred' } | undefined;
    const roles = config?.roles;
    if (roles === 'public') return;
    const header = request.headers.authorization;
    const isUpgrade = String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
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
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { FingerError } from '@finger/protocol';

import { ACCESS, cookieSession, csrfRefusal, isOwnOrigin } from '../../auth/auth-hook.js';
import { SESSION_COOKIE, type SessionLimits, type SessionStore } from '../../auth/session-store.js';
import { errorResponses } from '../errors.js';
import { callerProperties } from './caller-schema.js';
import { principalOf } from './input.js';

const sessionSchema = {
  type: 'object',
  required: ['principal', 'roles', 'csrf_token', 'expires_at'],
  properties: {
    ...callerProperties,
    csrf_token: {
      type: 'string',
      description: 'Send as X-CSRF-Token on every /v1 request authenticated by the cookie',
    },
    expires_at: { type: 'string', description: 'When the session ends unless used (idle), at the latest absolute' },
  },
} as const;

/** The `Set-Cookie` value of a new session (`Secure` when the daemon serves TLS). */
function sessionCookie(value: string, maxAgeMs: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure ? '; Secure' : ''}`;
}

function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** The origin the request reached the daemon at (its Host passed the Host check). */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? 'localhost'}`;
}

/** A browser's request (it has an Origin) from anywhere but the daemon's own page is refused. */
function refuseForeignOrigin(request: FastifyRequest): void {
  if (request.headers.origin !== undefined && !isOwnOrigin(request)) throw csrfRefusal('origin');
}

/**
 * Browser sessions (web console): `POST /v1/session` (public: a bearer token or one-time code →
 * the HttpOnly SameSite=Strict cookie and the session's CSRF token; agents' tokens refused),
 * `GET /v1/session` (the cookie and its CSRF token → the same view), `DELETE /v1/session` (sign
 * out; cookie, CSRF token and own Origin), and `POST /v1/session/links` (viewer+: a one-time
 * sign-in link to `<origin>/ui/signin#code=…`, single use, `code_ttl_ms`).
 */
export function sessionRoutes(app: FastifyInstance, sessions: SessionStore, limits: SessionLimits): void {
  const secure = (request: FastifyRequest): boolean => request.protocol === 'https';

  app.post(
    '/v1/session',
    {
      config: { roles: ACCESS.public },
      schema: {
        tags: ['session'],
        summary: 'Sign a browser in: a bearer token or a one-time code → session cookie and CSRF token',
        security: [],
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
          properties: {
            token: { type: 'string', minLength: 1, maxLength: 512 },
            code: { type: 'string', minLength: 1, maxLength: 128 },
          },
        },
        response: { 200: sessionSchema, ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      refuseForeignOrigin(request);
      const body = request.body as { token?: string; code?: string };
      const opened = sessions.signIn(body);
      reply.header('set-cookie', sessionCookie(opened.cookie, limits.absolute_ms, secure(request)));
      reply.header('cache-control', 'no-store');
      return opened.view;
    },
  );

  app.get(
    '/v1/session',
    {
      config: { roles: ACCESS.public },
      schema: {
        tags: ['session'],
        summary: 'The browser session of the cookie (with its X-CSRF-Token)',
        security: [],
        response: { 200: sessionSchema, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const s = cookieSession(request, sessions, { csrf: true });
      const view = s && sessions.viewOf(s.key);
      if (!view) throw new FingerError('E_UNAUTHENTICATED', 'no browser session (sign in with POST /v1/session)');
      reply.header('cache-control', 'no-store');
      return view;
    },
  );

  app.delete(
    '/v1/session',
    {
      config: { roles: ACCESS.public },
      schema: {
        tags: ['session'],
        summary: 'Sign the browser out: the session ends (its WebSockets close) and the cookie is cleared',
        security: [],
        response: { 204: { type: 'null' }, ...errorResponses() },
      },
    },
    async (request, reply: FastifyReply) => {
      let s: { key: string } | undefined;
      try {
        s = cookieSession(request, sessions, { csrf: true });
      } catch (e) {
        // an ended session: nothing to end, clear the cookie; a CSRF/Origin failure stands
        if ((e as FingerError).code !== 'E_UNAUTHENTICATED') throw e;
      }
      if (s) sessions.end(s.key);
      reply.header('set-cookie', clearedCookie(secure(request)));
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/session/links',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['session'],
        summary: 'A one-time sign-in link for the caller (single use, 120 s): <origin>/ui/signin#code=…',
        response: {
          200: {
            type: 'object',
            required: ['url', 'expires_at'],
            properties: { url: { type: 'string' }, expires_at: { type: 'string' } },
          },
          ...errorResponses(),
        },
      },
    },
    async (request, reply) => {
      const { code, expires_at } = sessions.issueCode(principalOf(request));
      reply.header('cache-control', 'no-store');
      return { url: `${requestOrigin(request)}/ui/signin#code=${code}`, expires_at };
    },
  );
}

import type { FastifyInstance } from 'fastify';

import { ROLES } from '../../auth/token-store.js';
import { errorResponses } from '../errors.js';
import { callerProperties } from './caller-schema.js';
import { principalOf } from './input.js';

const whoamiSchema = {
  type: 'object',
  required: ['principal', 'roles', 'token', 'via'],
  properties: {
    ...callerProperties,
    token: {
      type: 'object',
      description: 'The token the caller authenticated with, or the one its browser session was opened with',
      properties: { name: { type: 'string' } },
    },
    via: {
      type: 'string',
      enum: ['bearer', 'session'],
      description: 'How the request was authenticated: a bearer token, or a browser session cookie',
    },
  },
} as const;

/**
 * `GET /v1/whoami` (any authenticated role, bearer token or browser session): the caller's
 * principal, roles and token name, as the daemon resolved them — so a client learns its role
 * without probing routes. Read from `request.principal` (set by the auth hook), never from
 * anything the client sent.
 */
export function whoamiRoutes(app: FastifyInstance): void {
  app.get(
    '/v1/whoami',
    {
      config: { roles: ROLES },
      schema: {
        tags: ['session'],
        summary: 'Who the caller is: principal, roles and token name (any authenticated role)',
        response: { 200: whoamiSchema, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      reply.header('cache-control', 'no-store');
      // A token's principal id is the token's name (token-store principalFor); a session keeps
      // the principal of the token (or one-time code of a token's holder) that opened it.
      return {
        principal: { kind: p.kind, id: p.id },
        roles: [...p.roles],
        token: { name: p.id },
        via: request.sessionKey === undefined ? 'bearer' : 'session',
      };
    },
  );
}

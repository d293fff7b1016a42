import type { FastifyInstance } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';
import { ROLES } from '../../auth/token-store.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { ref } from '../schemas.js';

/** `GET|POST /v1/tokens`, `DELETE /v1/tokens/:name` (admin). */
export function tokenRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/tokens',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['tokens'],
        summary: 'Tokens (names, roles, times; never the tokens)',
        response: {
          200: {
            type: 'object',
            required: ['tokens'],
            properties: { tokens: { type: 'array', items: ref('TokenInfo') } },
          },
          ...errorResponses(),
        },
      },
    },
    async () => ({ tokens: deps.tokens.list() }),
  );

  app.post(
    '/v1/tokens',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['tokens'],
        summary: 'Mint a token; the plaintext is in this response only',
        body: {
          type: 'object',
          required: ['name', 'role'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$' },
            role: { type: 'string', enum: [...ROLES] },
          },
        },
        response: {
          201: {
            type: 'object',
            required: ['name', 'role', 'token'],
            properties: { name: { type: 'string' }, role: { type: 'string' }, token: { type: 'string' } },
          },
          ...errorResponses(400, 409),
        },
      },
    },
    async (request, reply) => {
      const { name, role } = request.body as { name: string; role: string };
      return reply.code(201).send(deps.tokens.create(name, role));
    },
  );

  app.delete(
    '/v1/tokens/:name',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['tokens'],
        summary: 'Revoke a token',
        params: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: 64 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['name', 'revoked'],
            properties: { name: { type: 'string' }, revoked: { type: 'boolean' } },
          },
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const { name } = request.params as { name: string };
      deps.tokens.revoke(name);
      return { name, revoked: true };
    },
  );
}

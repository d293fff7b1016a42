import type { FastifyInstance } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';
import { ADMIN_TOKEN_NAME, ROLES } from '../../auth/token-store.js';
import { auditActor, auditedChange } from '../audited-change.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { ref } from '../schemas.js';
import { principalOf } from './input.js';

/**
 * `GET|POST /v1/tokens`, `DELETE /v1/tokens/:name` (admin). Create and revoke are audited
 * (`token.changed`: name and role, never the token) before they apply.
 */
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
          ...errorResponses(400, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const { name, role } = request.body as { name: string; role: string };
      const exists = deps.tokens.list().some((t) => t.name === name);
      if (exists) return reply.code(201).send(deps.tokens.create(name, role)); // E_CONFLICT, nothing to audit
      const record = {
        type: 'token.changed' as const,
        actor: auditActor(principalOf(request)),
        decision: 'create',
        details: { action: 'create', name, role },
      };
      const created = await auditedChange(deps.audit, request.log, record, () => deps.tokens.create(name, role));
      return reply.code(201).send(created);
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
          ...errorResponses(404, 503),
        },
      },
    },
    async (request) => {
      const { name } = request.params as { name: string };
      const token = deps.tokens.list().find((t) => t.name === name);
      if (token === undefined || name === ADMIN_TOKEN_NAME) deps.tokens.revoke(name); // E_NOT_FOUND / E_FORBIDDEN
      const record = {
        type: 'token.changed' as const,
        actor: auditActor(principalOf(request)),
        decision: 'revoke',
        details: { action: 'revoke', name, role: token?.role ?? null },
      };
      await auditedChange(deps.audit, request.log, record, () => deps.tokens.revoke(name));
      return { name, revoked: true };
    },
  );
}

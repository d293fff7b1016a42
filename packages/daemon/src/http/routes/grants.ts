import type { FastifyInstance } from 'fastify';

import { GRANT_GLOB_PATTERN } from '@finger/firewall';

import { ACCESS } from '../../auth/auth-hook.js';
import { auditActor, auditedChange } from '../audited-change.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { principalOf } from './input.js';
import { GRANT_ROLES } from './tools.js';

const grantBody = {
  type: 'object',
  required: ['role', 'tool'],
  additionalProperties: false,
  properties: {
    role: { type: 'string', enum: [...GRANT_ROLES], description: 'Agent role (principals `agent:<role>`)' },
    tool: {
      type: 'string',
      pattern: GRANT_GLOB_PATTERN.source,
      description: 'Tool id or glob over tool ids (`*` within one dot segment, `**` across), e.g. `fs.read`, `web.*`',
    },
  },
} as const;

const grantsMap = {
  type: 'object',
  additionalProperties: { type: 'array', items: { type: 'string' } },
} as const;

/**
 * `GET|POST|DELETE /v1/grants`: role grants (changes are admin-only, persist in state/grants.json
 * and are audited as `grant.changed` before they apply; no-ops and unknown grants are not).
 */
export function grantRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { grants } = deps;

  app.get(
    '/v1/grants',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['grants'],
        summary: 'Tool-id globs granted to each agent role (defaults, config and stored grants)',
        response: {
          200: { type: 'object', required: ['grants'], properties: { grants: grantsMap } },
          ...errorResponses(),
        },
      },
    },
    async () => ({ grants: grants.list() }),
  );

  app.post(
    '/v1/grants',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['grants'],
        summary: 'Grant an agent role a tool (or glob over tool ids)',
        body: grantBody,
        response: {
          201: {
            type: 'object',
            required: ['role', 'tool', 'grants'],
            properties: {
              role: { type: 'string' },
              tool: { type: 'string' },
              grants: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errorResponses(400, 503),
        },
      },
    },
    async (request, reply) => {
      const { role, tool } = request.body as { role: string; tool: string };
      // Re-granting what the role has is a no-op, and not audited.
      if (!grants.list()[role]?.includes(tool)) {
        const record = {
          type: 'grant.changed' as const,
          actor: auditActor(principalOf(request)),
          decision: 'grant',
          details: { role, tool, action: 'grant' },
        };
        await auditedChange(deps.audit, request.log, record, () => grants.grant(role, tool));
      }
      return reply.code(201).send({ role, tool, grants: grants.list()[role] ?? [] });
    },
  );

  app.delete(
    '/v1/grants',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['grants'],
        summary: 'Take a grant away from an agent role (a default or config grant is recorded as revoked)',
        body: grantBody,
        response: {
          200: {
            type: 'object',
            required: ['role', 'tool', 'revoked', 'grants'],
            properties: {
              role: { type: 'string' },
              tool: { type: 'string' },
              revoked: { type: 'boolean' },
              grants: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errorResponses(400, 404, 503),
        },
      },
    },
    async (request) => {
      const { role, tool } = request.body as { role: string; tool: string };
      if (!grants.list()[role]?.includes(tool)) grants.revoke(role, tool); // E_NOT_FOUND, nothing to audit
      const record = {
        type: 'grant.changed' as const,
        actor: auditActor(principalOf(request)),
        decision: 'revoke',
        details: { role, tool, action: 'revoke' },
      };
      await auditedChange(deps.audit, request.log, record, () => grants.revoke(role, tool));
      return { role, tool, revoked: true, grants: grants.list()[role] ?? [] };
    },
  );
}

import type { FastifyInstance, FastifyRequest } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';
import type { ToolRunParams } from '../../gateway/input-gateway.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idSchema, ref } from '../schemas.js';
import { idHeaders, principalOf } from './input.js';

/** The agent roles grants are kept for (`agent:<role>` principals). */
export const GRANT_ROLES = ['supervisor', 'executor', 'reviewer', 'delegated'] as const;

/** `:id` of a tool: `<module>.<tool>`, `mcp.<server>.<tool>`, or a bare tool name. */
export const toolIdParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

/** A POST without a body counts as `{}` (every field of these bodies is optional). */
export async function emptyBodyIsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

/** `GET /v1/tools`, `GET /v1/tools/:id`, `POST /v1/tools/:id/run`. */
export function toolRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { hub, grants } = deps;

  app.get(
    '/v1/tools',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['tools'],
        summary: 'Every registered tool with its metadata; with `role`, only the tools that agent role is granted',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { role: { type: 'string', enum: [...GRANT_ROLES] } },
        },
        response: {
          200: {
            type: 'object',
            required: ['tools'],
            properties: { tools: { type: 'array', items: ref('ToolInfo') } },
          },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const { role } = request.query as { role?: string };
      const tools = hub.tools.list();
      return { tools: role === undefined ? tools : grants.granted(role, tools) };
    },
  );

  app.get(
    '/v1/tools/:id',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['tools'],
        summary: 'One tool with its full schemas, and which provider answers for it and why',
        params: toolIdParams,
        response: {
          200: {
            type: 'object',
            required: ['tool', 'provider_choice'],
            properties: {
              tool: ref('ToolInfo'),
              provider_choice: {
                type: 'object',
                additionalProperties: true,
                properties: {
                  name: { type: 'string', description: 'The short tool name' },
                  chosen: { type: 'string', description: 'Tool id the bare short name resolves to' },
                  candidates: { type: 'array', items: { type: 'string' }, description: 'Most preferred first' },
                  rule: { type: 'string', enum: ['only_provider', 'preferred_provider_order', 'default_order'] },
                },
              },
            },
          },
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const tool = hub.tools.require(id);
      return { tool, provider_choice: hub.tools.providerChoice(id) };
    },
  );

  app.post(
    '/v1/tools/:id/run',
    {
      config: { roles: ACCESS.dispatch },
      preValidation: emptyBodyIsObject,
      schema: {
        tags: ['tools', 'dispatch'],
        summary:
          'Run one tool (blocking) as the token principal; args are checked against its input_schema first (400 E_INVALID_ARGS lists every problem)',
        params: toolIdParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            args: { type: 'object', default: {}, description: "The tool's arguments (its input_schema)" },
            timeout_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
            request_id: idSchema,
          },
        },
        response: {
          200: ref('DispatchResponse'),
          ...errorResponses(400, 404, 409, 429, 500, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = (request.body ?? {}) as Omit<ToolRunParams, 'tool'>;
      const tool = hub.tools.require(id);
      const params: ToolRunParams = { tool: tool.id, args: body.args ?? {} };
      if (body.timeout_ms !== undefined) params.timeout_ms = body.timeout_ms;
      if (body.request_id !== undefined) params.request_id = body.request_id;
      const out = await deps.gateway.tool(principalOf(request), params, idHeaders(reply));
      return out.body;
    },
  );
}

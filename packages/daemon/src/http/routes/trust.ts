import type { FastifyInstance } from 'fastify';

import { McpRuntime } from '@finger/hub';
import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { toolIdParams } from './tools.js';

/**
 * `POST /v1/tools/:id/trust` (admin): re-pins the current definition of an MCP tool
 * (`mcp.<server>.<tool>`) and lifts its quarantine (DESIGN §3.8). With `expected_hash`, the pin
 * happens only when the definition is still the one the human looked at (E_CONFLICT otherwise).
 */
export function trustRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { hub } = deps;

  app.post(
    '/v1/tools/:id/trust',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['tools'],
        summary: 'Re-pin a (quarantined) MCP tool definition',
        params: toolIdParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            expected_hash: {
              type: 'string',
              pattern: '^sha256:[0-9a-f]{64}$',
              description: 'Hash of the definition that was reviewed (from the quarantine event or `tool show`)',
            },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['id', 'pinned_hash'],
            properties: { id: { type: 'string' }, pinned_hash: { type: 'string' } },
          },
          ...errorResponses(400, 404, 409),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const expected = (request.body as { expected_hash?: string } | null | undefined)?.expected_hash;
      const { module, tool, tool_id } = hub.resolveTarget(id);
      const runtime = hub.registry.runtimeOf(module.id);
      if (!(runtime instanceof McpRuntime)) {
        throw new FingerError('E_NOT_FOUND', `"${tool_id}" is not an MCP tool; only MCP tools are pinned`, {
          id: tool_id,
        });
      }
      const r = await runtime.trust(tool.name, expected);
      return { id: r.tool, pinned_hash: r.pinned_hash };
    },
  );
}

import type { FastifyInstance } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';
import type { MessageParams } from '../../gateway/input-gateway.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idSchema, ref } from '../schemas.js';
import { idHeaders, principalOf, sendDispatch } from './input.js';

/** `POST /v1/messages`: programmatic dispatch; the source is always the token's principal. */
export function messageRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    '/v1/messages',
    {
      config: { roles: ACCESS.dispatch },
      schema: {
        tags: ['dispatch'],
        summary: 'Dispatch a message to a tool, module or agent',
        body: {
          type: 'object',
          required: ['target'],
          additionalProperties: false,
          properties: {
            target: { type: 'string', minLength: 1, maxLength: 256 },
            payload: {},
            blocking: { type: 'boolean', default: true },
            timeout_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
            request_id: idSchema,
            session_id: idSchema,
            correlation_id: idSchema,
            workflow_id: idSchema,
            source: { description: 'Ignored: the source is the principal of the bearer token.' },
          },
        },
        response: {
          200: ref('DispatchResponse'),
          202: ref('DispatchResponse'),
          ...errorResponses(400, 404, 409, 429, 500, 502, 503, 504),
        },
      },
    },
    (request, reply) => {
      // the body as it is: the gateway reads its named fields only, so a `source` in it is never
      // read (the dispatch's source is the principal) — no copy of the body without it per request
      sendDispatch(reply, deps.gateway.message(principalOf(request), request.body as MessageParams, idHeaders(reply)));
    },
  );
}

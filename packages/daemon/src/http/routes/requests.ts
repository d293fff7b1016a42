import type { FastifyInstance } from 'fastify';

import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idParams, ref } from '../schemas.js';

/** `GET /v1/requests/:id` and `GET /v1/requests/:id/events` (the replay path). */
export function requestRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/requests/:id',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['requests'],
        summary: 'State of a request (running, succeeded, failed)',
        params: idParams,
        response: { 200: ref('RequestRecord'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const record = await deps.hub.getRequest(id);
      if (!record) throw new FingerError('E_NOT_FOUND', `no request "${id}" (unknown or expired)`, { request_id: id });
      return record;
    },
  );

  app.get(
    '/v1/requests/:id/events',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['requests', 'events'],
        summary: "A request's whole event path, in order (replay)",
        params: idParams,
        response: {
          200: {
            type: 'object',
            required: ['events'],
            properties: { events: { type: 'array', items: ref('FingerEvent') } },
          },
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const events = await deps.hub.events.replay(id);
      if (events.length === 0 && !(await deps.hub.getRequest(id))) {
        throw new FingerError('E_NOT_FOUND', `no events for request "${id}"`, { request_id: id });
      }
      return { events };
    },
  );
}

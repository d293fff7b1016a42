import type { FastifyInstance } from 'fastify';

import type { EventFilter } from '@finger/hub';
import { type EventType, FingerError, isEventType } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { ref } from '../schemas.js';

interface EventsQuery {
  type?: string;
  request_id?: string;
  session_id?: string;
  correlation_id?: string;
  limit: number;
}

/** Parses `type=A,B` into event types; E_INVALID_ARGS names each unknown one. */
export function parseTypes(raw: string | undefined): EventType[] | undefined {
  if (!raw) return undefined;
  const types = raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = types.filter((t) => !isEventType(t));
  if (bad.length) {
    throw new FingerError('E_INVALID_ARGS', `unknown event type(s): ${bad.join(', ')}`, {
      issues: bad.map((t) => ({ path: 'querystring.type', message: `unknown event type "${t}"` })),
    });
  }
  return types as EventType[];
}

/**
 * `GET /v1/events`: recent persisted events over HTTP; the same URL upgraded to a WebSocket is
 * the live stream (handled by the EventGateway; auth by header or first message).
 */
export function eventRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.route({
    method: 'GET',
    url: '/v1/events',
    config: { roles: ACCESS.viewer, wsAuth: 'deferred' },
    schema: {
      tags: ['events'],
      summary: 'Recent persisted events (upgrade to WebSocket for the live stream)',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          type: { type: 'string', description: 'Comma-separated event types' },
          request_id: { type: 'string', maxLength: 256 },
          session_id: { type: 'string', maxLength: 256 },
          correlation_id: { type: 'string', maxLength: 256 },
          limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['events'],
          properties: { events: { type: 'array', items: ref('FingerEvent') } },
        },
        ...errorResponses(400),
      },
    },
    handler: async (request) => {
      const q = request.query as EventsQuery;
      const filter: EventFilter = {};
      const types = parseTypes(q.type);
      if (types) filter.types = types;
      if (q.request_id) filter.request_id = q.request_id;
      if (q.session_id) filter.session_id = q.session_id;
      if (q.correlation_id) filter.correlation_id = q.correlation_id;
      return { events: await deps.hub.events.recent(filter, q.limit) };
    },
    wsHandler: (socket, request) => deps.eventGateway.handle(socket, request),
  });
}

import type { FastifyInstance } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';
import { PROMETHEUS_CONTENT_TYPE } from '../../metrics.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';

/** `GET /metrics`: Prometheus text (viewer+ bearer). */
export function metricsRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/metrics',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['daemon'],
        summary: 'Prometheus metrics (text exposition format)',
        produces: ['text/plain'],
        response: { 200: { type: 'string' }, ...errorResponses() },
      },
    },
    async (_request, reply) => reply.type(PROMETHEUS_CONTENT_TYPE).send(deps.renderMetrics()),
  );
}

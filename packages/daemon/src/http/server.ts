import type { IncomingMessage } from 'node:http';

import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';

import { ACCESS, installAuth } from '../auth/auth-hook.js';
import { SESSION_DEFAULTS, type SessionLimits, type SessionStore } from '../auth/session-store.js';
import type { TokenStore } from '../auth/token-store.js';
import { mcpRoutes } from '../mcp-gateway/mcp-route.js';
import type { RouteCounters } from '../metrics.js';
import { installErrorHandling } from './errors.js';
import { type HostPolicy, installHostCheck } from './host-check.js';
import { DEFAULT_BODY_LIMIT, installJsonBody } from './json-body.js';
import type { RouteDeps } from './route-deps.js';
import { approvalRoutes, standingApprovalRoutes } from './routes/approvals.js';
import { auditRoutes } from './routes/audit.js';
import { eventRoutes } from './routes/events.js';
import { grantRoutes } from './routes/grants.js';
import { healthRoutes } from './routes/health.js';
import { hookRoutes } from './routes/hooks.js';
import { inputRoutes } from './routes/input.js';
import { messageRoutes } from './routes/messages.js';
import { metricsRoutes } from './routes/metrics.js';
import { moduleRoutes } from './routes/modules.js';
import { policyRoutes } from './routes/policy.js';
import { requestRoutes } from './routes/requests.js';
import { safetyRoutes } from './routes/safety.js';
import { sessionRoutes } from './routes/session.js';
import { stateRoutes } from './routes/state.js';
import { taskRoutes } from './routes/tasks.js';
import { tokenRoutes } from './routes/tokens.js';
import { toolRoutes } from './routes/tools.js';
import { trustRoutes } from './routes/trust.js';
import { uiRoutes } from './routes/ui.js';
import { undoRoutes } from './routes/undo.js';
import { whoamiRoutes } from './routes/whoami.js';
import { SHARED_SCHEMAS } from './schemas.js';

/** Options of {@link createServer}. */
export interface ServerOptions {
  logger: FastifyBaseLogger;
  tokens: TokenStore;
  counters: RouteCounters;
  version: string;
  isClosing: () => boolean;
  /** Which Host names (and WebSocket Origins) are accepted (`hostPolicy(config.server)`). */
  hosts: HostPolicy;
  /** Largest accepted request body (bytes). */
  bodyLimit?: number;
  /** Largest accepted WebSocket message (bytes). */
  wsMaxPayload?: number;
  /** Browser sessions of the web console (cookie + CSRF token); absent: no `/v1/session` routes, no cookies. */
  sessions?: SessionStore;
  /** Their limits (for the cookie's Max-Age). */
  sessionLimits?: SessionLimits;
  /** The built web console served under `/ui` (default packages/web/dist). */
  uiDir?: string;
  /** Clock of the snapshot's counts and audit re-verification (default Date.now). */
  now?: () => number;
}

/**
 * Builds the fastify instance: error handling, the Host/Origin check (before auth), auth hooks,
 * OpenAPI (`/docs`, behind auth), the WebSocket plugin and every route group. Does not listen.
 */
export async function createServer(o: ServerOptions, deps: RouteDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: o.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: o.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
  }) as unknown as FastifyInstance;

  installErrorHandling(app);
  installJsonBody(app);
  installHostCheck(app, o.hosts);
  installAuth(app, {
    tokens: o.tokens,
    ...(o.sessions ? { sessions: o.sessions } : {}),
    navigable: ['/docs'],
    defaults: { '/docs': ACCESS.viewer },
    isClosing: o.isClosing,
  });
  // A WebSocket upgrade answered over HTTP (refused by a hook: Host, Origin, auth) has left Node's
  // HTTP server with its socket, so nothing would close it: a client keeping it open would hold close().
  // (Listening before @fastify/websocket registers its own 'upgrade' listener, which routes the request.)
  const upgrades = new WeakSet<IncomingMessage>();
  app.server.on('upgrade', (req: IncomingMessage) => upgrades.add(req));
  // Every request passes the hooks below: one callback-style hook each (no promise per request).
  app.addHook('onResponse', (request, reply, done) => {
    o.counters.inc(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    // the line's object (and the elapsed-time reading) only when it is written: `debug` is off by default
    const log = request.log as FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };
    if (log.isLevelEnabled?.('debug') !== false)
      log.debug(
        { method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    const socket = request.raw.socket;
    if (upgrades.has(request.raw) && !socket.destroyed) socket.end(() => socket.destroy());
    done();
  });
  // Responses finished while closing must not keep their connection alive, or close() would wait on it.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (o.isClosing()) reply.header('connection', 'close');
    done(null, payload);
  });
  for (const s of SHARED_SCHEMAS) app.addSchema(s);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'finger daemon API',
        version: o.version,
        description: 'Governed message hub between AI and the real world.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'finger_session',
            description: 'Browser session (POST /v1/session); send X-CSRF-Token too, and Origin on changes',
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  await app.register(fastifyWebsocket, { options: { maxPayload: o.wsMaxPayload ?? 64 * 1024 } });

  // first: its lockout preHandler guards the work routes below
  if (deps.safety) safetyRoutes(app, { ...deps, safety: deps.safety });
  healthRoutes(app, deps);
  inputRoutes(app, deps);
  messageRoutes(app, deps);
  requestRoutes(app, deps);
  moduleRoutes(app, deps);
  tokenRoutes(app, deps);
  whoamiRoutes(app);
  eventRoutes(app, deps);
  metricsRoutes(app, deps);
  toolRoutes(app, deps);
  trustRoutes(app, deps);
  grantRoutes(app, deps);
  undoRoutes(app, deps);
  approvalRoutes(app, deps);
  if (deps.delegated) hookRoutes(app, { ...deps, delegated: deps.delegated });
  standingApprovalRoutes(app, deps);
  auditRoutes(app, deps);
  policyRoutes(app, deps);
  taskRoutes(app, deps);
  stateRoutes(app, deps, o.now);
  mcpRoutes(app, deps);
  if (o.sessions) sessionRoutes(app, o.sessions, o.sessionLimits ?? SESSION_DEFAULTS);
  await uiRoutes(app, o.uiDir);
  return app;
}

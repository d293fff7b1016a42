import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { SafetyMonitor, SafetyState } from '@finger/firewall';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { principalOf } from './input.js';

const anyObject = { type: 'object', additionalProperties: true } as const;

/** Work that SAFETY_LOCKOUT refuses (reads, health, audit and approvals stay open). */
const GUARDED: readonly { method: string; url: RegExp }[] = [
  { method: 'POST', url: /^\/v1\/input$/ },
  { method: 'POST', url: /^\/v1\/messages$/ },
  { method: 'POST', url: /^\/v1\/tools\/[^/]+\/run$/ },
  { method: 'POST', url: /^\/v1\/tasks$/ },
  { method: 'POST', url: /^\/v1\/tasks\/[^/]+\/(resume|retry|start|run)$/ },
];

/** {@link startsWork} per method and route pattern (routes are few and fixed: no bound needed beyond them). */
const STARTS_WORK = new Map<string, Map<string, boolean>>();

/** True when the route of `request` starts work (guarded by the lockout). */
export function startsWork(request: FastifyRequest): boolean {
  const url = request.routeOptions.url ?? '';
  const method = request.method;
  let byUrl = STARTS_WORK.get(method);
  const known = byUrl?.get(url);
  if (known !== undefined) return known;
  const starts = GUARDED.some((g) => g.method === method && g.url.test(url.replace(/:[^/]+/g, 'x')));
  // the route's pattern, not the request's path: unmatched requests (no pattern) share ''
  if (byUrl === undefined) STARTS_WORK.set(method, (byUrl = new Map()));
  byUrl.set(url, starts);
  return starts;
}

/**
 * The safety view of GET /v1/health: without a valid token only `{state, locked}` (no agent
 * names: a probe needs no identities); with one the locked agents, tripped breakers and details.
 */
export function healthView(state: SafetyState, detailed: boolean): Record<string, unknown> {
  const base = { state: state.system, locked: state.system !== 'open' };
  if (!detailed) return base;
  const breakers = Object.entries(state.breakers).filter(([, b]) => b.status !== 'ok');
  return {
    ...base,
    agents_locked: state.agents_locked.map((l) => l.agent_id),
    breakers_tripped: Object.fromEntries(breakers.map(([id, b]) => [id, b.status])),
    ...(state.lockout ? { lockout: state.lockout } : {}),
    agents: state.agents_locked,
    breakers: state.breakers,
    ...(state.store_error !== undefined ? { store_error: state.store_error } : {}),
  };
}

/** The JSON Schema of {@link healthView} (fastify strips what a response schema omits). */
export const SAFETY_HEALTH_SCHEMA = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['open', 'halting', 'halting_immediate', 'locked'] },
    locked: { type: 'boolean' },
    agents_locked: { type: 'array', items: { type: 'string' } },
    breakers_tripped: { type: 'object', additionalProperties: { type: 'string' } },
    lockout: anyObject,
    agents: { type: 'array', items: anyObject },
    breakers: { type: 'object', additionalProperties: anyObject },
    store_error: {
      type: 'string',
      description: 'Why the shared safety store could not be read (this view is then the daemon’s own).',
    },
  },
} as const;

/**
 * The kill switch and the lockout: `POST /v1/halt` (admin or operator; the first halt stops
 * everything within `safety.halt_grace_ms`, a second one at once; the system then stays in
 * SAFETY_LOCKOUT, also across restarts), `POST /v1/unlock` (admin only; `{agent_id}` unlocks one
 * agent), and a preHandler that refuses input, dispatch, tool runs and tasks with 423
 * E_SAFETY_LOCKOUT (E_HALTED while a halt runs) for everyone, or for a locked agent's token.
 * Register before the routes it guards.
 */
export function safetyRoutes(app: FastifyInstance, deps: RouteDeps & { safety: SafetyMonitor }): void {
  const { safety } = deps;
  // every request passes here: a callback-style hook, no promise per request
  app.addHook('preHandler', (request, _reply, done) => {
    let refusal: Error | undefined;
    try {
      if (startsWork(request)) {
        const p = request.principal;
        safety.assertOpen(p?.kind === 'agent' ? p.id : undefined);
      }
    } catch (e) {
      refusal = e as Error;
    }
    if (refusal === undefined) done();
    else done(refusal);
  });

  app.post(
    '/v1/halt',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['safety'],
        summary: 'Kill switch: stop every call and task now, then lock the system until an admin unlocks',
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { reason: { type: 'string', maxLength: 1000 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['phase', 'state'],
            properties: {
              phase: { type: 'string', enum: ['graceful', 'immediate', 'locked'] },
              state: { type: 'string' },
            },
          },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const body = (request.body ?? {}) as { reason?: string };
      const r = await safety.halt({
        actor: principal,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
      return { phase: r.phase, state: (await safety.state()).system };
    },
  );

  app.post(
    '/v1/unlock',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['safety'],
        summary: 'Leave SAFETY_LOCKOUT (the whole system, or one agent with agent_id); audited',
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { agent_id: { type: 'string', minLength: 1, maxLength: 128 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['unlocked'],
            properties: { unlocked: { type: 'boolean' }, lockout: anyObject },
          },
          ...errorResponses(400, 423),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const body = (request.body ?? {}) as { agent_id?: string };
      return safety.unlock({
        actor: principal,
        ...(body.agent_id !== undefined ? { agent_id: body.agent_id } : {}),
      });
    },
  );
}

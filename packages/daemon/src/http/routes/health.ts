import type { FastifyInstance } from 'fastify';

import { ACCESS, bearerToken } from '../../auth/auth-hook.js';
import type { RouteDeps } from '../route-deps.js';
import { healthView, SAFETY_HEALTH_SCHEMA } from './safety.js';

/**
 * `GET /v1/health`: the only route reachable without a token. Without a valid token (any role)
 * it answers what a liveness or readiness probe needs and names nothing: `status`, coarse
 * `reasons`, the module count, `nats`/`redis` `{connected}` and `safety` `{state, locked}` — no
 * module, agent, node or principal names, no paths, versions or pids. A valid token gets the whole
 * body. A full disk (a writer's ENOSPC, or < 64 KiB free in FINGER_HOME) is `degraded` with
 * `disk full`; it turns `ok` by itself once the disk takes data again (disk-watch.ts).
 */
export function healthRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/health',
    {
      config: { roles: ACCESS.public },
      schema: {
        tags: ['daemon'],
        summary: 'Liveness and readiness (no auth); the details only with a valid token',
        description:
          'Without a valid token: `status`, coarse `reasons`, `modules` (a count), `nats`/`redis` `{connected}` and ' +
          '`safety` `{state, locked}`. Every other field (and every name in `reasons`) needs a valid token of any role.',
        security: [],
        response: {
          200: {
            type: 'object',
            required: ['status', 'modules'],
            properties: {
              status: { type: 'string', enum: ['ok', 'degraded'] },
              reasons: {
                type: 'array',
                items: { type: 'string' },
                description:
                  'Why the status is degraded (module ids, NATS subjects and claimed nodes only with a valid token).',
              },
              version: { type: 'string', description: 'With a valid token only.' },
              uptime_s: { type: 'number', description: 'With a valid token only.' },
              pid: { type: 'integer', description: 'With a valid token only.' },
              modules: { type: 'integer' },
              home: { type: 'string', description: 'With a valid token only.' },
              nats: {
                type: 'object',
                description:
                  'Distributed mode only (nats.url set): the NATS connection of this daemon; without a valid token `{connected}` only.',
                properties: {
                  connected: { type: 'boolean' },
                  cluster: { type: 'string' },
                  node: { type: 'string' },
                  url: { type: 'string' },
                  remote_modules: { type: 'integer' },
                  dropped: { type: 'integer' },
                  last_error: { type: 'string' },
                  refused: {
                    type: 'integer',
                    description: 'operations the NATS server refused for want of a permission, since start',
                  },
                  last_refused: { type: 'string' },
                  last_refused_at: { type: 'string', format: 'date-time' },
                  last_unauthenticated: {
                    type: 'string',
                    description:
                      'the last message dropped for failing authentication (a peer with another cluster or serve key)',
                  },
                  last_unauthenticated_at: { type: 'string', format: 'date-time' },
                },
              },
              redis: {
                type: 'object',
                description:
                  'Distributed mode only (redis.url set): the shared-state store of this daemon; without a valid token `{connected}` only.',
                properties: {
                  connected: { type: 'boolean' },
                  prefix: { type: 'string' },
                  last_error: { type: 'string' },
                  held_outcomes: { type: 'integer' },
                  audit_mirror: {
                    type: 'object',
                    properties: {
                      mirrored: { type: 'integer' },
                      dropped: { type: 'integer' },
                      failed_batches: { type: 'integer' },
                      queued: { type: 'integer' },
                    },
                  },
                },
              },
              sandbox: {
                type: 'object',
                description:
                  "With a valid token only: the OS sandbox of AI-initiated processes (shell commands, stdio/MCP children). `active: false` means agents can read finger's files through the programs they run.",
                required: ['mode', 'available', 'active'],
                properties: {
                  mode: { type: 'string', enum: ['auto', 'required', 'off'] },
                  available: { type: 'boolean' },
                  active: { type: 'boolean' },
                  reason: { type: 'string' },
                  bwrap: { type: 'string' },
                  profiles: {
                    type: 'object',
                    description:
                      'Whether each stricter profile can run: `workspace-write` lets a moderate shell call that stays in the workspace run at NOTIFY (docs/policy.md, "The workspace-write sandbox").',
                    properties: {
                      'workspace-write': {
                        type: 'object',
                        required: ['available'],
                        properties: { available: { type: 'boolean' }, reason: { type: 'string' } },
                      },
                    },
                  },
                  network: {
                    type: 'object',
                    description:
                      "The workspace-write profile's filtering proxy (config `sandbox.network.allow`), when set: the entries, the host:port pairs they expand to, the proxy's Unix socket.",
                    required: ['allow', 'hosts', 'socket'],
                    properties: {
                      allow: { type: 'array', items: { type: 'string' } },
                      hosts: { type: 'array', items: { type: 'string' } },
                      socket: { type: 'string' },
                    },
                  },
                },
              },
              storage: {
                type: 'object',
                description:
                  "With a valid token only: FINGER_HOME's storage. `full` when a writer failed for want of space (ENOSPC, EDQUOT) or less than 64 KiB is free; `failures` are the writers (audit log, safety state, log) whose last write failed, until one works again or a probe write shows the disk takes data; `log` counts the daemon's log lines (dropped while they cannot be written).",
                required: ['full', 'failures'],
                properties: {
                  full: { type: 'boolean' },
                  free_bytes: { type: 'integer' },
                  failures: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['source', 'code', 'message', 'at'],
                      properties: {
                        source: { type: 'string' },
                        code: { type: 'string' },
                        message: { type: 'string' },
                        at: { type: 'string', format: 'date-time' },
                      },
                    },
                  },
                  log: {
                    type: 'object',
                    required: ['written', 'dropped', 'queued'],
                    properties: {
                      written: { type: 'integer' },
                      dropped: { type: 'integer' },
                      queued: { type: 'integer' },
                    },
                  },
                },
              },
              safety: {
                ...SAFETY_HEALTH_SCHEMA,
                description:
                  'Lockout and breaker state; without a valid token `{state, locked}` only (no agent names).',
              },
            },
          },
        },
      },
    },
    async (request) => {
      const modules = deps.hub.registry.list();
      // any role: a token that authenticates sees everything; an absent or invalid one, no names
      const detailed = deps.tokens.authenticate(bearerToken(request.headers.authorization)) !== undefined;
      const safety = deps.safety ? healthView(await deps.safety.state(), detailed) : undefined;
      const nats = deps.cluster?.status();
      const redis = deps.redis?.health();
      const reasons: string[] = [];
      const unhealthy = modules.filter((m) => !m.healthy);
      if (unhealthy.length > 0)
        reasons.push(
          detailed
            ? `modules unhealthy: ${unhealthy.map((m) => m.id).join(', ')}`
            : `${unhealthy.length} module(s) unhealthy`,
        );
      if (nats !== undefined && !nats.connected) reasons.push('NATS disconnected');
      if (nats !== undefined && lastMinute(nats.last_refused_at))
        reasons.push(detailed ? `NATS refused a permission: ${nats.last_refused}` : 'NATS refused a permission');
      if (nats !== undefined && lastMinute(nats.last_unauthenticated_at))
        reasons.push(
          detailed
            ? `NATS messages fail authentication (${nats.last_unauthenticated}): check the cluster key and serve keys`
            : 'NATS messages fail authentication',
        );
      if (redis !== undefined && !redis.connected) reasons.push('Redis unreachable');
      const storage = await deps.storage?.status();
      if (storage !== undefined) {
        const failed = [...new Set(storage.failures.map((f) => `${f.source} (${f.code})`))].join(', ');
        if (storage.full)
          reasons.push(
            detailed ? `disk full: ${failed || `${storage.free_bytes ?? 0} bytes free`} in ${deps.home}` : 'disk full',
          );
        else if (storage.failures.length > 0)
          reasons.push(detailed ? `storage cannot be written: ${failed}` : 'storage cannot be written');
      }
      const log = deps.logStats?.();
      const status = reasons.length > 0 ? 'degraded' : 'ok';
      if (!detailed)
        return {
          status,
          ...(reasons.length > 0 ? { reasons } : {}),
          modules: modules.length,
          ...(nats ? { nats: { connected: nats.connected } } : {}),
          ...(redis ? { redis: { connected: redis.connected } } : {}),
          ...(safety ? { safety } : {}),
        };
      return {
        status,
        ...(reasons.length > 0 ? { reasons } : {}),
        version: deps.version,
        uptime_s: Math.round((Date.now() - deps.startedAt) / 100) / 10,
        pid: process.pid,
        modules: modules.length,
        home: deps.home,
        ...(nats ? { nats } : {}),
        ...(redis ? { redis } : {}),
        ...(safety ? { safety } : {}),
        ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
        ...(storage
          ? {
              storage: {
                ...storage,
                ...(log ? { log: { written: log.written, dropped: log.dropped, queued: log.queued } } : {}),
              },
            }
          : {}),
      };
    },
  );
}

/** Whether `at` (RFC 3339) is within the last minute. */
function lastMinute(at: string | undefined): boolean {
  return at !== undefined && Date.now() - Date.parse(at) < 60_000;
}

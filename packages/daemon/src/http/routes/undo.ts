import type { FastifyInstance } from 'fastify';

import { FingerError, isFingerError, ulid } from '@finger/protocol';

import { ACCESS, hasRole } from '../../auth/auth-hook.js';
import { BACKUPS_READER } from '../../firewall-wiring.js';
import { appendOrRefuse, auditActor } from '../audited-change.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idHeaders, principalOf } from './input.js';
import { emptyBodyIsObject } from './tools.js';

export { BACKUPS_READER };

const backupSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    path: { type: 'string' },
    ts: { type: 'string' },
    size: { type: 'integer' },
    kind: { type: 'string' },
    existed: { type: 'boolean' },
  },
} as const;

/** Throws E_NO_TARGET unless the fs module offers `tool` (undo lives there). */
function requireFsTool(deps: RouteDeps, tool: string): string {
  const info = deps.hub.tools.get(tool);
  if (!info || info.module !== 'fs') {
    throw new FingerError('E_NO_TARGET', `the fs module is not registered: ${tool} is needed for backups and undo`, {
      target: tool,
    });
  }
  return info.id;
}

/**
 * `GET /v1/backups`, `POST /v1/undo`: the fs module's backup store, run through the hub. An undo
 * is audited: an `undo` entry (decision `requested`) is durable before fs.undo runs, and one with
 * the outcome (`restored`, details {backup_id, path}, or `failed`) before the answer is sent.
 * fs.undo runs as the operator (the hub's `source`), so it may restore any backup — by id, or
 * without one the newest of anyone's; an agent's own fs.undo reaches only its own backups.
 */
export function undoRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/backups',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['undo'],
        summary: 'Backups taken before file writes, patches and deletes, newest first (runs fs.backups)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            path: { type: 'string', minLength: 1, maxLength: 4096, description: 'Only the backups of this path' },
            limit: { type: 'integer', minimum: 1, maximum: 10_000, description: 'At most this many (default 100)' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['backups'],
            properties: { backups: { type: 'array', items: backupSchema }, total: { type: 'integer' } },
          },
          ...errorResponses(403, 404, 500, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const tool = requireFsTool(deps, 'fs.backups');
      const principal = principalOf(request);
      // an operator's request runs as the operator (a person's direct call); a viewer's as the
      // daemon's read-only BACKUPS_READER, which the firewall never holds for a person: what
      // would need an approval (a path outside the readable ones) is refused at once, E_FORBIDDEN
      const source = hasRole(principal, ACCESS.operator) ? principal : BACKUPS_READER;
      const { path, limit } = request.query as { path?: string; limit?: number };
      const args: Record<string, unknown> = {};
      if (path !== undefined) args.path = path;
      if (limit !== undefined) args.limit = limit;
      const out = await deps.gateway.tool(source, { tool, args }, idHeaders(reply));
      return out.body.result;
    },
  );

  app.post(
    '/v1/undo',
    {
      config: { roles: ACCESS.operator },
      preValidation: emptyBodyIsObject,
      schema: {
        tags: ['undo'],
        summary: "Restore the content a backup holds (default: the newest backup, anyone's) (runs fs.undo)",
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { id: { type: 'string', minLength: 1, maxLength: 128, description: 'Backup id' } },
        },
        response: {
          200: {
            type: 'object',
            required: ['restored'],
            properties: {
              restored: {
                type: 'object',
                additionalProperties: true,
                properties: {
                  id: { type: 'string', description: 'The backup restored' },
                  path: { type: 'string' },
                  bytes: { type: 'integer' },
                  existed: { type: 'boolean', description: 'False: the path did not exist then, so it was removed' },
                  type: { type: 'string' },
                },
              },
              backup_id: {
                type: 'string',
                description: 'Backup of the state the undo replaced (undo it with this id)',
              },
            },
          },
          ...errorResponses(400, 404, 409, 500, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const tool = requireFsTool(deps, 'fs.undo');
      const { id } = (request.body ?? {}) as { id?: string };
      const principal = principalOf(request);
      const base = { type: 'undo' as const, actor: auditActor(principal), request_id: ulid(), tool };
      // backup_id null: the newest change not yet undone (fs.undo picks it).
      await appendOrRefuse(deps.audit, {
        ...base,
        decision: 'requested',
        details: { backup_id: id ?? null, path: null },
      });
      let result: { restored?: { id?: string; path?: string }; backup_id?: string };
      try {
        const args = id ? { id } : {};
        const out = await deps.gateway.tool(principal, { tool, args, request_id: base.request_id }, idHeaders(reply));
        result = out.body.result as typeof result;
      } catch (e) {
        const error = isFingerError(e) ? e.code : 'E_INTERNAL';
        await deps.audit
          .append({ ...base, decision: 'failed', details: { backup_id: id ?? null, path: null, error } })
          .catch((err: unknown) => request.log.error({ err }, 'audit: entry of a failed undo not written'));
        throw e;
      }
      const details = {
        backup_id: result.restored?.id ?? id ?? null,
        path: result.restored?.path ?? null,
        new_backup_id: result.backup_id ?? null,
      };
      try {
        await deps.audit.append({ ...base, decision: 'restored', details });
      } catch (e) {
        throw new FingerError(
          'E_STORE_UNAVAILABLE',
          `the undo ran (restored ${details.path ?? '?'} from backup ${details.backup_id ?? '?'}) but its audit entry could not be written: ${(e as Error).message}`,
          { restored: result.restored, backup_id: result.backup_id },
          { cause: e },
        );
      }
      return result;
    },
  );
}

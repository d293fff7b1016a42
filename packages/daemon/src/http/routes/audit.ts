import type { FastifyInstance } from 'fastify';

import { AUDIT_ENTRY_TYPES, type AuditQuery } from '@finger/firewall';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';

/** One audit entry as stored (§3.8): the response keeps every field, including `details`. */
const auditEntrySchema = {
  type: 'object',
  additionalProperties: true,
  required: ['seq', 'ts', 'type', 'prev_hash', 'hash'],
  properties: {
    seq: { type: 'integer' },
    ts: { type: 'string' },
    type: { type: 'string', enum: [...AUDIT_ENTRY_TYPES] },
    actor: {},
    request_id: {},
    correlation_id: {},
    tool: {},
    args_digest: {},
    verdict: {},
    decision: {},
    result_digest: {},
    details: { type: 'object', additionalProperties: true },
    prev_hash: { type: 'string' },
    hash: { type: 'string' },
  },
} as const;

const headSchema = {
  type: 'object',
  required: ['seq', 'hash'],
  properties: { seq: { type: 'integer' }, hash: { type: 'string' } },
} as const;

/**
 * `GET /v1/audit` (entries oldest first, filtered, with the chain's head) and
 * `GET /v1/audit/verify` (recompute the whole hash chain and name the first bad entry), viewer+.
 * Both read the files of `FINGER_HOME/audit`; an unreadable log answers 503 E_STORE_UNAVAILABLE.
 */
export function auditRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/audit',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['audit'],
        summary: 'Audit entries, oldest first (page on with since_seq = the last seq received)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            request_id: { type: 'string', minLength: 1, maxLength: 128, description: 'Only entries of this request' },
            type: { type: 'string', enum: [...AUDIT_ENTRY_TYPES], description: 'Only entries of this type' },
            since_seq: { type: 'integer', minimum: 0, description: 'Only entries with a larger seq' },
            limit: { type: 'integer', minimum: 1, maximum: 10_000, description: 'At most this many (default 100)' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['entries', 'head'],
            properties: { entries: { type: 'array', items: auditEntrySchema }, head: headSchema },
          },
          ...errorResponses(400, 503),
        },
      },
    },
    async (request) => {
      const q = request.query as AuditQuery;
      const query: AuditQuery = {};
      if (q.request_id !== undefined) query.request_id = q.request_id;
      if (q.type !== undefined) query.type = q.type;
      if (q.since_seq !== undefined) query.since_seq = q.since_seq;
      if (q.limit !== undefined) query.limit = q.limit;
      const entries = await deps.audit.read(query);
      return { entries, head: deps.audit.head() };
    },
  );

  app.get(
    '/v1/audit/verify',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['audit'],
        summary: 'Recompute the hash chain of the whole audit log and name the first bad entry',
        response: {
          200: {
            type: 'object',
            required: ['ok', 'entries', 'first_bad', 'reason'],
            properties: {
              ok: { type: 'boolean' },
              entries: { type: 'integer', description: 'Entry lines in the log' },
              first_bad: { type: ['integer', 'null'], description: 'seq of the first bad entry; null when ok' },
              reason: { type: ['string', 'null'], description: 'What is wrong with it (file:line); null when ok' },
              archived_through: {
                type: 'integer',
                description:
                  'Present when the chain was checked from an archive anchor (`myfinger audit archive`): entries up to this seq are in the archive',
              },
            },
          },
          ...errorResponses(503),
        },
      },
    },
    async () => deps.audit.verify(),
  );
}

import type { FastifyInstance } from 'fastify';

import {
  type CallShape,
  describeShape,
  GATE_ANSWER_DECISIONS,
  type GateAnswer,
  type StandingApproval,
} from '@finger/firewall';
import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idParams, ref } from '../schemas.js';
import { principalOf } from './input.js';

const approvalSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['id', 'tool_id', 'level', 'status', 'created_at', 'expires_at'],
  properties: {
    id: { type: 'string' },
    tool_id: { type: 'string' },
    args: {},
    level: { type: 'string' },
    evaluation: { type: 'object', additionalProperties: true },
    facts: { type: 'object', additionalProperties: true },
    risk: { type: 'string' },
    human_only: { type: 'boolean' },
    standing: {
      type: 'object',
      additionalProperties: true,
      required: ['offered'],
      description:
        'What `always` would approve from now on: {offered: true, shape, description}, or {offered: false, reason} (always then approves this call only)',
      properties: {
        offered: { type: 'boolean' },
        shape: ref('CallShape'),
        description: { type: 'string' },
        reason: { type: 'string' },
      },
    },
    status: { type: 'string', enum: ['reviewing', 'waiting'] },
    review: { type: 'object', additionalProperties: true },
    binding: { type: 'object', additionalProperties: true },
    created_at: { type: 'string' },
    expires_at: { type: 'string' },
  },
} as const;

const answerResultSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['id', 'decision', 'approved', 'tool_id', 'edited', 'session_approval', 'answered_by'],
  properties: {
    id: { type: 'string' },
    decision: { type: 'string' },
    approved: { type: 'boolean' },
    tool_id: { type: 'string' },
    edited: { type: 'boolean' },
    session_approval: { type: 'boolean', description: 'always left a standing approval (see standing_approval)' },
    standing_approval: ref('StandingApproval'),
    reason: { type: 'string' },
    code: { type: 'string' },
    args_digest: { type: 'string' },
    evaluation: { type: 'object', additionalProperties: true },
    abort: { type: 'string', enum: ['stopping', 'stopped'] },
    answered_by: {
      type: 'object',
      required: ['kind', 'id', 'roles'],
      description: 'The token that answered: its name (id), kind and roles',
      properties: {
        kind: { type: 'string' },
        id: { type: 'string' },
        roles: { type: 'array', items: { type: 'string' } },
      },
    },
  },
} as const;

/**
 * `GET /v1/approvals` (viewer+: pending approvals, newest first, with previews) and
 * `POST /v1/approvals/:id` (operator/admin — and, with config `approvals.answerers`, only the
 * tokens it names: else 403 E_FORBIDDEN `{reason: "not_an_answerer"}` and the call stays held —:
 * approve, approve with edited args, reject, always, abort; the answer, its audit entry and
 * APPROVAL_RESOLVED name the answering token and its roles). Without a configured HumanGate the list is empty and every id is E_NOT_FOUND.
 * WebSocket push is the APPROVAL_REQUESTED / APPROVAL_RESOLVED events on `/v1/events`.
 */
export function approvalRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/approvals',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['approvals'],
        summary: 'Calls held for a person, newest first, with the verdict, preview and risk explanation',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            session_id: { type: 'string', minLength: 1, maxLength: 256, description: 'Only this session' },
            limit: { type: 'integer', minimum: 1, maximum: 10_000, description: 'At most this many (default all)' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['approvals'],
            properties: { approvals: { type: 'array', items: approvalSchema } },
          },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const { session_id, limit } = request.query as { session_id?: string; limit?: number };
      const list = deps.gate?.list(session_id !== undefined ? { session_id } : {}) ?? [];
      return { approvals: limit !== undefined ? list.slice(0, limit) : list };
    },
  );

  app.get(
    '/v1/approvals/:id',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['approvals'],
        summary:
          'One held call by id, with its arguments (the event files keep only their digest): what an APPROVAL_REQUESTED event names',
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 128 } },
        },
        response: { 200: approvalSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const found = deps.gate?.get(id);
      if (found === undefined)
        throw new FingerError(
          'E_NOT_FOUND',
          `no pending approval ${id} on this daemon (answered, expired or held elsewhere)`,
          {
            id,
          },
        );
      return found;
    },
  );

  app.post(
    '/v1/approvals/:id',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['approvals'],
        summary:
          'Answer a held call: approve (optionally with edited args, re-evaluated by the firewall), reject (the reason goes back to the agent), always (session approval) or abort (two-phase)',
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 128 } },
        },
        body: {
          type: 'object',
          required: ['decision'],
          additionalProperties: false,
          properties: {
            decision: { type: 'string', enum: [...GATE_ANSWER_DECISIONS] },
            args: { description: 'Edited arguments (approve/always only); re-validated and re-evaluated' },
            reason: { type: 'string', maxLength: 2000, description: 'Fed back to the agent on reject' },
            shape: {
              ...ref('CallShape'),
              description: 'always only: the shape to approve, the proposed one (default) or narrower',
            },
            scope: {
              type: 'string',
              enum: ['session', 'workspace', 'persistent'],
              description: 'always only: where the standing approval applies (default session)',
            },
            expires_at: {
              type: 'string',
              format: 'date-time',
              description: 'always only: when it ends (persistent: default 30 days, at most a year)',
            },
            agent_fault: {
              type: 'boolean',
              description: 'reject only: false — not the agent’s fault, so it does not count toward the denial breaker',
            },
          },
        },
        response: { 200: answerResultSchema, ...errorResponses(400, 404, 409, 503) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      if (!deps.gate)
        throw new FingerError('E_NOT_FOUND', `no pending approval ${id} (no human gate is configured)`, { id });
      const body = request.body as Omit<GateAnswer, 'by'>;
      const answer: GateAnswer = { decision: body.decision, by: principalOf(request) };
      if (body.args !== undefined) answer.args = body.args;
      if (body.reason !== undefined) answer.reason = body.reason;
      if (body.shape !== undefined) answer.shape = body.shape;
      if (body.scope !== undefined) answer.scope = body.scope;
      if (body.expires_at !== undefined) answer.expires_at = body.expires_at;
      if (body.agent_fault !== undefined) answer.agent_fault = body.agent_fault;
      try {
        return await deps.gate.answer(id, answer);
      } catch (e) {
        // in a cluster the id may well be real: held on another daemon, whose events reach this one
        if (!deps.cluster || !(e instanceof FingerError) || e.code !== 'E_NOT_FOUND') throw e;
        const node = deps.cluster.status().node;
        throw new FingerError(
          'E_NOT_FOUND',
          `no pending approval ${id} on this daemon (node ${node}): a held call is answered on the daemon that holds it — the node its APPROVAL_REQUESTED event names in "origin"`,
          { ...(e.details ?? {}), id, node },
        );
      }
    },
  );
}

/** A standing approval as the API shows it: with its shape in one line. */
export function shown(a: StandingApproval): StandingApproval & { description: string } {
  return { ...a, description: describeShape(a.shape as CallShape) };
}

/**
 * `GET /v1/standing-approvals` (viewer+: the standing approvals in force, oldest first; `?principal=`,
 * `?session_id=`), `GET /v1/standing-approvals/:id` (viewer+) and `DELETE /v1/standing-approvals/:id`
 * (operator/admin, and one of `approvals.answerers` when configured: revoked — audited as
 * `policy.changed` before it takes effect, then POLICY_CHANGED; the next matching call is held again).
 */
export function standingApprovalRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const notFound = (id: string): FingerError => new FingerError('E_NOT_FOUND', `no standing approval ${id}`, { id });
  app.get(
    '/v1/standing-approvals',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['approvals'],
        summary: 'Standing approvals (what `always` left behind): shape, scope, caller, expiry',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            principal: { type: 'string', minLength: 1, maxLength: 300, description: 'Only this caller (<kind>:<id>)' },
            session_id: { type: 'string', minLength: 1, maxLength: 256, description: 'Only this session' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['standing_approvals'],
            properties: { standing_approvals: { type: 'array', items: ref('StandingApproval') } },
          },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const q = request.query as { principal?: string; session_id?: string };
      const list = deps.gate?.standingApprovals.list(q) ?? [];
      return { standing_approvals: list.map(shown) };
    },
  );
  app.get(
    '/v1/standing-approvals/:id',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['approvals'],
        summary: 'One standing approval',
        params: idParams,
        response: { 200: ref('StandingApproval'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const a = deps.gate?.standingApprovals.get(id);
      if (a === undefined) throw notFound(id);
      return shown(a);
    },
  );
  app.delete(
    '/v1/standing-approvals/:id',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['approvals'],
        summary: 'Revoke a standing approval: the next call of its shape is held again',
        params: idParams,
        response: {
          200: {
            type: 'object',
            required: ['revoked'],
            properties: { revoked: ref('StandingApproval') },
          },
          ...errorResponses(404, 503),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      if (!deps.gate) throw notFound(id);
      return { revoked: shown(await deps.gate.revokeStanding(id, principalOf(request))) };
    },
  );
}

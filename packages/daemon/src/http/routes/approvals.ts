import type { FastifyInstance } from 'fastify';

import { GATE_ANSWER_DECISIONS, type GateAnswer } from '@finger/firewall';
import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
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
    session_approval: { type: 'boolean' },
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

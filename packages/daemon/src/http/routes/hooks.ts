import type { FastifyInstance } from 'fastify';

import type { RouteRoles } from '../../auth/auth-hook.js';
import {
  checkDelegatedTool,
  type DelegatedCall,
  type DelegatedCalls,
  type DelegatedReport,
} from '../../hooks/delegated-calls.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { principalOf } from './input.js';

/** Only the delegated agents' hook tokens: the token names the agent principal. */
const DELEGATED: RouteRoles = ['agent:delegated'];

const AGENT = { type: 'string', enum: ['claude', 'codex', 'cursor', 'copilot'] } as const;

const callProperties = {
  agent: AGENT,
  tool: { type: 'string', minLength: 1, maxLength: 256 },
  args: { type: 'object', additionalProperties: true },
  session_id: { type: 'string', maxLength: 256 },
  cwd: { type: 'string', minLength: 1, maxLength: 4096 },
  tool_use_id: { type: 'string', maxLength: 256 },
} as const;

const verdictSchema = {
  type: 'object',
  required: ['outcome', 'level', 'decision_id', 'reason'],
  properties: {
    outcome: { type: 'string', enum: ['allow', 'deny', 'pending'] },
    level: { type: 'string' },
    decision_id: { type: 'string' },
    reason: { type: 'string' },
    code: { type: 'string' },
    approval_id: { type: 'string' },
    approval_url: { type: 'string' },
    args: { type: 'object', additionalProperties: true },
    edited: { type: 'boolean' },
    backup_id: { type: 'string' },
  },
} as const;

type HookAgent = keyof RouteDeps['config']['hooks']['hold_ms'];

/** True for a request from this machine (loopback): the files the hook's agent writes are the daemon's own. */
function isLoopbackAddress(a: string | undefined): boolean {
  if (a === undefined) return false;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function callOf(body: Record<string, unknown>): DelegatedCall {
  const call: DelegatedCall = {
    agent: body.agent as string,
    tool: body.tool as string,
    args: body.args as Record<string, unknown>,
    session_id: (body.session_id as string | undefined) ?? '',
  };
  checkDelegatedTool(call.tool);
  if (typeof body.cwd === 'string') call.cwd = body.cwd;
  if (typeof body.tool_use_id === 'string') call.tool_use_id = body.tool_use_id;
  return call;
}

/**
 * Delegated mode (issue 24): `POST /v1/hooks/evaluate` — the firewall's verdict on a call an
 * agent is about to run itself (allow, deny, or pending for a person), audited as `tool.call`
 * with `details.delegated`; `POST /v1/audit/report` — what the agent ran and how it ended,
 * matched to its pre decision (or flagged). Both only for `agent:delegated` tokens: the token
 * names the agent principal, never the body.
 */
export function hookRoutes(app: FastifyInstance, deps: RouteDeps & { delegated: DelegatedCalls }): void {
  const delegated = deps.delegated;
  app.post(
    '/v1/hooks/evaluate',
    {
      config: { roles: DELEGATED },
      schema: {
        tags: ['hooks'],
        summary:
          "The verdict on a call a delegated agent is about to run (a hold waits up to config hooks.hold_ms of the agent for a person, or the body's hold_ms when lower)",
        body: {
          type: 'object',
          required: ['agent', 'tool', 'args'],
          additionalProperties: false,
          properties: { ...callProperties, hold_ms: { type: 'integer', minimum: 0, maximum: 540_000 } },
        },
        response: { 200: verdictSchema, ...errorResponses(400, 503) },
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown>;
      const call = callOf(body);
      const controller = new AbortController();
      // The hook went away (killed by its agent's timeout): its answer is kept for the retry. The
      // response's 'close' before it finished is that; the request's own 'close' is not (it comes
      // once its body has been read, before or after this handler starts, depending on timing).
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      // config hooks.hold_ms of the agent; the hook's own --hold-ms only when lower
      const configured = deps.config.hooks.hold_ms[call.agent as HookAgent];
      const asked = body.hold_ms as number | undefined;
      return delegated.evaluate(
        principalOf(request),
        call,
        asked === undefined ? configured : Math.min(asked, configured),
        `${request.protocol}://${request.host}`,
        controller.signal,
        isLoopbackAddress(request.socket.remoteAddress),
      );
    },
  );

  app.post(
    '/v1/audit/report',
    {
      config: { roles: DELEGATED },
      schema: {
        tags: ['hooks', 'audit'],
        summary: 'Record what a delegated agent ran and how it ended, against its pre decision',
        body: {
          type: 'object',
          required: ['agent', 'tool', 'args', 'ok'],
          additionalProperties: false,
          properties: { ...callProperties, ok: { type: 'boolean' }, detail: { type: 'string', maxLength: 4096 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['matched', 'flagged'],
            properties: { matched: { type: 'boolean' }, flagged: { type: 'boolean' }, decision_id: { type: 'string' } },
          },
          ...errorResponses(400, 503),
        },
      },
    },
    async (request) => {
      const body = request.body as Record<string, unknown>;
      const report: DelegatedReport = { ...callOf(body), ok: body.ok === true };
      if (typeof body.detail === 'string') report.detail = body.detail;
      return delegated.report(principalOf(request), report);
    },
  );
}

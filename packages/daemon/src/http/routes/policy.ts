import type { FastifyInstance } from 'fastify';

import type { CompiledPolicy, PolicyDocument, ToolCallFacts } from '@finger/firewall';
import { FingerError, ulid } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { auditActor } from '../audited-change.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { principalOf } from './input.js';

const anyObject = { type: 'object', additionalProperties: true } as const;

const showSchema = {
  type: 'object',
  required: ['admin', 'user', 'warnings'],
  properties: {
    admin: anyObject,
    user: anyObject,
    warnings: { type: 'array', items: anyObject },
  },
} as const;

/** The JSON view of one compiled layer (`GET /v1/policy/effective`). */
function layerView(p: CompiledPolicy): Record<string, unknown> {
  return {
    source: p.source ?? null,
    digest: p.digest,
    readable_paths: p.readable,
    writable_paths: p.writable,
    defaults: p.defaults,
    rules: p.rules.map((r) => ({
      id: r.id,
      origin: r.origin,
      tool: r.tool,
      level: r.level,
      match: r.match,
      human_only: r.human_only,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    })),
  };
}

const FALLBACK_TOOL: ToolCallFacts['tool'] = { risk_level: 'medium', capability_level: 'L2', side_effects: true };

/**
 * `GET /v1/policy` (viewer+: both documents and the loader warnings), `PUT /v1/policy` (admin:
 * replace the UserPolicy; validated and audited by the PolicyStore), `POST /v1/policy/reset`
 * (admin: revert the UserPolicy to empty, audited), `GET /v1/policy/effective` (viewer+: both
 * compiled layers and the sandbox's default roots) and `POST /v1/policy/check` (viewer+: the
 * whole Evaluation of a hypothetical call, not recorded, nothing runs).
 */
export function policyRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/v1/policy',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['policy'],
        summary: 'The AdminPolicy and UserPolicy documents and the loader warnings',
        response: { 200: showSchema, ...errorResponses() },
      },
    },
    async () => deps.policy.show(),
  );

  app.put(
    '/v1/policy',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['policy'],
        summary: 'Replace the UserPolicy (validated, audited as policy.changed); the AdminPolicy is read-only',
        body: { ...anyObject, description: 'A UserPolicy document (§3.8 rule format)' },
        response: { 200: showSchema, ...errorResponses(400, 503) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await deps.policy.set(request.body as PolicyDocument, { actor: auditActor(principal), reason: 'PUT /v1/policy' });
      return deps.policy.show();
    },
  );

  app.post(
    '/v1/policy/reset',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['policy'],
        summary: 'Revert the UserPolicy to empty (audited as policy.changed)',
        response: { 200: showSchema, ...errorResponses(503) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await deps.policy.reset({ actor: auditActor(principal), reason: 'POST /v1/policy/reset' });
      return deps.policy.show();
    },
  );

  app.get(
    '/v1/policy/effective',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['policy'],
        summary: 'Both compiled layers (effective level = the stricter) and the default sandbox roots',
        response: {
          200: {
            type: 'object',
            required: ['admin', 'user', 'default_roots'],
            properties: {
              admin: anyObject,
              user: anyObject,
              default_roots: { type: 'array', items: { type: 'string' } },
              escalated_tools: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errorResponses(),
        },
      },
    },
    async () => {
      const p = deps.policy.current();
      return {
        admin: layerView(p.admin),
        user: layerView(p.user),
        default_roots: [...deps.sandboxRoots],
        escalated_tools: deps.policy.escalatedTools(),
      };
    },
  );

  app.post(
    '/v1/policy/check',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['policy'],
        summary:
          'The whole Evaluation of a call (deciding layer, matched rules, reasons); nothing runs, nothing is recorded',
        body: {
          type: 'object',
          required: ['tool'],
          additionalProperties: false,
          properties: {
            tool: { type: 'string', minLength: 1, maxLength: 256 },
            args: {},
            principal_kind: { type: 'string', enum: ['human', 'agent', 'module', 'system'] },
            direct: { type: 'boolean' },
            confidence: { type: 'number', minimum: 0, maximum: 1 },
          },
        },
        response: { 200: anyObject, ...errorResponses(400) },
      },
    },
    async (request) => {
      const body = request.body as {
        tool: string;
        args?: unknown;
        principal_kind?: ToolCallFacts['principal']['kind'];
        direct?: boolean;
        confidence?: number;
      };
      const info = deps.hub.tools.get(body.tool);
      if (info === undefined && !/^[a-z0-9][a-z0-9_.-]*$/i.test(body.tool))
        throw new FingerError('E_INVALID_ARGS', `not a tool id: ${JSON.stringify(body.tool)}`, { tool: body.tool });
      const kind = body.principal_kind ?? 'agent';
      const id = ulid();
      const facts: ToolCallFacts = {
        tool_id: info?.id ?? body.tool,
        args: body.args ?? {},
        principal: { kind, id: 'policy-check', roles: [] },
        session_id: 'policy-check',
        request_id: id,
        correlation_id: id,
        direct: body.direct === true && kind === 'human',
        tool: info ?? FALLBACK_TOOL,
      };
      if (body.confidence !== undefined) facts.confidence = body.confidence;
      // the host names of URL arguments are resolved as the interceptor resolves them
      const ev = deps.engine.evaluate((await deps.engine.withResolvedHosts(facts)) ?? facts, { record: false });
      return { ...JSON.parse(JSON.stringify(ev)), tool_known: info !== undefined };
    },
  );
}

/**
 * The audit record of one routing decision (`route.decision`): who asked, the decision, the tool
 * it targets, the payload's digest, and every model attempt — its raw answer (cut to 2000
 * characters), the endpoint's stop reason, the guardrail's outcome, reason code, errors and repairs.
 */
import type { AuditRecord } from '@finger/firewall';

import type { AgentContext } from '../agent/agent.js';
import type { RouteResult } from './router-engine.js';

const RAW_MAX = 2000;

/** Builds the `route.decision` audit record for `route` (see the file comment). */
export function routeAuditRecord(ctx: AgentContext, route: RouteResult, tool_id: string | null): AuditRecord {
  const o = route.outcome;
  const d = o.decision;
  const attempts = route.attempts.map((a) => {
    const raw = a.raw.length > RAW_MAX ? `${a.raw.slice(0, RAW_MAX)}…` : a.raw;
    const entry: Record<string, unknown> = {
      n: a.n,
      raw,
      outcome: a.outcome.outcome,
      repairs: a.outcome.repairs.map((r) => r.kind),
      usage: a.usage,
      ...(a.finish_reason !== undefined ? { finish_reason: a.finish_reason } : {}),
    };
    if (a.outcome.outcome !== 'ok') {
      entry.reason_code = a.outcome.reason_code;
      entry.retryable = a.outcome.retryable;
      entry.errors = a.outcome.errors;
    }
    return entry;
  });
  const record: AuditRecord = {
    type: 'route.decision',
    actor: { kind: ctx.caller.kind, id: ctx.caller.id },
    request_id: ctx.request_id,
    correlation_id: ctx.correlation_id,
    tool: tool_id,
    args: d?.payload ?? null,
    decision: o.outcome === 'ok' ? (d?.decision ?? null) : o.outcome,
    details: {
      agent: ctx.principal.id,
      outcome: o.outcome,
      ...(o.outcome !== 'ok' ? { reason_code: o.reason_code } : {}),
      ...(d !== undefined ? { confidence: d.confidence, requires_human: d.requires_human } : {}),
      provider: route.provider,
      model: route.model,
      attempts,
    },
  };
  return record;
}

// What the gate reports about a hold: the audit records (`approval.requested` /
// `approval.resolved`), the APPROVAL_REQUESTED / APPROVAL_RESOLVED events and the perception samples;
// and about standing approvals: their use, their creation and revocation (`policy.changed`,
// POLICY_CHANGED).

import type { AuditRecord } from '../audit/audit-entry.js';
import type { Evaluation, ToolCallFacts } from '../engine/evaluation.js';
import { answeredBy } from './answer-checks.js';
import type { FinishMeta, GateEntry } from './approval-record.js';
import { describeShape } from './call-shape.js';
import type { GateAnswerer, GateDecision, GateEvents, GatePerception } from './gate-types.js';
import type { StandingApproval } from './standing-approvals.js';

/** The `approval.requested` audit record of a new hold. */
export function requestedAuditRecord(entry: GateEntry, humanOnly: boolean): AuditRecord {
  return {
    type: 'approval.requested',
    actor: { kind: entry.facts.principal.kind, id: entry.facts.principal.id },
    request_id: entry.facts.request_id,
    correlation_id: entry.facts.correlation_id,
    tool: entry.facts.tool_id,
    args_digest: entry.approval.binding.args_digest === 'unserializable' ? null : entry.approval.binding.args_digest,
    verdict: entry.ev,
    details: {
      approval_id: entry.approval.id,
      session_id: entry.facts.session_id,
      level: entry.ev.level,
      human_only: humanOnly,
    },
  };
}

/**
 * The `approval.resolved` audit record of a settled hold (`d` is the decision before the write).
 * A person's answer names the token that answered: `actor` {kind, id: token name} and
 * `details.answered_by` {kind, id, roles}.
 */
export function resolvedAuditRecord(entry: GateEntry, d: GateDecision, meta: FinishMeta, latency: number): AuditRecord {
  const digest = d.binding?.args_digest ?? entry.approval.binding.args_digest;
  return {
    type: 'approval.resolved',
    actor: meta.by
      ? { kind: meta.by.kind ?? 'human', id: meta.by.id }
      : { kind: 'system', id: d.decided_by === 'reviewer' ? 'reviewer' : 'human-gate' },
    request_id: entry.facts.request_id,
    correlation_id: entry.facts.correlation_id,
    tool: entry.facts.tool_id,
    args_digest: digest === 'unserializable' ? null : digest,
    verdict: d.evaluation ?? entry.ev,
    decision: meta.decision,
    details: {
      approval_id: entry.approval.id,
      session_id: entry.facts.session_id,
      decided_by: d.decided_by,
      latency_ms: latency,
      ...(meta.by ? { answered_by: answeredBy(meta.by) } : {}),
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      ...(meta.standing ? { standing_approval: standingSummary(meta.standing) } : {}),
      ...(meta.excused ? { agent_fault: false } : {}),
    },
  };
}

/** What the audit log and events say of a standing approval (its shape, scope, caller and expiry). */
export function standingSummary(a: StandingApproval): Record<string, unknown> {
  return {
    id: a.id,
    tool_id: a.tool_id,
    shape: a.shape,
    description: describeShape(a.shape),
    level: a.level,
    principal: a.principal,
    scope: a.scope,
    ...(a.session_id !== undefined ? { session_id: a.session_id } : {}),
    ...(a.workspace !== undefined ? { workspace: a.workspace } : {}),
    ...(a.expires_at !== undefined ? { expires_at: a.expires_at } : {}),
    by: a.by,
  };
}

/** The matched rule a standing approval adds to the Evaluation of a call it lets through: id `standing:<id>`. */
export function standingRule(ev: Evaluation, a: StandingApproval): Evaluation['matched_rules'][number] {
  return {
    source: 'user',
    id: `standing:${a.id}`,
    level: ev.level,
    reason: `standing approval ${a.id} by ${a.by} (${a.scope}): ${describeShape(a.shape)}`,
  };
}

/** The `approval.resolved` audit record (decision `standing`) of a call a standing approval let through. */
export function standingAuditRecord(
  ev: Evaluation,
  facts: ToolCallFacts,
  d: GateDecision,
  a: StandingApproval,
): AuditRecord {
  return {
    type: 'approval.resolved',
    actor: { kind: 'human', id: a.by },
    request_id: facts.request_id,
    correlation_id: facts.correlation_id,
    tool: facts.tool_id,
    args_digest: d.binding!.args_digest === 'unserializable' ? null : d.binding!.args_digest,
    verdict: { ...ev, matched_rules: [...ev.matched_rules, standingRule(ev, a)] },
    decision: 'standing',
    details: {
      session_id: facts.session_id,
      level: ev.level,
      decided_by: 'standing',
      standing_approval: standingSummary(a),
    },
  };
}

/** APPROVAL_RESOLVED for a call a standing approval let through (no approval id). */
export function emitStandingResolved(events: GateEvents | undefined, facts: ToolCallFacts, a: StandingApproval): void {
  events?.emit(
    'APPROVAL_RESOLVED',
    {
      request_id: facts.request_id,
      correlation_id: facts.correlation_id,
      session_id: facts.session_id,
      target: facts.tool_id,
    },
    {
      id: null,
      tool_id: facts.tool_id,
      decision: 'standing',
      approved: true,
      decided_by: 'standing',
      by: a.by,
      standing_approval_id: a.id,
      matched_rule: `standing:${a.id}`,
    },
  );
}

/** The `policy.changed` audit record of a revoked standing approval (written before the revocation takes effect). */
export function standingRevokedAuditRecord(a: StandingApproval, by: GateAnswerer): AuditRecord {
  return {
    type: 'policy.changed',
    actor: { kind: by.kind ?? 'human', id: by.id },
    tool: a.tool_id,
    details: { change: 'standing_approval.revoked', standing_approval: standingSummary(a) },
  };
}

/** POLICY_CHANGED for a standing approval created (once its answer is on record) or revoked. */
export function emitStandingChanged(
  events: GateEvents | undefined,
  op: 'created' | 'revoked',
  a: StandingApproval,
): void {
  events?.emit(
    'POLICY_CHANGED',
    { ...(a.session_id !== undefined ? { session_id: a.session_id } : {}), target: a.tool_id },
    { change: `standing_approval.${op}`, standing_approval: standingSummary(a) },
  );
}

/** APPROVAL_REQUESTED for a hold a person is asked to answer (carries a copy of the approval). */
export function emitRequested(events: GateEvents | undefined, entry: GateEntry): void {
  const a = entry.approval;
  events?.emit(
    'APPROVAL_REQUESTED',
    {
      request_id: a.facts.request_id,
      correlation_id: a.facts.correlation_id,
      session_id: a.facts.session_id,
      target: a.tool_id,
    },
    {
      id: a.id,
      tool_id: a.tool_id,
      level: a.level,
      status: a.status,
      expires_at: a.expires_at,
      approval: structuredClone(a),
    },
  );
}

/** APPROVAL_RESOLVED for a settled hold (with its final decision; a person's answer: `by` the token name, `answered_by` {kind, id, roles}). */
export function emitResolved(
  events: GateEvents | undefined,
  entry: GateEntry,
  final: GateDecision,
  meta: FinishMeta,
  latency: number,
): void {
  events?.emit(
    'APPROVAL_RESOLVED',
    {
      request_id: entry.facts.request_id,
      correlation_id: entry.facts.correlation_id,
      session_id: entry.facts.session_id,
      target: entry.facts.tool_id,
    },
    {
      id: entry.approval.id,
      tool_id: entry.facts.tool_id,
      decision: meta.decision,
      approved: final.approved,
      decided_by: final.decided_by,
      latency_ms: latency,
      ...(meta.by ? { by: meta.by.id, answered_by: answeredBy(meta.by) } : {}),
      ...(final.reason !== undefined ? { reason: final.reason } : {}),
      ...(final.code !== undefined ? { code: final.code } : {}),
    },
  );
}

/** Counts a settled hold in perception: a person's or reviewer's approval, or the source of a rejection. */
export function recordPerception(
  p: GatePerception | undefined,
  entry: GateEntry,
  d: GateDecision,
  latency: number,
  meta: FinishMeta,
): void {
  if (!p) return;
  const { tool_id, session_id } = entry.facts;
  const classes = entry.classes !== undefined ? { classes: entry.classes } : {};
  if (d.approved) {
    if (d.decided_by === 'human' || d.decided_by === 'reviewer') {
      p.recordApproval({
        tool_id,
        session_id,
        latency_ms: latency,
        source: d.decided_by,
        edited: meta.edited === true,
        ...classes,
      });
    }
    return;
  }
  const source =
    d.decided_by === 'human'
      ? d.code === 'E_DENIED_BY_POLICY'
        ? 'policy'
        : 'human'
      : d.decided_by === 'reviewer' || d.decided_by === 'timeout' || d.decided_by === 'abort'
        ? d.decided_by
        : undefined;
  if (source)
    p.recordRejection({
      tool_id,
      session_id,
      source,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      ...(meta.excused === true ? { excused: true } : {}),
      ...(heldAsDangerous(entry.ev) ? { dangerous: true } : {}),
      ...classes,
    });
}

/** Held at APPROVE by the RiskAssessor's `dangerous` (its builtin `risk` rule), not by a root or a rule. */
function heldAsDangerous(ev: Evaluation): boolean {
  return (
    ev.level === 'APPROVE' &&
    ev.matched_rules.some((r) => r.source === 'builtin' && r.id === 'risk' && r.level === 'APPROVE')
  );
}

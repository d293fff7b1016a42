// What a held call is while it waits: the PendingApproval a person reads (risk explanation,
// binding, expiry), the gate's bookkeeping entry around it, and the refusals the gate returns.

import { rfc3339 } from '@finger/protocol';

import type { Evaluation, ToolCallFacts } from '../engine/evaluation.js';
import { bindingOf } from './binding.js';
import { type CallShape, type ShapeClass, type ShapeFacts } from './call-shape.js';
import type {
  DecidedBy,
  GateAnswerer,
  GateDecision,
  GateRejectCode,
  PendingApproval,
  ReviewerConfig,
  StandingOffer,
} from './gate-types.js';
import type { ReviewerRun, ReviewerVerdict } from './reviewer.js';
import type { StandingApproval } from './standing-approvals.js';

/** The gate's bookkeeping around one held call. */
export interface GateEntry {
  approval: PendingApproval;
  ev: Evaluation;
  facts: ToolCallFacts;
  createdMs: number;
  state: 'pending' | 'answering' | 'done';
  /** The timeout fired while an answer was being checked. */
  expired: boolean;
  /** A reviewer verdict that arrived while an answer was being checked. */
  lateReview?: ReviewerVerdict;
  timer: unknown;
  reviewer?: ReviewerRun;
  /** The held call's shape facts (undefined: no resolver, or they could not be resolved). */
  shape?: ShapeFacts;
  /** The shape classes the adaptation counts the answer in (undefined: the whole tool, as before shapes). */
  classes?: ShapeClass[];
  /** The offered shape, when one is. */
  proposed?: CallShape;
  resolve(d: GateDecision): void;
}

/** How a finish is recorded: the audit decision word, who answered, what perception counts. */
export interface FinishMeta {
  /** approve | approve_edited | always | reject | abort | timeout | reviewer_approve | reviewer_reject | closed | halted | store_failed | cancelled */
  decision: string;
  by?: GateAnswerer;
  edited?: boolean;
  /** `always`: the standing approval it created. */
  standing?: StandingApproval;
  /** `reject`: the person said it was not the agent's fault. */
  excused?: boolean;
}

/** True when a rule marked `human_only` matched (on the Evaluation, a matched rule or the facts). */
export function isHumanOnly(ev: Evaluation, facts: ToolCallFacts): boolean {
  const flag = (o: unknown): boolean =>
    typeof o === 'object' && o !== null && (o as { human_only?: unknown }).human_only === true;
  return flag(ev) || flag(facts) || ev.matched_rules.some(flag);
}

/** The risk explanation a person reads: level, deciding layer, reasons and matched rules. */
export function riskExplanation(ev: Evaluation): string {
  const parts = [`${ev.level}: held by the ${ev.layer} layer.`];
  if (ev.reasons.length) parts.push(`Reasons: ${ev.reasons.join('; ')}.`);
  if (ev.matched_rules.length) {
    parts.push(`Rules: ${ev.matched_rules.map((r) => `${r.source} ${r.id} → ${r.level} (${r.reason})`).join('; ')}.`);
  }
  return parts.join(' ');
}

/** The arguments a hold covers: the argument filter's output when there is one. */
export function argsOf(ev: Evaluation, facts: ToolCallFacts): unknown {
  return ev.args !== undefined ? ev.args : facts.args;
}

/** A refusal decision with its stable error code. */
export function refuse(
  code: GateRejectCode,
  reason: string,
  decided_by: DecidedBy,
  approval_id?: string,
): GateDecision {
  const d: GateDecision = { approved: false, code, reason, decided_by };
  if (approval_id !== undefined) d.approval_id = approval_id;
  return d;
}

/** The PendingApproval of a new hold: `reviewing` when a reviewer runs first, else `waiting`. */
export function newPendingApproval(o: {
  id: string;
  ev: Evaluation;
  facts: ToolCallFacts;
  args: unknown;
  humanOnly: boolean;
  reviewer: ReviewerConfig | undefined;
  now: number;
  timeoutMs: number;
  standing: StandingOffer;
}): PendingApproval {
  const { id, ev, facts, args, humanOnly, reviewer, now } = o;
  const approval: PendingApproval = {
    id,
    tool_id: facts.tool_id,
    args,
    level: ev.level,
    evaluation: ev,
    facts: {
      principal: { kind: facts.principal.kind, id: facts.principal.id, roles: [...facts.principal.roles] },
      session_id: facts.session_id,
      request_id: facts.request_id,
      correlation_id: facts.correlation_id,
      direct: facts.direct,
      ...(facts.confidence !== undefined ? { confidence: facts.confidence } : {}),
    },
    risk: riskExplanation(ev),
    human_only: humanOnly,
    standing: structuredClone(o.standing),
    status: reviewer ? 'reviewing' : 'waiting',
    binding: bindingOf(args, ev.preview),
    created_at: rfc3339(now),
    expires_at: rfc3339(now + o.timeoutMs),
  };
  if (reviewer) approval.review = { mode: reviewer.mode ?? 'beside', status: 'pending' };
  return approval;
}

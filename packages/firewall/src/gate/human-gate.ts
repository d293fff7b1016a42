// HumanGate (§3.8): holds a call the firewall judged CONFIRM/APPROVE until a person (or the
// external reviewer) answers, and tells the interceptor the outcome. It only asks and listens:
// the verdict itself comes from the FirewallEngine (also for edited arguments, via `reevaluate`).
//
// Lifecycle of a hold: created (bounded by max_pending) → [reviewing →] waiting → one of
// approve | approve with edited args | always | reject | abort | timeout | gate closed.
// APPROVAL_REQUESTED is emitted when a person is asked (at once, or after a `beside` reviewer
// approved; never for an `instead` reviewer — a person may still answer it from the list).
// APPROVAL_RESOLVED is emitted for every outcome. With an `audit`, each outcome is written
// before the hold resolves; a failed write turns an approval into a refusal.

import { FingerError, ulid } from '@finger/protocol';

import type { Evaluation, ToolCallFacts } from '../engine/evaluation.js';
import { answeredBy, type AnswererRule, answerResult, checkAnswer, checkAnswerer } from './answer-checks.js';
import { argsOf, type FinishMeta, type GateEntry, isHumanOnly, newPendingApproval, refuse } from './approval-record.js';
import {
  emitRequested,
  emitResolved,
  emitStandingChanged,
  emitStandingResolved,
  recordPerception,
  requestedAuditRecord,
  resolvedAuditRecord,
  standingAuditRecord,
  standingRevokedAuditRecord,
} from './approval-reporting.js';
import { argsDigest, bindingOf } from './binding.js';
import { deriveShape, describeShape, shapeClasses, type ShapeFacts } from './call-shape.js';
import {
  type AbortResult,
  type AnswerResult,
  type GateAnswer,
  type GateAnswerer,
  type GateClock,
  type GateDecision,
  type HumanGateOptions,
  type PendingApproval,
  systemGateClock,
} from './gate-types.js';
import { HoldQuotas } from './hold-quotas.js';
import { type ReviewerVerdict, runReviewer } from './reviewer.js';
import { principalKey, SessionState } from './session-state.js';
import { coverableLevel, type StandingApproval, StandingApprovals } from './standing-approvals.js';
import { offerFor, planStanding, type StandingPlan, type StandingPlanContext } from './standing-plan.js';

export { isHumanOnly, riskExplanation } from './approval-record.js';
export { DEFAULT_HUMAN_RESERVE_SHARE, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_PER_PRINCIPAL } from './hold-quotas.js';
export { DEFAULT_PERSISTENT_MS, MAX_STANDING_MS } from './standing-plan.js';

/** Default time a person has to answer: 5 minutes. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

/**
 * Pending approvals and their answers. Construct once per daemon; the firewall interceptor
 * calls {@link hold}, HTTP/CLI/web answer with {@link answer}, tasks ask {@link isAbortRequested}.
 */
export class HumanGate {
  private readonly o: HumanGateOptions;
  private readonly clock: GateClock;
  private readonly timeoutMs: number;
  private readonly quotas: HoldQuotas;
  private readonly maxResolved: number;
  private readonly answerRule: AnswererRule;
  private readonly pending = new Map<string, GateEntry>();
  /** Answered ids → their outcome word, oldest first (bounded). */
  private readonly resolved = new Map<string, string>();
  private readonly sessions: SessionState;
  private readonly standing: StandingApprovals;
  /** Approval ids rejected as "not the agent's fault" (bounded like `resolved`). */
  private readonly excused = new Set<string>();
  private readonly counters = { held: 0, approved: 0, rejected: 0, timeouts: 0, overloaded: 0, session_approved: 0 };
  private closed = false;

  constructor(options: HumanGateOptions = {}) {
    this.o = options;
    this.clock = options.clock ?? systemGateClock;
    this.timeoutMs = options.timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.quotas = new HoldQuotas(options);
    this.maxResolved = options.max_resolved ?? 1000;
    this.answerRule = {
      roles: options.answer_roles ?? ['admin', 'operator'],
      ...(options.answerers ? { answerers: [...options.answerers] } : {}),
    };
    this.sessions = new SessionState(options.max_sessions ?? 10_000);
    this.standing = options.standing ?? new StandingApprovals();
  }

  /** Abort phases (distributed mode shares them through its `onChange`/`restore` seam). */
  get sessionState(): SessionState {
    return this.sessions;
  }

  /** The standing approvals (`always`); the daemon persists and shares them through their `onChange`/`restore` seam. */
  get standingApprovals(): StandingApprovals {
    return this.standing;
  }

  /**
   * Holds one call until it is answered. Never rejects: every outcome is a GateDecision. DENY is
   * refused at once (E_DENIED_BY_POLICY); an aborted session's calls are refused ('aborted'); a
   * standing approval of the caller whose shape covers the call approves it at once (never an
   * APPROVE hold, never `human_only`, never a hold stricter than it was given at); past
   * `max_pending`, past its principal's `max_pending_per_principal`, or — for a principal that is
   * not human — past `max_pending - human_reserve`, the call is refused (E_OVERLOADED naming the bound).
   */
  async hold(ev: Evaluation, facts: ToolCallFacts): Promise<GateDecision> {
    if (this.closed) return refuse('E_PROVIDER_CLOSED', 'the human gate is closed', 'gate');
    if (ev.level === 'DENY' || ev.action === 'deny') {
      return refuse('E_DENIED_BY_POLICY', ev.reasons.join('; ') || 'denied by policy', 'gate');
    }
    const phase = this.sessions.abortPhase(facts.session_id);
    if (phase !== null) {
      this.o.perception?.recordRejection({ tool_id: facts.tool_id, session_id: facts.session_id, source: 'abort' });
      return refuse('E_REJECTED_BY_HUMAN', `aborted (session ${phase})`, 'abort');
    }
    const args = argsOf(ev, facts);
    const humanOnly = isHumanOnly(ev, facts);
    const shape = this.shapeFactsOf(facts, args);
    if (!humanOnly && shape !== undefined && coverableLevel(ev.level)) {
      const sa = this.standing.find({
        facts: shape,
        level: ev.level,
        principal: principalKey(facts.principal),
        session_id: facts.session_id,
        workspace: this.o.shapes?.workspaceOf(facts.principal),
        now: this.clock.now(),
      });
      if (sa) return this.standingApproved(ev, facts, args, sa);
    }
    const overloaded = this.quotas.overloadOf(facts.principal, this.pending.size);
    if (overloaded !== undefined) {
      this.counters.overloaded++;
      return refuse('E_OVERLOADED', overloaded, 'gate');
    }
    return this.create(ev, facts, args, humanOnly, shape);
  }

  /**
   * Answers a pending approval. Throws E_FORBIDDEN (answerer lacks operator/admin, or is not
   * one of the configured `answerers`: `details.reason: "not_an_answerer"`, still pending),
   * E_INVALID_ARGS (bad answer, or edited args the firewall rejects as invalid — the approval
   * then stays pending; a `shape` that is not the proposed one or narrower, or does not cover the
   * held call; a bad `scope` or `expires_at`), E_NOT_FOUND (unknown id), E_CONFLICT (already
   * answered or being answered), E_STORE_UNAVAILABLE (`always` while the cluster's shared store is
   * unreachable; still pending).
   */
  async answer(id: string, a: GateAnswer): Promise<AnswerResult> {
    checkAnswer(a, this.answerRule);
    const entry = this.pending.get(id);
    if (!entry) {
      const prior = this.resolved.get(id);
      if (prior !== undefined)
        throw new FingerError('E_CONFLICT', `approval ${id} was already answered (${prior})`, { id, outcome: prior });
      throw new FingerError('E_NOT_FOUND', `no pending approval ${id}`, { id });
    }
    if (entry.state !== 'pending') throw new FingerError('E_CONFLICT', `approval ${id} is being answered`, { id });
    const base = {
      ...{ id, decision: a.decision, tool_id: entry.approval.tool_id, edited: false, session_approval: false },
      answered_by: answeredBy(a.by),
    };
    if (a.decision === 'abort') {
      const r = await this.abort(entry.facts.session_id, a.by);
      return { ...base, approved: false, code: 'E_REJECTED_BY_HUMAN', reason: 'aborted', abort: r.phase };
    }
    if (a.decision === 'reject') {
      const reason = a.reason?.trim() || `rejected by ${a.by.id}`;
      const excused = a.agent_fault === false;
      if (excused) this.excuse(id);
      const d = await this.finish(entry, refuse('E_REJECTED_BY_HUMAN', reason, 'human', id), {
        decision: 'reject',
        by: a.by,
        ...(excused ? { excused } : {}),
      });
      return answerResult(base, d);
    }
    // approve | always
    // a standing approval the cluster cannot share is refused before anything changes (still pending)
    if (a.decision === 'always' && !entry.approval.human_only) this.standing.assertShareable?.();
    const edited = a.args !== undefined && argsDigest(a.args) !== entry.approval.binding.args_digest;
    // a bad shape, scope or expiry leaves the approval pending
    let plan: StandingPlan | undefined =
      a.decision === 'always' && !edited
        ? planStanding(entry, a, entry.shape, entry.proposed, entry.approval.level, this.planContext())
        : undefined;
    entry.state = 'answering';
    let d: GateDecision;
    if (edited) {
      let ev: Evaluation;
      try {
        ev = await this.reevaluate(entry, a.args);
      } catch (e) {
        this.reopen(entry);
        throw e;
      }
      if ((entry.state as GateEntry['state']) === 'done') {
        throw new FingerError('E_CONFLICT', `approval ${id} was answered meanwhile`, { id });
      }
      if (a.decision === 'always') {
        // the shape of what will run: the edited call's
        const shape = this.shapeFactsOf({ ...entry.facts, args: a.args }, ev.args !== undefined ? ev.args : a.args);
        const proposed = shape !== undefined ? (deriveShape(shape) ?? undefined) : undefined;
        try {
          plan = planStanding(entry, a, shape, proposed, ev.level, this.planContext());
        } catch (e) {
          this.reopen(entry);
          throw e;
        }
      }
      if (ev.level === 'DENY' || ev.action === 'deny') {
        // the person's edit was refused: not the agent's doing
        this.excuse(id);
        d = refuse(
          'E_DENIED_BY_POLICY',
          `the edited arguments are denied: ${ev.reasons.join('; ') || 'by policy'}`,
          'human',
          id,
        );
      } else {
        const runArgs = ev.args !== undefined ? ev.args : a.args;
        d = {
          approved: true,
          args: runArgs,
          decided_by: 'human',
          approval_id: id,
          binding: bindingOf(runArgs, ev.preview),
        };
      }
      d.evaluation = ev;
    } else {
      const { args, binding } = entry.approval;
      d = { approved: true, args, decided_by: 'human', approval_id: id, binding };
    }
    let standing: StandingApproval | undefined;
    if (a.decision === 'always' && d.approved && plan !== undefined) {
      if ('note' in plan) d.reason = plan.note;
      else standing = plan.approval;
    }
    if (a.reason?.trim() && d.reason === undefined) d.reason = a.reason.trim();
    const word = !d.approved ? 'reject' : a.decision === 'always' ? 'always' : edited ? 'approve_edited' : 'approve';
    const final = await this.finish(entry, d, {
      decision: word,
      by: a.by,
      edited,
      ...(standing !== undefined && d.approved ? { standing } : {}),
    });
    // kept only once the answer is on record
    const kept = standing !== undefined && final.approved;
    if (kept) {
      this.standing.add(standing!);
      emitStandingChanged(this.o.events, 'created', standing!);
    }
    const r = answerResult({ ...base, edited, session_approval: kept }, final);
    if (kept) r.standing_approval = structuredClone(standing!);
    if (d.evaluation) r.evaluation = d.evaluation;
    return r;
  }

  /**
   * Revokes a standing approval: audited (`policy.changed`, `change: "standing_approval.revoked"`)
   * before it takes effect, then POLICY_CHANGED. Throws E_FORBIDDEN (not an answerer),
   * E_NOT_FOUND (no such id), E_STORE_UNAVAILABLE (the audit entry could not be written: nothing changed).
   */
  async revokeStanding(id: string, by: GateAnswerer): Promise<StandingApproval> {
    checkAnswerer(by, this.answerRule);
    const a = this.standing.get(id);
    if (a === undefined) throw new FingerError('E_NOT_FOUND', `no standing approval ${id}`, { id });
    if (this.o.audit) {
      try {
        await this.o.audit.append(standingRevokedAuditRecord(a, by));
      } catch (e) {
        this.o.logger?.warn({ err: e, id }, 'audit append of a standing approval revocation failed');
        throw new FingerError('E_STORE_UNAVAILABLE', 'the revocation could not be written to the audit log', { id });
      }
    }
    this.standing.revoke(id);
    emitStandingChanged(this.o.events, 'revoked', a);
    return a;
  }

  /** True when approval `id` was rejected as "not the agent's fault" (or its edit was refused): no denial for the breaker. */
  isExcused(approval_id: string): boolean {
    return this.excused.has(approval_id);
  }

  private excuse(id: string): void {
    this.excused.add(id);
    if (this.excused.size > this.maxResolved) this.excused.delete(this.excused.values().next().value as string);
  }

  /** What planning a standing approval needs of the gate: the time now and the shape resolver. */
  private planContext(): StandingPlanContext {
    return { now: this.clock.now(), shapes: this.o.shapes };
  }

  /** The shape facts of a call, or undefined (no resolver, or they could not be resolved: then nothing is covered). */
  private shapeFactsOf(facts: ToolCallFacts, args: unknown): ShapeFacts | undefined {
    if (this.o.shapes === undefined) return undefined;
    try {
      return this.o.shapes.facts({ tool_id: facts.tool_id, args, principal: facts.principal, tool: facts.tool });
    } catch (e) {
      this.o.logger?.warn({ err: e, tool: facts.tool_id }, 'the shape of a held call could not be resolved');
      return undefined;
    }
  }

  /**
   * Aborts a session, two-phase: the first call marks it `stopping` (its task finishes the
   * current step, then stops: see {@link isAbortRequested}), the second `stopped` (stop now).
   * Both reject the session's pending approvals ('aborted') and every later hold of the session
   * until {@link resetSession}. `by`, when given, must be operator/admin and one of the
   * configured `answerers` (E_FORBIDDEN).
   */
  async abort(session_id: string, by?: GateAnswerer): Promise<AbortResult> {
    if (by) checkAnswerer(by, this.answerRule);
    const phase = this.sessions.abort(session_id);
    // an aborted session keeps no standing approval of its own: after a reset it asks again
    this.standing.forgetSession(session_id);
    const victims = [...this.pending.values()].filter((e) => e.facts.session_id === session_id && e.state !== 'done');
    await Promise.all(
      victims.map((e) =>
        this.finish(e, refuse('E_REJECTED_BY_HUMAN', 'aborted', 'abort', e.approval.id), {
          decision: 'abort',
          ...(by ? { by } : {}),
        }),
      ),
    );
    return { session_id, phase, rejected: victims.length };
  }

  /**
   * Withdraws the pending approval `id` for the principal whose call it holds (an MCP client's
   * `tasks/cancel`): it is resolved as `cancelled` — audited (`approval.resolved`, answered by that
   * principal, with `reason`) and announced (APPROVAL_RESOLVED) — and the held call fails with
   * E_WITHDRAWN, never running. Not a denial: no perception, no breaker. False when `id` is not
   * pending (unknown, answered meanwhile, being answered) or `by` is not the call's principal.
   */
  async withdraw(id: string, by: GateAnswerer, reason: string): Promise<boolean> {
    const entry = this.pending.get(id);
    if (entry === undefined || entry.state !== 'pending') return false;
    const p = entry.facts.principal;
    if (p.id !== by.id || (by.kind !== undefined && p.kind !== by.kind)) return false;
    await this.finish(entry, refuse('E_WITHDRAWN', reason, 'caller', id), { decision: 'cancelled', by });
    return true;
  }

  /** True once an abort was asked for the session (either phase): stop after the current step. */
  isAbortRequested(session_id: string): boolean {
    return this.sessions.abortPhase(session_id) !== null;
  }

  /** The session's abort phase, or null. `stopped`: stop at once. */
  abortPhase(session_id: string): 'stopping' | 'stopped' | null {
    return this.sessions.abortPhase(session_id);
  }

  /** Forgets a session's abort phase and its session-scoped standing approvals (a new task may start in it). */
  resetSession(session_id: string): void {
    this.sessions.reset(session_id);
    this.standing.forgetSession(session_id);
  }

  /** Pending approvals, newest first (copies). */
  list(filter: { session_id?: string } = {}): PendingApproval[] {
    const out: PendingApproval[] = [];
    for (const e of [...this.pending.values()].reverse()) {
      if (e.state === 'done') continue;
      if (filter.session_id !== undefined && e.facts.session_id !== filter.session_id) continue;
      out.push(structuredClone(e.approval));
    }
    return out;
  }

  /** One pending approval (a copy), or undefined. */
  get(id: string): PendingApproval | undefined {
    const e = this.pending.get(id);
    return e && e.state !== 'done' ? structuredClone(e.approval) : undefined;
  }

  /** Counters since construction, plus the number pending. */
  stats(): {
    pending: number;
    held: number;
    approved: number;
    rejected: number;
    timeouts: number;
    overloaded: number;
    session_approved: number;
  } {
    return { pending: this.pending.size, ...this.counters };
  }

  /**
   * The kill switch: refuses every pending hold with E_HALTED (its caller was stopped; an answer
   * given later must find nothing to approve). Later holds are taken as usual. Returns how many.
   */
  async refusePendingForHalt(): Promise<number> {
    const victims = [...this.pending.values()].filter((e) => e.state !== 'done');
    await Promise.all(
      victims.map((e) =>
        this.finish(e, refuse('E_HALTED', 'the kill switch stopped the call', 'gate', e.approval.id), {
          decision: 'halted',
        }),
      ),
    );
    return victims.length;
  }

  /** Refuses every pending hold (E_PROVIDER_CLOSED) and every later one. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.pending.values()].map((e) =>
        this.finish(e, refuse('E_PROVIDER_CLOSED', 'the daemon is shutting down', 'gate', e.approval.id), {
          decision: 'closed',
        }),
      ),
    );
  }

  private create(
    ev: Evaluation,
    facts: ToolCallFacts,
    args: unknown,
    humanOnly: boolean,
    shape: ShapeFacts | undefined,
  ): Promise<GateDecision> {
    const now = this.clock.now();
    const id = ulid();
    const reviewer = humanOnly ? undefined : this.o.reviewer;
    const proposed = shape !== undefined ? (deriveShape(shape) ?? undefined) : undefined;
    const standing = offerFor(ev.level, humanOnly, proposed);
    const approval = newPendingApproval({
      id,
      ev,
      facts,
      args,
      humanOnly,
      reviewer,
      now,
      timeoutMs: this.timeoutMs,
      standing,
    });
    let resolve!: (d: GateDecision) => void;
    const done = new Promise<GateDecision>((r) => (resolve = r));
    const entry: GateEntry = {
      approval,
      ev,
      facts,
      createdMs: now,
      state: 'pending',
      expired: false,
      timer: undefined,
      resolve,
    };
    if (shape !== undefined) {
      entry.shape = shape;
      entry.classes = shapeClasses(shape);
    }
    if (proposed !== undefined && standing.offered) entry.proposed = proposed;
    entry.timer = this.clock.setTimeout(() => this.onTimeout(entry), this.timeoutMs);
    this.pending.set(id, entry);
    this.quotas.count(facts.principal, 1);
    this.counters.held++;
    if (this.o.audit) {
      this.o.audit.append(requestedAuditRecord(entry, humanOnly)).catch((e: unknown) => {
        this.o.logger?.warn({ err: e, approval_id: id }, 'audit append of approval.requested failed');
        if (entry.state !== 'done') {
          void this.finish(
            entry,
            refuse('E_STORE_UNAVAILABLE', 'the approval could not be written to the audit log', 'gate', id),
            {
              decision: 'store_failed',
            },
          );
        }
      });
    }
    if (reviewer) {
      entry.reviewer = runReviewer(reviewer, approval, this.clock);
      void entry.reviewer.result.then((v) => this.onReview(entry, v));
    } else emitRequested(this.o.events, entry);
    return done;
  }

  private onReview(entry: GateEntry, v: ReviewerVerdict): void {
    if (entry.state === 'answering') {
      entry.lateReview = v;
      return;
    }
    if (entry.state !== 'pending') return;
    const mode = entry.approval.review?.mode ?? 'beside';
    const id = entry.approval.id;
    if (v.decision === 'reject') {
      entry.approval.review = { mode, status: 'rejected', reason: v.reason };
      void this.finish(entry, refuse('E_REJECTED_BY_HUMAN', `reviewer: ${v.reason}`, 'reviewer', id), {
        decision: 'reviewer_reject',
      });
      return;
    }
    entry.approval.review = { mode, status: 'approved', reason: v.reason };
    if (mode === 'instead') {
      const { args, binding } = entry.approval;
      void this.finish(
        entry,
        { approved: true, args, binding, decided_by: 'reviewer', approval_id: id, reason: v.reason },
        { decision: 'reviewer_approve' },
      );
      return;
    }
    entry.approval.status = 'waiting';
    emitRequested(this.o.events, entry);
  }

  private onTimeout(entry: GateEntry): void {
    if (entry.state === 'answering') {
      entry.expired = true;
      return;
    }
    if (entry.state !== 'pending') return;
    this.counters.timeouts++;
    const bound = this.timeoutMs % 1000 === 0 ? `${this.timeoutMs / 1000} s` : `${this.timeoutMs} ms`;
    void this.finish(
      entry,
      refuse(
        'E_APPROVAL_TIMEOUT',
        // the approval timeout: a call's own timeout_ms counts from the answer, not while it waits
        `nobody answered approval ${entry.approval.id} within ${bound} (the approval timeout; a call's own timeout counts from the answer)`,
        'timeout',
        entry.approval.id,
      ),
      { decision: 'timeout' },
    );
  }

  /** An answer failed its checks: the approval is pending again (and catches up on what happened meanwhile). */
  private reopen(entry: GateEntry): void {
    if (entry.state !== 'answering') return;
    entry.state = 'pending';
    if (entry.expired) this.onTimeout(entry);
    else if (entry.lateReview) {
      const v = entry.lateReview;
      delete entry.lateReview;
      this.onReview(entry, v);
    }
  }

  private async reevaluate(entry: GateEntry, args: unknown): Promise<Evaluation> {
    if (!this.o.reevaluate) {
      throw new FingerError(
        'E_INVALID_ARGS',
        'edited arguments cannot be accepted: no firewall is configured to re-evaluate them',
      );
    }
    return this.o.reevaluate({ ...entry.facts, args });
  }

  private async standingApproved(
    ev: Evaluation,
    facts: ToolCallFacts,
    args: unknown,
    sa: StandingApproval,
  ): Promise<GateDecision> {
    const d: GateDecision = {
      approved: true,
      args,
      decided_by: 'standing',
      binding: bindingOf(args, ev.preview),
      reason: `standing approval ${sa.id} by ${sa.by}: ${describeShape(sa.shape)}`,
    };
    if (this.o.audit) {
      try {
        await this.o.audit.append(standingAuditRecord(ev, facts, d, sa));
      } catch (e) {
        this.o.logger?.warn({ err: e }, 'audit append of a standing approval use failed');
        return refuse('E_STORE_UNAVAILABLE', 'the approval could not be written to the audit log', 'gate');
      }
    }
    this.counters.session_approved++;
    this.o.perception?.recordApproval({
      tool_id: facts.tool_id,
      session_id: facts.session_id,
      latency_ms: 0,
      source: 'session',
    });
    emitStandingResolved(this.o.events, facts, sa);
    return d;
  }

  /** Settles an entry once: audit (if configured), perception, APPROVAL_RESOLVED, then the hold resolves. */
  private async finish(entry: GateEntry, d: GateDecision, meta: FinishMeta): Promise<GateDecision> {
    if (entry.state === 'done') return d;
    entry.state = 'done';
    this.clock.clearTimeout(entry.timer);
    entry.reviewer?.cancel();
    const { approval } = entry;
    this.pending.delete(approval.id);
    this.quotas.count(entry.facts.principal, -1);
    this.resolved.set(approval.id, meta.decision);
    if (this.resolved.size > this.maxResolved) this.resolved.delete(this.resolved.keys().next().value as string);
    const latency = Math.max(0, this.clock.now() - entry.createdMs);
    let final = d;
    if (this.o.audit) {
      try {
        await this.o.audit.append(resolvedAuditRecord(entry, d, meta, latency));
      } catch (e) {
        this.o.logger?.warn({ err: e, approval_id: approval.id }, 'audit append of approval.resolved failed');
        if (final.approved) {
          final = refuse(
            'E_STORE_UNAVAILABLE',
            'the approval could not be written to the audit log',
            'gate',
            approval.id,
          );
        }
      }
    }
    this.record(entry, final, latency, meta);
    emitResolved(this.o.events, entry, final, meta, latency);
    entry.resolve(final);
    return final;
  }

  private record(entry: GateEntry, d: GateDecision, latency: number, meta: FinishMeta): void {
    if (d.approved) this.counters.approved++;
    else this.counters.rejected++;
    recordPerception(this.o.perception, entry, d, latency, meta);
  }
}

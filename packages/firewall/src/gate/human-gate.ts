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
  emitSessionResolved,
  recordPerception,
  requestedAuditRecord,
  resolvedAuditRecord,
  sessionAuditRecord,
} from './approval-reporting.js';
import { argsDigest, bindingOf } from './binding.js';
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
import { type ReviewerVerdict, runReviewer } from './reviewer.js';
import { principalKey, SessionState } from './session-state.js';

export { isHumanOnly, riskExplanation } from './approval-record.js';

/** Default time a person has to answer: 5 minutes. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

/** Default bound on pending approvals. */
export const DEFAULT_MAX_PENDING = 1000;

/**
 * Pending approvals and their answers. Construct once per daemon; the firewall interceptor
 * calls {@link hold}, HTTP/CLI/web answer with {@link answer}, tasks ask {@link isAbortRequested}.
 */
export class HumanGate {
  private readonly o: HumanGateOptions;
  private readonly clock: GateClock;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly maxResolved: number;
  private readonly answerRule: AnswererRule;
  private readonly pending = new Map<string, GateEntry>();
  /** Answered ids → their outcome word, oldest first (bounded). */
  private readonly resolved = new Map<string, string>();
  private readonly sessions: SessionState;
  private readonly counters = { held: 0, approved: 0, rejected: 0, timeouts: 0, overloaded: 0, session_approved: 0 };
  private closed = false;

  constructor(options: HumanGateOptions = {}) {
    this.o = options;
    this.clock = options.clock ?? systemGateClock;
    this.timeoutMs = options.timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.maxPending = options.max_pending ?? DEFAULT_MAX_PENDING;
    this.maxResolved = options.max_resolved ?? 1000;
    this.answerRule = {
      roles: options.answer_roles ?? ['admin', 'operator'],
      ...(options.answerers ? { answerers: [...options.answerers] } : {}),
    };
    this.sessions = new SessionState(options.max_sessions ?? 10_000);
  }

  /** Session approvals and abort phases (distributed mode shares them through its `onChange`/`restore` seam). */
  get sessionState(): SessionState {
    return this.sessions;
  }

  /**
   * Holds one call until it is answered. Never rejects: every outcome is a GateDecision. DENY is
   * refused at once (E_DENIED_BY_POLICY); an aborted session's calls are refused ('aborted'); a
   * session approval of (session, tool) at this level or stricter approves at once (not for
   * `human_only` rules); past `max_pending` the call is refused (E_OVERLOADED).
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
    if (!humanOnly) {
      const sa = this.sessions.approvalFor(facts.session_id, facts.tool_id, ev.level, principalKey(facts.principal));
      if (sa) return this.sessionApproved(ev, facts, args, sa.by);
    }
    if (this.pending.size >= this.maxPending) {
      this.counters.overloaded++;
      return refuse(
        'E_OVERLOADED',
        `too many pending approvals (${this.maxPending}): answer or reject some before new calls can be held`,
        'gate',
      );
    }
    return this.create(ev, facts, args, humanOnly);
  }

  /**
   * Answers a pending approval. Throws E_FORBIDDEN (answerer lacks operator/admin, or is not
   * one of the configured `answerers`: `details.reason: "not_an_answerer"`, still pending),
   * E_INVALID_ARGS (bad answer, or edited args the firewall rejects as invalid — the approval
   * then stays pending), E_NOT_FOUND (unknown id), E_CONFLICT (already answered or being answered),
   * E_STORE_UNAVAILABLE (`always` while the cluster's shared store is unreachable; still pending).
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
      const d = await this.finish(entry, refuse('E_REJECTED_BY_HUMAN', reason, 'human', id), {
        decision: 'reject',
        by: a.by,
      });
      return answerResult(base, d);
    }
    // approve | always
    // a session approval the cluster cannot share is refused before anything changes (still pending)
    if (a.decision === 'always' && !entry.approval.human_only) this.sessions.assertShareable?.();
    entry.state = 'answering';
    const edited = a.args !== undefined && argsDigest(a.args) !== entry.approval.binding.args_digest;
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
      if (ev.level === 'DENY' || ev.action === 'deny') {
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
    let sessionApproval = false;
    if (a.decision === 'always' && d.approved) {
      if (entry.approval.human_only)
        d.reason = 'approved once: a human_only rule matched, so no session approval was recorded';
      else if (entry.facts.session_id === '')
        // no session to scope it to: "always" would cover every session-less call of this caller
        d.reason = 'approved once: the call names no session, so no session approval was recorded';
      else {
        this.sessions.approve(entry.facts.session_id, {
          tool_id: entry.facts.tool_id,
          level: entry.approval.level,
          principal: principalKey(entry.facts.principal),
          by: a.by.id,
          at: this.clock.now(),
        });
        sessionApproval = true;
      }
    }
    if (a.reason?.trim() && d.reason === undefined) d.reason = a.reason.trim();
    const word = !d.approved ? 'reject' : a.decision === 'always' ? 'always' : edited ? 'approve_edited' : 'approve';
    const final = await this.finish(entry, d, { decision: word, by: a.by, edited });
    const r = answerResult({ ...base, edited, session_approval: sessionApproval && final.approved }, final);
    if (d.evaluation) r.evaluation = d.evaluation;
    return r;
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

  /** True once an abort was asked for the session (either phase): stop after the current step. */
  isAbortRequested(session_id: string): boolean {
    return this.sessions.abortPhase(session_id) !== null;
  }

  /** The session's abort phase, or null. `stopped`: stop at once. */
  abortPhase(session_id: string): 'stopping' | 'stopped' | null {
    return this.sessions.abortPhase(session_id);
  }

  /** Forgets a session's abort phase and session approvals (a new task may start in it). */
  resetSession(session_id: string): void {
    this.sessions.reset(session_id);
  }

  /** True when `always` was answered for (session, caller, tool) at `level` or stricter. */
  hasSessionApproval(
    session_id: string,
    tool_id: string,
    principal: { kind: string; id: string },
    level: Evaluation['level'] = 'APPROVE',
  ): boolean {
    return this.sessions.approvalFor(session_id, tool_id, level, principalKey(principal)) !== undefined;
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

  private create(ev: Evaluation, facts: ToolCallFacts, args: unknown, humanOnly: boolean): Promise<GateDecision> {
    const now = this.clock.now();
    const id = ulid();
    const reviewer = humanOnly ? undefined : this.o.reviewer;
    const approval = newPendingApproval({ id, ev, facts, args, humanOnly, reviewer, now, timeoutMs: this.timeoutMs });
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
    entry.timer = this.clock.setTimeout(() => this.onTimeout(entry), this.timeoutMs);
    this.pending.set(id, entry);
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

  private async sessionApproved(
    ev: Evaluation,
    facts: ToolCallFacts,
    args: unknown,
    by: string,
  ): Promise<GateDecision> {
    const d: GateDecision = {
      approved: true,
      args,
      decided_by: 'session',
      binding: bindingOf(args, ev.preview),
      reason: `session approval by ${by}`,
    };
    if (this.o.audit) {
      try {
        await this.o.audit.append(sessionAuditRecord(ev, facts, d, by));
      } catch (e) {
        this.o.logger?.warn({ err: e }, 'audit append of a session approval failed');
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
    emitSessionResolved(this.o.events, facts, by);
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

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

import { FingerError, rfc3339, ulid } from '@finger/protocol';

import type { Evaluation, ToolCallFacts } from '../engine/evaluation.js';
import { argsDigest, bindingOf } from './binding.js';
import {
  type AbortResult,
  type AnswerResult,
  type DecidedBy,
  GATE_ANSWER_DECISIONS,
  type GateAnswer,
  type GateAnswerer,
  type GateClock,
  type GateDecision,
  type GateRejectCode,
  type HumanGateOptions,
  type PendingApproval,
  systemGateClock,
} from './gate-types.js';
import { type ReviewerRun, type ReviewerVerdict, runReviewer } from './reviewer.js';
import { SessionState } from './session-state.js';

/** Default time a person has to answer: 5 minutes. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

/** Default bound on pending approvals. */
export const DEFAULT_MAX_PENDING = 1000;

const MAX_REASON = 2000;

interface Entry {
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
  resolve(d: GateDecision): void;
}

/** How a finish is recorded: the audit decision word, who answered, what perception counts. */
interface FinishMeta {
  /** approve | approve_edited | always | reject | abort | timeout | reviewer_approve | reviewer_reject | closed | store_failed */
  decision: string;
  by?: GateAnswerer;
  edited?: boolean;
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
function argsOf(ev: Evaluation, facts: ToolCallFacts): unknown {
  return ev.args !== undefined ? ev.args : facts.args;
}

function refuse(code: GateRejectCode, reason: string, decided_by: DecidedBy, approval_id?: string): GateDecision {
  const d: GateDecision = { approved: false, code, reason, decided_by };
  if (approval_id !== undefined) d.approval_id = approval_id;
  return d;
}

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
  private readonly answerRoles: readonly string[];
  private readonly pending = new Map<string, Entry>();
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
    this.answerRoles = options.answer_roles ?? ['admin', 'operator'];
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
      const sa = this.sessions.approvalFor(facts.session_id, facts.tool_id, ev.level);
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
   * Answers a pending approval. Throws E_FORBIDDEN (answerer lacks operator/admin),
   * E_INVALID_ARGS (bad answer, or edited args the firewall rejects as invalid — the approval
   * then stays pending), E_NOT_FOUND (unknown id), E_CONFLICT (already answered or being answered).
   */
  async answer(id: string, a: GateAnswer): Promise<AnswerResult> {
    this.checkAnswer(a);
    const entry = this.pending.get(id);
    if (!entry) {
      const prior = this.resolved.get(id);
      if (prior !== undefined)
        throw new FingerError('E_CONFLICT', `approval ${id} was already answered (${prior})`, { id, outcome: prior });
      throw new FingerError('E_NOT_FOUND', `no pending approval ${id}`, { id });
    }
    if (entry.state !== 'pending') throw new FingerError('E_CONFLICT', `approval ${id} is being answered`, { id });
    const base = { id, decision: a.decision, tool_id: entry.approval.tool_id, edited: false, session_approval: false };
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
      return this.result(base, d);
    }
    // approve | always
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
      if ((entry.state as Entry['state']) === 'done') {
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
      else {
        this.sessions.approve(entry.facts.session_id, {
          tool_id: entry.facts.tool_id,
          level: entry.approval.level,
          by: a.by.id,
          at: this.clock.now(),
        });
        sessionApproval = true;
      }
    }
    if (a.reason?.trim() && d.reason === undefined) d.reason = a.reason.trim();
    const word = !d.approved ? 'reject' : a.decision === 'always' ? 'always' : edited ? 'approve_edited' : 'approve';
    const final = await this.finish(entry, d, { decision: word, by: a.by, edited });
    const r = this.result({ ...base, edited, session_approval: sessionApproval && final.approved }, final);
    if (d.evaluation) r.evaluation = d.evaluation;
    return r;
  }

  /**
   * Aborts a session, two-phase: the first call marks it `stopping` (its task finishes the
   * current step, then stops: see {@link isAbortRequested}), the second `stopped` (stop now).
   * Both reject the session's pending approvals ('aborted') and every later hold of the session
   * until {@link resetSession}. `by`, when given, must be operator/admin (E_FORBIDDEN).
   */
  async abort(session_id: string, by?: GateAnswerer): Promise<AbortResult> {
    if (by) this.checkRole(by);
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

  /** True when `always` was answered for (session, tool) at `level` or stricter. */
  hasSessionApproval(session_id: string, tool_id: string, level: Evaluation['level'] = 'APPROVE'): boolean {
    return this.sessions.approvalFor(session_id, tool_id, level) !== undefined;
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
      status: reviewer ? 'reviewing' : 'waiting',
      binding: bindingOf(args, ev.preview),
      created_at: rfc3339(now),
      expires_at: rfc3339(now + this.timeoutMs),
    };
    if (reviewer) approval.review = { mode: reviewer.mode ?? 'beside', status: 'pending' };
    let resolve!: (d: GateDecision) => void;
    const done = new Promise<GateDecision>((r) => (resolve = r));
    const entry: Entry = {
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
      this.o.audit
        .append({
          type: 'approval.requested',
          actor: { kind: facts.principal.kind, id: facts.principal.id },
          request_id: facts.request_id,
          correlation_id: facts.correlation_id,
          tool: facts.tool_id,
          args_digest: approval.binding.args_digest === 'unserializable' ? null : approval.binding.args_digest,
          verdict: ev,
          details: { approval_id: id, session_id: facts.session_id, level: ev.level, human_only: humanOnly },
        })
        .catch((e: unknown) => {
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
    } else this.emitRequested(entry);
    return done;
  }

  private onReview(entry: Entry, v: ReviewerVerdict): void {
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
    this.emitRequested(entry);
  }

  private onTimeout(entry: Entry): void {
    if (entry.state === 'answering') {
      entry.expired = true;
      return;
    }
    if (entry.state !== 'pending') return;
    this.counters.timeouts++;
    const secs = Math.round(this.timeoutMs / 1000);
    void this.finish(
      entry,
      refuse(
        'E_APPROVAL_TIMEOUT',
        `nobody answered approval ${entry.approval.id} within ${secs} s`,
        'timeout',
        entry.approval.id,
      ),
      { decision: 'timeout' },
    );
  }

  /** An answer failed its checks: the approval is pending again (and catches up on what happened meanwhile). */
  private reopen(entry: Entry): void {
    if (entry.state !== 'answering') return;
    entry.state = 'pending';
    if (entry.expired) this.onTimeout(entry);
    else if (entry.lateReview) {
      const v = entry.lateReview;
      delete entry.lateReview;
      this.onReview(entry, v);
    }
  }

  private async reevaluate(entry: Entry, args: unknown): Promise<Evaluation> {
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
        await this.o.audit.append({
          type: 'approval.resolved',
          actor: { kind: 'human', id: by },
          request_id: facts.request_id,
          correlation_id: facts.correlation_id,
          tool: facts.tool_id,
          args_digest: d.binding!.args_digest === 'unserializable' ? null : d.binding!.args_digest,
          verdict: ev,
          decision: 'session',
          details: { session_id: facts.session_id, level: ev.level },
        });
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
    this.o.events?.emit(
      'APPROVAL_RESOLVED',
      {
        request_id: facts.request_id,
        correlation_id: facts.correlation_id,
        session_id: facts.session_id,
        target: facts.tool_id,
      },
      { id: null, tool_id: facts.tool_id, decision: 'session', approved: true, decided_by: 'session', by },
    );
    return d;
  }

  /** Settles an entry once: audit (if configured), perception, APPROVAL_RESOLVED, then the hold resolves. */
  private async finish(entry: Entry, d: GateDecision, meta: FinishMeta): Promise<GateDecision> {
    if (entry.state === 'done') return d;
    entry.state = 'done';
    this.clock.clearTimeout(entry.timer);
    entry.reviewer?.cancel();
    const { approval, facts } = entry;
    this.pending.delete(approval.id);
    this.resolved.set(approval.id, meta.decision);
    if (this.resolved.size > this.maxResolved) this.resolved.delete(this.resolved.keys().next().value as string);
    const latency = Math.max(0, this.clock.now() - entry.createdMs);
    let final = d;
    if (this.o.audit) {
      const digest = final.binding?.args_digest ?? approval.binding.args_digest;
      try {
        await this.o.audit.append({
          type: 'approval.resolved',
          actor: meta.by
            ? { kind: meta.by.kind ?? 'human', id: meta.by.id }
            : { kind: 'system', id: d.decided_by === 'reviewer' ? 'reviewer' : 'human-gate' },
          request_id: facts.request_id,
          correlation_id: facts.correlation_id,
          tool: facts.tool_id,
          args_digest: digest === 'unserializable' ? null : digest,
          verdict: d.evaluation ?? entry.ev,
          decision: meta.decision,
          details: {
            approval_id: approval.id,
            session_id: facts.session_id,
            decided_by: d.decided_by,
            latency_ms: latency,
            ...(d.reason !== undefined ? { reason: d.reason } : {}),
          },
        });
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
    this.o.events?.emit(
      'APPROVAL_RESOLVED',
      {
        request_id: facts.request_id,
        correlation_id: facts.correlation_id,
        session_id: facts.session_id,
        target: facts.tool_id,
      },
      {
        id: approval.id,
        tool_id: facts.tool_id,
        decision: meta.decision,
        approved: final.approved,
        decided_by: final.decided_by,
        latency_ms: latency,
        ...(meta.by ? { by: meta.by.id } : {}),
        ...(final.reason !== undefined ? { reason: final.reason } : {}),
        ...(final.code !== undefined ? { code: final.code } : {}),
      },
    );
    entry.resolve(final);
    return final;
  }

  private record(entry: Entry, d: GateDecision, latency: number, meta: FinishMeta): void {
    const { tool_id, session_id } = entry.facts;
    if (d.approved) this.counters.approved++;
    else this.counters.rejected++;
    const p = this.o.perception;
    if (!p) return;
    if (d.approved) {
      if (d.decided_by === 'human' || d.decided_by === 'reviewer') {
        p.recordApproval({
          tool_id,
          session_id,
          latency_ms: latency,
          source: d.decided_by,
          edited: meta.edited === true,
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
      p.recordRejection({ tool_id, session_id, source, ...(d.reason !== undefined ? { reason: d.reason } : {}) });
  }

  private emitRequested(entry: Entry): void {
    const a = entry.approval;
    this.o.events?.emit(
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

  private result(base: Omit<AnswerResult, 'approved'>, d: GateDecision): AnswerResult {
    const r: AnswerResult = { ...base, approved: d.approved };
    if (d.reason !== undefined) r.reason = d.reason;
    if (d.code !== undefined) r.code = d.code;
    if (d.binding) r.args_digest = d.binding.args_digest;
    return r;
  }

  private checkRole(by: GateAnswerer): void {
    if (!by.roles.some((r) => this.answerRoles.includes(r))) {
      throw new FingerError(
        'E_FORBIDDEN',
        `${by.id} (role ${by.roles.join(',') || 'none'}) may not answer approvals: ${this.answerRoles.join(' or ')} needed`,
        { required: this.answerRoles },
      );
    }
  }

  private checkAnswer(a: GateAnswer): void {
    if (typeof a !== 'object' || a === null) throw new FingerError('E_INVALID_ARGS', 'an answer must be an object');
    if (!GATE_ANSWER_DECISIONS.includes(a.decision)) {
      throw new FingerError('E_INVALID_ARGS', `decision must be one of ${GATE_ANSWER_DECISIONS.join(', ')}`, {
        issues: [{ path: '$.decision', message: `must be one of ${GATE_ANSWER_DECISIONS.join(', ')}` }],
      });
    }
    if (a.reason !== undefined && (typeof a.reason !== 'string' || a.reason.length > MAX_REASON)) {
      throw new FingerError('E_INVALID_ARGS', `reason must be a string of at most ${MAX_REASON} characters`, {
        issues: [{ path: '$.reason', message: `must be a string (≤ ${MAX_REASON} chars)` }],
      });
    }
    if (a.args !== undefined && a.decision !== 'approve' && a.decision !== 'always') {
      throw new FingerError('E_INVALID_ARGS', 'args may only come with approve or always', {
        issues: [{ path: '$.args', message: 'only with approve or always' }],
      });
    }
    if (!a.by || typeof a.by.id !== 'string' || !Array.isArray(a.by.roles)) {
      throw new FingerError('E_FORBIDDEN', 'an answer needs an authenticated principal');
    }
    this.checkRole(a.by);
  }
}

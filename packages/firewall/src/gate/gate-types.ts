// The HumanGate's vocabulary: what a held call looks like to a person (PendingApproval), what a
// person answers (GateAnswer), and what the firewall interceptor gets back (GateDecision).
// Everything here is plain data so it can cross HTTP, WebSocket and the reviewer's stdin as-is.

import type { EventType } from '@finger/protocol';

import type { AuditRecord } from '../audit/audit-entry.js';
import type { Evaluation, Level, ToolCallFacts } from '../engine/evaluation.js';
import type { ApprovalSample, RejectionSample } from '../perception/perception-bus.js';
import type { CallShape } from './call-shape.js';
import type { ShapeResolver } from './shape-facts.js';
import type { StandingApproval, StandingApprovals, StandingScope } from './standing-approvals.js';

/** What a person may answer (§3.8 HumanGate). */
export type GateAnswerDecision = 'approve' | 'reject' | 'always' | 'abort';

/** The answers, in the order the CLI and the web UI offer them. */
export const GATE_ANSWER_DECISIONS: readonly GateAnswerDecision[] = ['approve', 'reject', 'always', 'abort'];

/** Who answers: a principal with its roles (only `operator` or `admin` may answer). */
export interface GateAnswerer {
  kind?: string;
  id: string;
  roles: readonly string[];
}

/** One answer to a pending approval (`POST /v1/approvals/:id`, `myfinger approve|reject`). */
export interface GateAnswer {
  decision: GateAnswerDecision;
  /** `approve`/`always` only: edited arguments; re-validated and re-evaluated before they count. */
  args?: unknown;
  /** Fed back to the agent on `reject`; recorded with every answer. */
  reason?: string;
  /** `always` only: the shape to approve — the pending approval's proposed one (default) or narrower. */
  shape?: CallShape;
  /** `always` only: where the standing approval applies (default `session`). */
  scope?: StandingScope;
  /** `always` only: RFC 3339 expiry (required for `persistent`, at most a year ahead). */
  expires_at?: string;
  /**
   * `reject` only: false when the rejection is not the agent's fault (the person changed their
   * mind, the moment is wrong): it does not count toward the agent's denial breaker.
   */
  agent_fault?: boolean;
  by: GateAnswerer;
}

/**
 * What `always` would leave behind for a held call, shown before the person accepts: a standing
 * approval of `shape`, or why none can be given (the call is answered once).
 */
export type StandingOffer =
  { offered: true; shape: CallShape; description: string } | { offered: false; reason: string };

/**
 * What an approval covers: the canonical-JSON digest of the exact arguments shown and, for
 * writes, the sha256 of the file content the diff was made against (`null`: the file did not
 * exist). `file_sha256` absent: no file is bound (not a write).
 */
export interface ApprovalBinding {
  args_digest: string;
  file_sha256?: string | null;
}

/** Who or what settled a hold. */
/** `caller`: the principal that made the held call withdrew it ({@link HumanGate.withdraw}). */
export type DecidedBy = 'human' | 'reviewer' | 'session' | 'standing' | 'timeout' | 'abort' | 'gate' | 'caller';

/** Error codes a refused hold carries; the interceptor throws a FingerError with it. */
export type GateRejectCode =
  | 'E_REJECTED_BY_HUMAN'
  | 'E_APPROVAL_TIMEOUT'
  | 'E_DENIED_BY_POLICY'
  | 'E_OVERLOADED'
  | 'E_STORE_UNAVAILABLE'
  | 'E_PROVIDER_CLOSED'
  | 'E_HALTED'
  | 'E_WITHDRAWN';

/**
 * The outcome of {@link HumanGate.hold}. Approved: run `args` (the edited ones when the person
 * edited them), after checking `bindingHolds(decision, argsAboutToRun, fileShaNow)` right before
 * execution. Refused: throw `new FingerError(code, reason)`.
 */
export interface GateDecision {
  approved: boolean;
  /** Approved: the arguments to run (edited or as shown). */
  args?: unknown;
  /** Why it was refused (the person's reason, `aborted`, the timeout…) or a note on approval. */
  reason?: string;
  /** Refused only. */
  code?: GateRejectCode;
  /** The pending approval's id, when one was created. */
  approval_id?: string;
  decided_by: DecidedBy;
  /** Approved only: what the approval covers. */
  binding?: ApprovalBinding;
  /** The firewall's verdict on edited arguments (their new preview binds the file hash). */
  evaluation?: Evaluation;
}

/** Summary of the call's facts a person sees (never the whole tool metadata). */
export interface ApprovalFacts {
  principal: { kind: string; id: string; roles: string[] };
  session_id: string;
  request_id: string;
  correlation_id: string;
  direct: boolean;
  confidence?: number;
}

/** The external reviewer's part in an approval. */
export interface ApprovalReview {
  mode: ReviewerMode;
  status: 'pending' | 'approved' | 'rejected';
  reason?: string;
}

/**
 * A held call waiting for an answer: `GET /v1/approvals`, the APPROVAL_REQUESTED event, the
 * reviewer's stdin. `status` is `reviewing` while an external reviewer decides first.
 */
export interface PendingApproval {
  id: string;
  tool_id: string;
  /** Exactly the arguments the approval covers (after the argument filter). */
  args: unknown;
  level: Level;
  evaluation: Evaluation;
  facts: ApprovalFacts;
  /** One-paragraph risk explanation: level, deciding layer, rules and reasons. */
  risk: string;
  /** A rule marked `human_only` matched: no reviewer, no standing approval. */
  human_only: boolean;
  /** What `always` would approve from now on (the shape), or why it would approve this call only. */
  standing: StandingOffer;
  status: 'reviewing' | 'waiting';
  review?: ApprovalReview;
  binding: ApprovalBinding;
  created_at: string;
  expires_at: string;
}

/** What {@link HumanGate.answer} reports. `decision` is what was asked; `approved` the outcome. */
export interface AnswerResult {
  id: string;
  decision: GateAnswerDecision;
  approved: boolean;
  tool_id: string;
  /** The arguments were edited (and re-evaluated). */
  edited: boolean;
  /** `always` left a standing approval (kept under this name for older clients). */
  session_approval: boolean;
  /** The standing approval `always` created. */
  standing_approval?: StandingApproval;
  reason?: string;
  code?: GateRejectCode;
  args_digest?: string;
  evaluation?: Evaluation;
  /** `abort`: the session's abort phase after this answer. */
  abort?: AbortPhase;
  /** Who answered: the answering token's name (principal id), kind and roles. */
  answered_by: AnsweredBy;
}

/**
 * Who answered a held call, as recorded in the audit entry (`details.answered_by`), the
 * APPROVAL_RESOLVED event and the answer: `id` is the name of the token that answered (`admin`
 * for the admin token, `alice` for one made with `myfinger token create --name alice`), `roles`
 * the token's roles.
 */
export interface AnsweredBy {
  kind: string;
  id: string;
  roles: string[];
}

/** Two-phase abort: `stopping` (finish the current step, then stop), `stopped` (stop now). */
export type AbortPhase = 'stopping' | 'stopped';

/** What {@link HumanGate.abort} did. */
export interface AbortResult {
  session_id: string;
  phase: AbortPhase;
  /** Pending approvals of the session rejected by this abort. */
  rejected: number;
}

/** Time source (the hub's Clock satisfies it). */
export interface GateClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time; timers are unref'd so a pending approval never keeps the process alive. */
export const systemGateClock: GateClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Where APPROVAL_REQUESTED / APPROVAL_RESOLVED go (the hub's EventBus satisfies it). */
export interface GateEvents {
  emit(
    type: EventType,
    correlation: { request_id?: string; correlation_id?: string; session_id?: string; target?: string },
    data?: Record<string, unknown>,
  ): unknown;
}

/** The audit log's append (AuditLog satisfies it). */
export interface GateAudit {
  append(record: AuditRecord): Promise<unknown>;
}

/** Where approvals and rejections are counted (PerceptionBus satisfies it). */
export interface GatePerception {
  recordApproval(sample: Omit<ApprovalSample, 'seq' | 'at'>): void;
  recordRejection(sample: Omit<RejectionSample, 'seq' | 'at'>): void;
}

/**
 * `instead`: the reviewer stands in for the person (its answer is final; a person may still
 * answer first). `beside`: the reviewer answers first — its rejection rejects, its approval
 * passes the call on to a person, who decides.
 */
export type ReviewerMode = 'instead' | 'beside';

/** An external reviewer command: JSON of the PendingApproval on stdin, one JSON decision on stdout. */
export interface ReviewerConfig {
  /** argv; `command[0]` is run without a shell. */
  command: string[];
  /** Default 30 s; past it the reviewer is killed and the call rejected. */
  timeout_ms?: number;
  /** Default `beside` (a person still decides). */
  mode?: ReviewerMode;
  cwd?: string;
  env?: Record<string, string>;
}

/** The firewall's re-evaluation of edited arguments (FirewallEngine.evaluate, bound to its policy). */
export type Reevaluate = (facts: ToolCallFacts) => Evaluation | Promise<Evaluation>;

/** Warnings the gate logs (pino and the hub's Logger satisfy it). */
export interface GateLogger {
  warn(obj: object, msg?: string): void;
}

/** Options of {@link HumanGate}. Every collaborator is optional; missing ones are skipped. */
export interface HumanGateOptions {
  events?: GateEvents;
  /** Needed to accept edited arguments; without it edits are refused with E_INVALID_ARGS. */
  reevaluate?: Reevaluate;
  clock?: GateClock;
  /** Default 5 min; then the call is rejected with E_APPROVAL_TIMEOUT. */
  timeout_ms?: number;
  /** Default 1000; beyond it new holds are rejected at once (E_OVERLOADED). */
  max_pending?: number;
  /**
   * Calls one principal (`<kind>:<id>`) may have held at once; beyond it that principal's new
   * holds are refused (E_OVERLOADED naming this quota), others' are not. Default 100.
   */
  max_pending_per_principal?: number;
  /**
   * Of `max_pending`, the places only human principals (a person's own direct calls) may take:
   * agents, modules and the system together hold at most `max_pending - human_reserve`. Default
   * a tenth of `max_pending` (100); must be below `max_pending`.
   */
  human_reserve?: number;
  /** Answered ids remembered to tell E_CONFLICT from E_NOT_FOUND. Default 1000. */
  max_resolved?: number;
  /** Sessions whose abort state is kept. Default 10,000 (oldest dropped). */
  max_sessions?: number;
  /** Resolves a held call's shape facts (command model, real paths, roots); without it `always` approves once. */
  shapes?: ShapeResolver;
  /** The standing approvals (default: a new, empty set; the daemon passes one it persists and shares). */
  standing?: StandingApprovals;
  /** Roles allowed to answer. Default `admin`, `operator`. */
  answer_roles?: readonly string[];
  /**
   * When set, only principals with one of these ids (token names) may answer or abort, on top
   * of `answer_roles`; others get E_FORBIDDEN `{reason: "not_an_answerer"}`. Config `approvals.answerers`.
   */
  answerers?: readonly string[];
  reviewer?: ReviewerConfig;
  /** When set, `approval.requested` / `approval.resolved` entries are written; a failed write rejects the call. */
  audit?: GateAudit;
  perception?: GatePerception;
  logger?: GateLogger;
}

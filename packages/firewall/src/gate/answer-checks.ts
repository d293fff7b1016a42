// Checks an answer to a pending approval before the gate acts on it (shape, decision, reason
// length, who may answer), and shapes the AnswerResult returned to the answerer.

import { FingerError } from '@finger/protocol';

import {
  type AnsweredBy,
  type AnswerResult,
  GATE_ANSWER_DECISIONS,
  type GateAnswer,
  type GateAnswerer,
  type GateDecision,
} from './gate-types.js';

const MAX_REASON = 2000;

/** Who may answer: roles, and (config `approvals.answerers`) the principal ids (token names) allowed. */
export interface AnswererRule {
  roles: readonly string[];
  answerers?: readonly string[] | undefined;
}

/**
 * Throws E_FORBIDDEN unless `by` holds one of the rule's roles (`details.required`: the roles)
 * and, when the rule names answerers, is one of them (`details.reason: "not_an_answerer"`).
 */
export function checkAnswerer(by: GateAnswerer, rule: AnswererRule): void {
  if (!by.roles.some((r) => rule.roles.includes(r))) {
    throw new FingerError(
      'E_FORBIDDEN',
      `${by.id} (role ${by.roles.join(',') || 'none'}) may not answer approvals: ${rule.roles.join(' or ')} needed`,
      { required: rule.roles },
    );
  }
  if (rule.answerers !== undefined && !rule.answerers.includes(by.id)) {
    throw new FingerError(
      'E_FORBIDDEN',
      `token ${by.id} may not answer approvals: only the tokens named in config approvals.answerers may`,
      { reason: 'not_an_answerer', token: by.id },
    );
  }
}

/** The record of who answered: kind (default human), id (the token name) and roles, copied. */
export function answeredBy(by: GateAnswerer): AnsweredBy {
  return { kind: by.kind ?? 'human', id: by.id, roles: [...by.roles] };
}

/**
 * Throws E_INVALID_ARGS for a malformed answer (decision, reason ≤ 2000 chars, args only with
 * approve/always, shape/scope/expires_at only with always, agent_fault only with reject) and E_FORBIDDEN without an authenticated principal holding an answer role.
 */
export function checkAnswer(a: GateAnswer, rule: AnswererRule): void {
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
  for (const k of ['shape', 'scope', 'expires_at'] as const) {
    if (a[k] !== undefined && a.decision !== 'always') {
      throw new FingerError('E_INVALID_ARGS', `${k} may only come with always`, {
        issues: [{ path: `$.${k}`, message: 'only with always' }],
      });
    }
  }
  if (a.agent_fault !== undefined && (a.decision !== 'reject' || typeof a.agent_fault !== 'boolean')) {
    throw new FingerError('E_INVALID_ARGS', 'agent_fault is a boolean that may only come with reject', {
      issues: [{ path: '$.agent_fault', message: 'a boolean, only with reject' }],
    });
  }
  if (!a.by || typeof a.by.id !== 'string' || !Array.isArray(a.by.roles)) {
    throw new FingerError('E_FORBIDDEN', 'an answer needs an authenticated principal');
  }
  checkAnswerer(a.by, rule);
}

/** The AnswerResult of a settled answer. */
export function answerResult(base: Omit<AnswerResult, 'approved'>, d: GateDecision): AnswerResult {
  const r: AnswerResult = { ...base, approved: d.approved };
  if (d.reason !== undefined) r.reason = d.reason;
  if (d.code !== undefined) r.code = d.code;
  if (d.binding) r.args_digest = d.binding.args_digest;
  return r;
}

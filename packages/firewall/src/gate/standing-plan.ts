// What an `always` answer leaves behind (§3.8): the standing approval a hold offers (shown with the
// pending approval) and, once answered, the standing approval it plans — its shape checked against
// the proposed one, its scope and expiry — or why the call is approved once only. Pure: the gate
// passes the time and the caller's workspace, and adds the planned approval once the answer is
// on record (standing-approvals.ts keeps and matches them).

import { FingerError, rfc3339, ulid } from '@finger/protocol';

import type { Evaluation } from '../engine/evaluation.js';
import type { GateEntry } from './approval-record.js';
import { type CallShape, describeShape, matchShape, narrows, parseShape, type ShapeFacts } from './call-shape.js';
import type { GateAnswer, HumanGateOptions, StandingOffer } from './gate-types.js';
import { principalKey } from './session-state.js';
import { coverableLevel, STANDING_SCOPES, type StandingApproval, type StandingScope } from './standing-approvals.js';

/** A persistent standing approval given without `expires_at` lasts this long (30 days). */
export const DEFAULT_PERSISTENT_MS = 30 * 24 * 60 * 60_000;

/** No standing approval lasts longer than this from its creation (one year). */
export const MAX_STANDING_MS = 366 * 24 * 60 * 60_000;

/** What `always` will leave behind: a standing approval to add once the answer is recorded, or why none. */
export type StandingPlan = { approval: StandingApproval } | { note: string };

/** What `always` would offer for a hold (shown with the pending approval). */
export function offerFor(
  level: Evaluation['level'],
  humanOnly: boolean,
  proposed: CallShape | undefined,
): StandingOffer {
  if (humanOnly) return { offered: false, reason: 'a human_only rule matched: always approves this call only' };
  if (!coverableLevel(level))
    return {
      offered: false,
      reason: `a standing approval never covers an ${level} hold: always approves this call only`,
    };
  if (proposed === undefined)
    return { offered: false, reason: 'no shape can be made of this call: always approves this call only' };
  return { offered: true, shape: structuredClone(proposed), description: describeShape(proposed) };
}

/** The gate's part in planning: the time now, and its shape resolver (a `workspace` scope needs the caller's workspace). */
export interface StandingPlanContext {
  now: number;
  shapes: HumanGateOptions['shapes'];
}

/** Checks an `always` answer's shape, scope and expiry (E_INVALID_ARGS) and plans the standing approval. */
export function planStanding(
  entry: GateEntry,
  a: GateAnswer,
  facts: ShapeFacts | undefined,
  proposed: CallShape | undefined,
  level: Evaluation['level'],
  ctx: StandingPlanContext,
): StandingPlan {
  const scope: StandingScope = a.scope ?? 'session';
  if (!STANDING_SCOPES.includes(scope))
    throw new FingerError('E_INVALID_ARGS', `scope must be one of ${STANDING_SCOPES.join(', ')}`, {
      issues: [{ path: '$.scope', message: `must be one of ${STANDING_SCOPES.join(', ')}` }],
    });
  const now = ctx.now;
  let expires: number | undefined;
  if (a.expires_at !== undefined) {
    expires = typeof a.expires_at === 'string' ? Date.parse(a.expires_at) : NaN;
    if (!Number.isFinite(expires) || expires <= now || expires > now + MAX_STANDING_MS)
      throw new FingerError(
        'E_INVALID_ARGS',
        'expires_at must be an RFC 3339 time in the future, at most a year ahead',
        {
          issues: [{ path: '$.expires_at', message: 'must be a future RFC 3339 time, at most a year ahead' }],
        },
      );
  } else if (scope === 'persistent') expires = now + DEFAULT_PERSISTENT_MS;
  const once = (why: string): StandingPlan => ({
    note: `approved once: ${why}, so no standing approval was recorded`,
  });
  if (entry.approval.human_only) return once('a human_only rule matched');
  if (!coverableLevel(level)) return once(`a standing approval never covers an ${level} hold`);
  if (facts === undefined || proposed === undefined) return once('no shape can be made of this call');
  let shape = proposed;
  if (a.shape !== undefined) {
    shape = parseShape(a.shape);
    if (!narrows(shape, proposed) || !matchShape(shape, facts))
      throw new FingerError(
        'E_INVALID_ARGS',
        `the shape must be the proposed one (${describeShape(proposed)}) or narrower, and cover the held call`,
        {
          issues: [{ path: '$.shape', message: 'not the proposed shape or narrower, or does not cover the held call' }],
        },
      );
  }
  const principal = entry.facts.principal;
  const approval: StandingApproval = {
    id: ulid(),
    tool_id: entry.facts.tool_id,
    shape: structuredClone(shape),
    level,
    principal: principalKey(principal),
    scope,
    by: a.by.id,
    created_at: rfc3339(now),
    approval_id: entry.approval.id,
  };
  if (expires !== undefined) approval.expires_at = rfc3339(expires);
  if (scope === 'session') {
    // no session to scope it to: it would cover every session-less call of this caller
    if (entry.facts.session_id === '')
      return once('the call names no session (answer with scope workspace or persistent)');
    approval.session_id = entry.facts.session_id;
  } else if (scope === 'workspace') {
    const ws = ctx.shapes?.workspaceOf(principal);
    if (ws === undefined) return once('the caller has no workspace');
    approval.workspace = ws;
  }
  return { approval };
}

// The HumanGate's bounds on pending holds (§3.8, approvals.max_pending*): the whole queue, one
// principal's share of it, and the part kept for human principals' own calls. Kept apart from the
// gate so "why was my call refused E_OVERLOADED?" is answered in one place: the gate only asks
// `overloadOf` before it holds a call and counts each hold in and out.

import { FingerError } from '@finger/protocol';

import type { ToolCallFacts } from '../engine/evaluation.js';
import type { HumanGateOptions } from './gate-types.js';
import { principalKey } from './session-state.js';

/** Default bound on pending approvals. */
export const DEFAULT_MAX_PENDING = 1000;

/** Default bound on one principal's pending approvals: 1,000 holds from one agent cannot fill the queue. */
export const DEFAULT_MAX_PENDING_PER_PRINCIPAL = 100;

/** Default share of the pending bound kept for human principals' own calls: a tenth (100 of 1000). */
export const DEFAULT_HUMAN_RESERVE_SHARE = 0.1;

/** Pending holds per principal against the configured bounds. */
export class HoldQuotas {
  private readonly maxPending: number;
  private readonly maxPerPrincipal: number;
  private readonly humanReserve: number;
  /** Pending holds per principal key, and of principals that are not human (for the reserve). */
  private readonly heldBy = new Map<string, number>();
  private heldByNonHumans = 0;

  /** Throws E_INVALID_ARGS when `human_reserve` is not below `max_pending`. */
  constructor(options: HumanGateOptions) {
    this.maxPending = options.max_pending ?? DEFAULT_MAX_PENDING;
    this.maxPerPrincipal = options.max_pending_per_principal ?? DEFAULT_MAX_PENDING_PER_PRINCIPAL;
    this.humanReserve = options.human_reserve ?? Math.floor(this.maxPending * DEFAULT_HUMAN_RESERVE_SHARE);
    if (options.human_reserve !== undefined && options.human_reserve >= this.maxPending)
      throw new FingerError(
        'E_INVALID_ARGS',
        `approvals.human_reserve (${options.human_reserve}) must be below approvals.max_pending (${this.maxPending})`,
        { issues: [{ path: '$.approvals.human_reserve', message: `must be below max_pending (${this.maxPending})` }] },
      );
  }

  /**
   * Why a new hold of `principal` is refused (which bound it hit), or undefined when it may be
   * held. `pending` is the number of holds pending in the gate now.
   */
  overloadOf(principal: ToolCallFacts['principal'], pending: number): string | undefined {
    const key = principalKey(principal);
    const mine = this.heldBy.get(key) ?? 0;
    if (mine >= this.maxPerPrincipal)
      return `${key} has ${mine} calls held for a person, its quota (approvals.max_pending_per_principal = ${this.maxPerPrincipal}): answer or reject some of them before it can hold more; others' calls are still held`;
    if (pending >= this.maxPending)
      return `too many pending approvals (approvals.max_pending = ${this.maxPending}): answer or reject some before new calls can be held`;
    if (principal.kind !== 'human' && this.heldByNonHumans >= this.maxPending - this.humanReserve)
      return `too many pending approvals of agents (${this.heldByNonHumans}; approvals.max_pending ${this.maxPending} less approvals.human_reserve ${this.humanReserve} kept for people's own calls): answer or reject some before ${key} can hold more`;
    return undefined;
  }

  /** Counts a hold of `principal` in (+1) or out (-1) of its quotas. */
  count(principal: ToolCallFacts['principal'], delta: 1 | -1): void {
    const key = principalKey(principal);
    const n = (this.heldBy.get(key) ?? 0) + delta;
    if (n > 0) this.heldBy.set(key, n);
    else this.heldBy.delete(key);
    if (principal.kind !== 'human') this.heldByNonHumans += delta;
  }
}

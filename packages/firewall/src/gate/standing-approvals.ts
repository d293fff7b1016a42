// Standing approvals: what a person's `always` leaves behind — a call *shape* (call-shape.ts) the
// caller it was given for may run without asking again, in one session, one workspace, or (until
// it expires) anywhere. Kept in memory; the daemon persists the persistent ones (state file) and
// shares all of them through Redis via the `onChange` / `restore` seam. Bounded: past `max` the
// oldest session-scoped ones are forgotten first (a forgotten one simply asks again).

import { type Level, LEVEL_ORDER } from '../engine/evaluation.js';
import { type CallShape, matchShape, type ShapeFacts } from './call-shape.js';

/** Where a standing approval applies. */
export type StandingScope = 'session' | 'workspace' | 'persistent';

/** The scopes, narrowest first. */
export const STANDING_SCOPES: readonly StandingScope[] = ['session', 'workspace', 'persistent'];

/** One standing approval (`GET /v1/standing-approvals`). */
export interface StandingApproval {
  id: string;
  tool_id: string;
  shape: CallShape;
  /** The level of the hold it was given at: it never covers a stricter hold (nor ever APPROVE or DENY). */
  level: Level;
  /** The caller it covers, `<kind>:<id>` (the principal the daemon bound, never a payload's). */
  principal: string;
  scope: StandingScope;
  /** scope `session`: the session. */
  session_id?: string;
  /** scope `workspace`: the caller's workspace (real path). */
  workspace?: string;
  /** RFC 3339; past it the approval covers nothing (required for `persistent`). */
  expires_at?: string;
  /** Who answered `always` (token name). */
  by: string;
  created_at: string;
  /** The pending approval it was given on. */
  approval_id: string;
}

/** What a held call is checked with. */
export interface StandingQuery {
  facts: ShapeFacts;
  level: Level;
  principal: string;
  session_id: string;
  workspace: string | undefined;
  now: number;
}

/** The levels a standing approval may cover: a hold's level, below APPROVE. */
export function coverableLevel(level: Level): boolean {
  return level !== 'APPROVE' && level !== 'DENY' && LEVEL_ORDER.indexOf(level) < LEVEL_ORDER.indexOf('APPROVE');
}

/** Whether `a` is in force at `now` (not expired). */
export function isLive(a: StandingApproval, now: number): boolean {
  return a.expires_at === undefined || Date.parse(a.expires_at) > now;
}

/** Whether `a` covers the call of `q` (the pure decision; see {@link StandingApprovals.find}). */
export function covers(a: StandingApproval, q: StandingQuery): boolean {
  if (!coverableLevel(q.level) || LEVEL_ORDER.indexOf(q.level) > LEVEL_ORDER.indexOf(a.level)) return false;
  if (a.principal !== q.principal || !isLive(a, q.now)) return false;
  if (a.scope === 'session' && (q.session_id === '' || a.session_id !== q.session_id)) return false;
  if (a.scope === 'workspace' && (q.workspace === undefined || a.workspace !== q.workspace)) return false;
  return matchShape(a.shape, q.facts);
}

/** The standing approvals of one daemon. */
export class StandingApprovals {
  private readonly byId = new Map<string, StandingApproval>();
  /**
   * Called after every local change (add, revoke, a session's reset) with the approval's new
   * value (undefined: gone), so the daemon can persist and share it; {@link restore} does not call it.
   */
  onChange: ((id: string, a: StandingApproval | undefined) => void) | undefined;
  /** Throws (E_STORE_UNAVAILABLE) while a new approval could not reach the cluster's shared store. */
  assertShareable: (() => void) | undefined;

  constructor(private readonly max = 10_000) {}

  /** Adds one (the newest last); forgets the oldest session-scoped ones past `max`. */
  add(a: StandingApproval): void {
    this.byId.set(a.id, structuredClone(a));
    this.onChange?.(a.id, a);
    for (const pass of ['session', 'any'] as const) {
      for (const [id, x] of this.byId) {
        if (this.byId.size <= this.max) return;
        if (pass === 'session' && x.scope !== 'session') continue;
        this.byId.delete(id);
        this.onChange?.(id, undefined);
      }
    }
  }

  /** One by id (a copy), or undefined. */
  get(id: string): StandingApproval | undefined {
    const a = this.byId.get(id);
    return a ? structuredClone(a) : undefined;
  }

  /** All (copies), oldest first; expired ones are left out unless `expired`. */
  list(filter: { principal?: string; session_id?: string; now?: number; expired?: boolean } = {}): StandingApproval[] {
    const now = filter.now ?? Date.now();
    const out: StandingApproval[] = [];
    for (const a of this.byId.values()) {
      if (filter.principal !== undefined && a.principal !== filter.principal) continue;
      if (filter.session_id !== undefined && a.session_id !== filter.session_id) continue;
      if (filter.expired !== true && !isLive(a, now)) continue;
      out.push(structuredClone(a));
    }
    return out;
  }

  /** The first standing approval covering the call, or undefined. */
  find(q: StandingQuery): StandingApproval | undefined {
    for (const a of this.byId.values()) if (covers(a, q)) return structuredClone(a);
    return undefined;
  }

  /** Removes one; returns what it was (undefined: no such approval). */
  revoke(id: string): StandingApproval | undefined {
    const a = this.byId.get(id);
    if (a === undefined) return undefined;
    this.byId.delete(id);
    this.onChange?.(id, undefined);
    return a;
  }

  /** Forgets the session-scoped approvals of a session (an abort or reset asks again). */
  forgetSession(session_id: string): void {
    for (const [id, a] of this.byId) {
      if (a.scope === 'session' && a.session_id === session_id) {
        this.byId.delete(id);
        this.onChange?.(id, undefined);
      }
    }
  }

  /** Drops expired approvals (and tells `onChange`); returns how many. */
  sweep(now: number): number {
    let n = 0;
    for (const [id, a] of this.byId) {
      if (isLive(a, now)) continue;
      this.byId.delete(id);
      this.onChange?.(id, undefined);
      n++;
    }
    return n;
  }

  /** Applies a change from a shared store or a state file (undefined: gone); `onChange` is not called. */
  restore(id: string, a: StandingApproval | undefined): void {
    if (a === undefined) this.byId.delete(id);
    else this.byId.set(id, structuredClone(a));
  }

  /** Number kept. */
  get size(): number {
    return this.byId.size;
  }
}

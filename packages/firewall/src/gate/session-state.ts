// Per-session state of the HumanGate: session approvals ("always") and the two-phase abort.
// Bounded: at most `max` sessions; the least recently touched is forgotten first (a forgotten
// session simply asks again — never an approval carried to another session).

import { type Level, LEVEL_ORDER } from '../engine/evaluation.js';
import type { AbortPhase } from './gate-types.js';

/**
 * One session approval: `tool_id` may run in this session at holds up to `level` — for the
 * caller it was given to (`principal`, `<kind>:<id>`) and no other: a session id is whatever a
 * caller sends, so another agent naming the same session must not ride on it.
 */
export interface SessionApproval {
  tool_id: string;
  level: Level;
  /** The caller it covers, `<kind>:<id>`. An approval without one (kept by an older version) covers nobody. */
  principal?: string;
  by: string;
  at: number;
}

/** How a principal is named in a session approval. */
export function principalKey(p: { kind: string; id: string }): string {
  return `${p.kind}:${p.id}`;
}

/** The key of an approval in a session's map: one per (caller, tool). */
function approvalKey(principal: string | undefined, tool_id: string): string {
  return `${principal ?? ''}\n${tool_id}`;
}

interface SessionEntry {
  approvals: Map<string, SessionApproval>;
  abort: AbortPhase | null;
}

/** One session's state as plain JSON: what a shared store (Redis) keeps and sends. */
export interface SessionSnapshot {
  approvals: SessionApproval[];
  abort: AbortPhase | null;
}

/** Session approvals and abort phases of the gate. */
export class SessionState {
  private readonly sessions = new Map<string, SessionEntry>();
  /**
   * Storage seam of distributed mode: called after every local change (approve, abort, reset)
   * so the daemon can persist and broadcast the session's {@link snapshot}; remote changes come
   * back through {@link restore}, which does not call it.
   */
  onChange: ((session_id: string) => void) | undefined;
  /**
   * Storage seam of distributed mode: throws (E_STORE_UNAVAILABLE) while a change could not be
   * shared with the cluster. The gate asks it before recording a session approval ("always"), so
   * no daemon says "approved for the rest of this session" when the others would not know it.
   */
  assertShareable: (() => void) | undefined;

  constructor(private readonly max: number) {}

  /** The session's state as JSON, or undefined when nothing is kept for it. */
  snapshot(session_id: string): SessionSnapshot | undefined {
    const s = this.sessions.get(session_id);
    return s ? { approvals: [...s.approvals.values()].map((a) => ({ ...a })), abort: s.abort } : undefined;
  }

  /** Replaces the session's state by a snapshot from a shared store (undefined: forget it). */
  restore(session_id: string, snap: SessionSnapshot | undefined): void {
    if (snap === undefined) {
      this.sessions.delete(session_id);
      return;
    }
    const s = this.touch(session_id);
    s.approvals = new Map(snap.approvals.map((a) => [approvalKey(a.principal, a.tool_id), { ...a }]));
    s.abort = snap.abort;
  }

  /**
   * The session approval covering a hold of `tool_id` at `level` in `session_id` for caller
   * `principal` ({@link principalKey}): one given to that caller at the same or a stricter level
   * (an approval at CONFIRM does not cover an APPROVE hold).
   */
  approvalFor(session_id: string, tool_id: string, level: Level, principal: string): SessionApproval | undefined {
    const a = this.sessions.get(session_id)?.approvals.get(approvalKey(principal, tool_id));
    if (!a || a.principal !== principal) return undefined;
    return LEVEL_ORDER.indexOf(a.level) >= LEVEL_ORDER.indexOf(level) ? a : undefined;
  }

  /** Records `always` for (session, caller, tool); keeps the stricter level when one exists. */
  approve(session_id: string, approval: SessionApproval): void {
    const s = this.touch(session_id);
    const key = approvalKey(approval.principal, approval.tool_id);
    const prev = s.approvals.get(key);
    if (prev && LEVEL_ORDER.indexOf(prev.level) > LEVEL_ORDER.indexOf(approval.level)) return;
    s.approvals.set(key, approval);
    this.onChange?.(session_id);
  }

  /** The session's approvals (for tests and `GET /v1/approvals?session_id`). */
  approvals(session_id: string): SessionApproval[] {
    return [...(this.sessions.get(session_id)?.approvals.values() ?? [])];
  }

  /** The abort phase, or null when no abort was asked. */
  abortPhase(session_id: string): AbortPhase | null {
    return this.sessions.get(session_id)?.abort ?? null;
  }

  /** Advances the abort: none → stopping → stopped (stays stopped). Returns the new phase. */
  abort(session_id: string): AbortPhase {
    const s = this.touch(session_id);
    s.abort = s.abort === null ? 'stopping' : 'stopped';
    // An aborted session keeps no "always": after a reset it asks again.
    s.approvals.clear();
    this.onChange?.(session_id);
    return s.abort;
  }

  /** Forgets everything about the session (abort phase and session approvals). */
  reset(session_id: string): void {
    this.sessions.delete(session_id);
    this.onChange?.(session_id);
  }

  /** Number of sessions tracked. */
  get size(): number {
    return this.sessions.size;
  }

  private touch(session_id: string): SessionEntry {
    let s = this.sessions.get(session_id);
    if (s) this.sessions.delete(session_id);
    else {
      s = { approvals: new Map(), abort: null };
      // Full: forget the oldest sessions without an abort first, aborted ones only if needed.
      for (const pass of ['plain', 'any'] as const) {
        for (const [key, entry] of this.sessions) {
          if (this.sessions.size < this.max) break;
          if (pass === 'plain' && entry.abort !== null) continue;
          this.sessions.delete(key);
        }
      }
    }
    this.sessions.set(session_id, s);
    return s;
  }
}

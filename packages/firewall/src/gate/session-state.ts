// Per-session state of the HumanGate: the two-phase abort. Bounded: at most `max` sessions; the
// least recently touched is forgotten first (aborted sessions last). What `always` leaves behind
// is a standing approval (standing-approvals.ts), kept apart from this.

import type { AbortPhase } from './gate-types.js';

/** How a principal is named in a standing approval: `<kind>:<id>`. */
export function principalKey(p: { kind: string; id: string }): string {
  return `${p.kind}:${p.id}`;
}

interface SessionEntry {
  abort: AbortPhase | null;
}

/** One session's state as plain JSON: what a shared store (Redis) keeps and sends. */
export interface SessionSnapshot {
  abort: AbortPhase | null;
}

/** Abort phases of the gate, per session. */
export class SessionState {
  private readonly sessions = new Map<string, SessionEntry>();
  /**
   * Storage seam of distributed mode: called after every local change (abort, reset) so the
   * daemon can persist and broadcast the session's {@link snapshot}; remote changes come back
   * through {@link restore}, which does not call it.
   */
  onChange: ((session_id: string) => void) | undefined;

  constructor(private readonly max: number) {}

  /** The session's state as JSON, or undefined when nothing is kept for it. */
  snapshot(session_id: string): SessionSnapshot | undefined {
    const s = this.sessions.get(session_id);
    return s ? { abort: s.abort } : undefined;
  }

  /** Replaces the session's state by a snapshot from a shared store (undefined: forget it). */
  restore(session_id: string, snap: SessionSnapshot | undefined): void {
    if (snap === undefined) {
      this.sessions.delete(session_id);
      return;
    }
    this.touch(session_id).abort = snap.abort ?? null;
  }

  /** The abort phase, or null when no abort was asked. */
  abortPhase(session_id: string): AbortPhase | null {
    return this.sessions.get(session_id)?.abort ?? null;
  }

  /** Advances the abort: none → stopping → stopped (stays stopped). Returns the new phase. */
  abort(session_id: string): AbortPhase {
    const s = this.touch(session_id);
    s.abort = s.abort === null ? 'stopping' : 'stopped';
    this.onChange?.(session_id);
    return s.abort;
  }

  /** Forgets everything about the session. */
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
      s = { abort: null };
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

/** One remembered turn of an agent in a session. */
export interface TurnRecord {
  /** The input text, cut to 200 characters. */
  input: string;
  /** What the agent decided, e.g. `dispatch_module echo`. */
  decision: string;
  /** `ok`, or the error code / `ask_human` it ended in. */
  outcome: string;
}

/** Bounds of a {@link SessionMemory}. */
export interface SessionMemoryOptions {
  /** Sessions kept (least recently used dropped first). Default 256. */
  max_sessions?: number;
  /** Turns kept per session (oldest dropped first). Default 8. */
  max_turns?: number;
}

const INPUT_MAX = 200;

/**
 * A small bounded in-memory record of an agent's recent turns per session: the session summary
 * and the routing feedback a prompt shows. Nothing here is persisted or trusted for security.
 */
export class SessionMemory {
  readonly #sessions = new Map<string, TurnRecord[]>();
  readonly #maxSessions: number;
  readonly #maxTurns: number;

  constructor(options: SessionMemoryOptions = {}) {
    this.#maxSessions = Math.max(1, options.max_sessions ?? 256);
    this.#maxTurns = Math.max(1, options.max_turns ?? 8);
  }

  /** Records a turn of `session` (the empty session id is one shared session). */
  record(session: string, turn: TurnRecord): void {
    let turns = this.#sessions.get(session);
    if (turns === undefined) {
      if (this.#sessions.size >= this.#maxSessions) {
        const oldest = this.#sessions.keys().next().value;
        if (oldest !== undefined) this.#sessions.delete(oldest);
      }
      turns = [];
    } else {
      this.#sessions.delete(session); // re-insert: most recently used last
    }
    this.#sessions.set(session, turns);
    const input = turn.input.length > INPUT_MAX ? `${turn.input.slice(0, INPUT_MAX - 1)}…` : turn.input;
    turns.push({ ...turn, input });
    if (turns.length > this.#maxTurns) turns.splice(0, turns.length - this.#maxTurns);
  }

  /** The turns of `session`, oldest first (a copy). */
  turns(session: string): TurnRecord[] {
    return [...(this.#sessions.get(session) ?? [])];
  }

  /** One line per turn: `"<input>" → <decision> (<outcome>)`; empty when there is none. */
  summary(session: string): string {
    return this.turns(session)
      .map((t) => `${JSON.stringify(t.input)} → ${t.decision} (${t.outcome})`)
      .join('\n');
  }
}

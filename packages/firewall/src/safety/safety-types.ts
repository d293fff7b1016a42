// Shared shapes of the SafetyMonitor (§3.8): thresholds, lockouts, per-agent breaker state and
// the changes a SafetyStateStore broadcasts. All plain JSON so a Redis store can hold them.

/** Thresholds of the breakers and budgets: config `safety` (packages/daemon/src/config.ts). */
export interface SafetyConfig {
  /** Token budget per agent and per task (and the default of a nested budget). */
  max_token_usage: number;
  /** Step budget per task: at the cap one last summarising step, then PAUSED. */
  max_steps: number;
  /** Time budget per task (ms since its first recorded step). */
  max_task_ms: number;
  /** Same fingerprint failing this many times in a row → SYSTEM ALERT; once more → E_LOOP_DETECTED. */
  repeat_failure_threshold: number;
  /** Error cascade: ≥ error_threshold errors in the last error_window operations → ERROR_PAUSED. */
  error_window: number;
  error_threshold: number;
  /** Denial breaker: denial_consecutive in a row, or denial_threshold of the last denial_window. */
  denial_consecutive: number;
  denial_window: number;
  denial_threshold: number;
  /** How long the first halt lets in-flight calls finish before they are killed. */
  halt_grace_ms: number;
}

/** Defaults, equal to the daemon config's defaults. */
export const SAFETY_DEFAULTS: Readonly<SafetyConfig> = Object.freeze({
  max_token_usage: 100_000,
  max_steps: 50,
  max_task_ms: 3_600_000,
  repeat_failure_threshold: 3,
  error_window: 10,
  error_threshold: 8,
  denial_consecutive: 3,
  denial_window: 50,
  denial_threshold: 10,
  halt_grace_ms: 1500,
});

/** Why a lockout was set: the kill switch, a breaker, or an admin by hand. */
export type LockoutCause = 'halt' | 'breaker' | 'manual';

/**
 * A SAFETY_LOCKOUT: system-wide (`agent_id` absent) or of one agent. While set, new work is
 * refused with E_SAFETY_LOCKOUT (E_HALTED while a halt is still in progress).
 */
export interface LockoutRecord {
  /** Absent: the whole system. */
  agent_id?: string;
  cause: LockoutCause;
  /** The breaker that tripped (cause `breaker`). */
  breaker?: BreakerName;
  /** Human-readable reason (the denial summary for the denial breaker). */
  reason: string;
  /** Who locked: `<kind>:<id>` of the principal, or `system`. */
  by: string;
  /** RFC 3339 UTC. */
  at: string;
  details?: Record<string, unknown>;
}

/** Names of the breakers, as in BREAKER_TRIPPED events and `breaker.tripped` audit entries. */
export type BreakerName =
  'token_budget' | 'step_budget' | 'time_budget' | 'repeated_failure' | 'error_cascade' | 'denial';

/** Repeated-failure breaker: the last failing fingerprint and how many times in a row. */
export interface RepeatState {
  fingerprint: string | null;
  count: number;
}

/** Sliding window of outcomes (true = error / denial), newest last, at most `window` long. */
export interface WindowState {
  recent: boolean[];
  /** Consecutive trues at the end of `recent` (the denial breaker's "in a row"). */
  streak: number;
}

/** One denial kept for the summary handed to a person (newest last, bounded). */
export interface DenialNote {
  tool: string;
  code: string;
  at: string;
}

/** Status of an agent as the breakers see it. */
export type AgentSafetyStatus = 'ok' | 'error_paused' | 'stopped';

/** Everything the breakers keep per agent (persisted through the store). */
export interface AgentBreakers {
  status: AgentSafetyStatus;
  repeat: RepeatState;
  cascade: WindowState;
  denial: WindowState;
  denials: DenialNote[];
}

/** A fresh agent: nothing recorded. */
export function emptyAgentBreakers(): AgentBreakers {
  return {
    status: 'ok',
    repeat: { fingerprint: null, count: 0 },
    cascade: { recent: [], streak: 0 },
    denial: { recent: [], streak: 0 },
    denials: [],
  };
}

/**
 * A change a store broadcasts to every subscriber (in this process and, for a shared store,
 * in every daemon), including the process that made it.
 */
export type SafetyChange =
  | { type: 'lockout_set'; lockout: LockoutRecord }
  | { type: 'lockout_cleared'; agent_id?: string; by: string }
  /**
   * An agent's breaker state was written. `remote`: by another daemon of a shared store — a
   * monitor then drops its cached copy and reads the store's on the agent's next call, so the
   * breakers count the agent's calls on every daemon (and an unlock made elsewhere starts them over).
   */
  | { type: 'breakers'; agent_id: string; remote?: true };

/** Who acts on the monitor (from the token, never from a payload). */
export interface SafetyActor {
  kind: string;
  id: string;
  roles?: readonly string[];
}

/** Correlation fields to put on events and audit entries. */
export interface SafetyCorrelation {
  request_id?: string;
  correlation_id?: string;
  session_id?: string;
  workflow_id?: string;
}

/** What `state()` reports (GET /v1/health, `myfinger daemon status`). */
export interface SafetyState {
  /** `open`, `halting`, `halting_immediate` or `locked` (system lockout). */
  system: 'open' | 'halting' | 'halting_immediate' | 'locked';
  lockout?: LockoutRecord;
  agents_locked: LockoutRecord[];
  breakers: Record<string, { status: AgentBreakers['status']; repeat: number; errors: number; denials: number }>;
  config: SafetyConfig;
  /** Set while the (shared) store cannot be read: the state is this daemon's own view. */
  store_error?: string;
}

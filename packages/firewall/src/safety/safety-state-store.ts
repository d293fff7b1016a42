import type { AgentBreakers, LockoutRecord, SafetyChange } from './safety-types.js';

/**
 * Where the SafetyMonitor keeps its state. Async so that a distributed store (Redis) can
 * implement it; every daemon of a cluster sharing one store shares budgets, lockouts and halts.
 *
 * Implementations: {@link MemorySafetyStore} (tests), {@link FileSafetyStore}
 * (`FINGER_HOME/state/safety.json`, lockouts survive a restart). A Redis store must give the
 * same guarantees: `incrBy` atomic across processes, lockouts durable, changes broadcast.
 */
export interface SafetyStateStore {
  /**
   * Adds `delta` (may be 0) to counter `key` atomically and returns the new total. A missing
   * counter starts at 0. Keys come from {@link counterKey}.
   */
  incrBy(key: string, delta: number): Promise<number>;
  /** Current value of counter `key`; 0 when missing. */
  getCounter(key: string): Promise<number>;
  /** Deletes counter `key` (a finished task's budget). */
  deleteCounter(key: string): Promise<void>;

  /** The system lockout (`agent_id` undefined) or the lockout of one agent, if set. */
  getLockout(agent_id?: string): Promise<LockoutRecord | undefined>;
  /** Every lockout, system first. */
  listLockouts(): Promise<LockoutRecord[]>;
  /**
   * Sets (or replaces) a lockout, durably before resolving, then broadcasts `lockout_set`.
   * The record's `agent_id` chooses system or agent scope.
   */
  setLockout(lockout: LockoutRecord): Promise<void>;
  /**
   * Clears the system lockout (`agent_id` undefined) or one agent's; resolves with the cleared
   * record (undefined when none) and broadcasts `lockout_cleared` naming `by`.
   */
  clearLockout(agent_id: string | undefined, by: string): Promise<LockoutRecord | undefined>;

  /** Breaker state of one agent; undefined when nothing was recorded. */
  getBreakers(agent_id: string): Promise<AgentBreakers | undefined>;
  /** Replaces the breaker state of one agent and broadcasts `breakers`. */
  setBreakers(agent_id: string, state: AgentBreakers): Promise<void>;
  /** Forgets the breaker state of one agent (its task ended for good) and broadcasts `breakers`. */
  deleteBreakers(agent_id: string): Promise<void>;
  /** Breaker state of every agent known to the store (for health). */
  listBreakers(): Promise<Record<string, AgentBreakers>>;

  /**
   * Calls `listener` for every change, made here or (shared store) by another daemon. Returns
   * the unsubscribe function. Listeners must be cheap and must not throw.
   */
  subscribe(listener: (change: SafetyChange) => void): () => void;
  /** Flushes and releases the store; later calls reject with E_STORE_UNAVAILABLE. */
  close(): Promise<void>;
}

/** Kind of budget counter. */
export type CounterKind = 'agent_tokens' | 'task_tokens' | 'task_steps';

/** The key of a budget counter: `<kind>:<id>` (ids are opaque; `:` inside them is fine). */
export function counterKey(kind: CounterKind, id: string): string {
  return `${kind}:${id}`;
}

// The breakers as pure state machines: `transition(state, event, config)` → next state and the
// effect to apply. No I/O, no clock: the SafetyMonitor feeds them and acts on the effects.

import type { DenialNote, RepeatState, SafetyConfig, WindowState } from './safety-types.js';

/** Repeated-failure breaker event: one tool outcome with its fingerprint (tool + canonical args). */
export interface RepeatEvent {
  fingerprint: string;
  ok: boolean;
}

/** `alert` at exactly `repeat_failure_threshold` failures in a row, `terminate` at one more. */
export type RepeatEffect = 'none' | 'alert' | 'terminate';

/**
 * Repeated failure: the same fingerprint failing N times in a row (N = repeat_failure_threshold)
 * → `alert`; the next identical failure → `terminate`. A success or a different fingerprint
 * starts over.
 */
export function repeatTransition(
  state: RepeatState,
  event: RepeatEvent,
  config: Pick<SafetyConfig, 'repeat_failure_threshold'>,
): { state: RepeatState; effect: RepeatEffect } {
  if (event.ok) return { state: { fingerprint: null, count: 0 }, effect: 'none' };
  const count = state.fingerprint === event.fingerprint ? state.count + 1 : 1;
  const n = config.repeat_failure_threshold;
  const effect: RepeatEffect = count > n ? 'terminate' : count === n ? 'alert' : 'none';
  return { state: { fingerprint: event.fingerprint, count }, effect };
}

/** Pushes one outcome into a sliding window of at most `window` entries. */
export function pushWindow(state: WindowState, hit: boolean, window: number): WindowState {
  const recent =
    state.recent.length >= window ? state.recent.slice(state.recent.length - window + 1) : [...state.recent];
  recent.push(hit);
  return { recent, streak: hit ? state.streak + 1 : 0 };
}

function hits(state: WindowState): number {
  let n = 0;
  for (const h of state.recent) if (h) n++;
  return n;
}

/**
 * Error cascade: each operation's outcome (`error: true` for a failure) enters a window of the
 * last `error_window` operations; `tripped` when it holds ≥ `error_threshold` errors.
 */
export function cascadeTransition(
  state: WindowState,
  event: { error: boolean },
  config: Pick<SafetyConfig, 'error_window' | 'error_threshold'>,
): { state: WindowState; tripped: boolean } {
  const next = pushWindow(state, event.error, config.error_window);
  return { state: next, tripped: event.error && hits(next) >= config.error_threshold };
}

/**
 * Denial breaker: every firewall or human decision on an agent's call enters a window of the
 * last `denial_window` decisions (`denied: true` for a denial); `tripped` at
 * `denial_consecutive` denials in a row or `denial_threshold` denials in the window.
 */
export function denialTransition(
  state: WindowState,
  event: { denied: boolean },
  config: Pick<SafetyConfig, 'denial_window' | 'denial_threshold' | 'denial_consecutive'>,
): { state: WindowState; tripped: boolean; why?: 'consecutive' | 'window' } {
  const next = pushWindow(state, event.denied, config.denial_window);
  if (!event.denied) return { state: next, tripped: false };
  if (next.streak >= config.denial_consecutive) return { state: next, tripped: true, why: 'consecutive' };
  if (hits(next) >= config.denial_threshold) return { state: next, tripped: true, why: 'window' };
  return { state: next, tripped: false };
}

/** At most this many denials are kept for the summary handed to a person. */
export const MAX_DENIAL_NOTES = 20;

/** Appends a denial note, keeping the newest {@link MAX_DENIAL_NOTES}. */
export function noteDenial(notes: readonly DenialNote[], note: DenialNote): DenialNote[] {
  const out = notes.length >= MAX_DENIAL_NOTES ? notes.slice(notes.length - MAX_DENIAL_NOTES + 1) : [...notes];
  out.push(note);
  return out;
}

/** "3 denials: fs.write (E_DENIED_BY_POLICY) ×2, shell.exec (E_REJECTED_BY_HUMAN)". */
export function denialSummary(notes: readonly DenialNote[]): string {
  const counts = new Map<string, number>();
  for (const n of notes) {
    const k = `${n.tool} (${n.code})`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const parts = [...counts].map(([k, c]) => (c > 1 ? `${k} ×${c}` : k));
  return `${notes.length} denial${notes.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/**
 * Token budget: a request of `estimate` tokens fits when `used + estimate ≤ limit` (spending
 * exactly the whole budget is allowed; one token more is not).
 */
export function budgetTransition(
  used: number,
  event: { estimate: number },
  limit: number,
): { allowed: boolean; remaining: number } {
  const remaining = Math.max(0, limit - used);
  return { allowed: used + Math.max(0, event.estimate) <= limit, remaining };
}

/** Step budget effect for the step about to start. */
export type StepEffect = 'continue' | 'final' | 'pause';

/**
 * Step budget: steps 1 … max_steps-1 `continue`, step max_steps is the `final` one (the agent
 * must summarise), any step after it → `pause` (the task goes PAUSED with a checkpoint).
 */
export function stepTransition(step: number, config: Pick<SafetyConfig, 'max_steps'>): StepEffect {
  if (step < config.max_steps) return 'continue';
  return step === config.max_steps ? 'final' : 'pause';
}

/** Time budget: spent when more than `max_task_ms` passed since the task started. */
export function timeTransition(startedAt: number, now: number, config: Pick<SafetyConfig, 'max_task_ms'>): boolean {
  return now - startedAt > config.max_task_ms;
}

/** System lockout state machine (kill switch). */
export type SystemSafetyState = 'open' | 'halting' | 'halting_immediate' | 'locked';

/** Events of the system lockout machine. */
export type SystemSafetyEvent = 'halt' | 'halt_done' | 'lock' | 'unlock';

/** What the monitor must do on a transition. */
export type SystemSafetyEffect = 'none' | 'graceful_halt' | 'immediate_halt' | 'renew_signal';

/**
 * Kill switch + system lockout: `open` --halt--> `halting` (graceful, bounded) --halt-->
 * `halting_immediate` (kill now); `halt_done` → `locked`; `lock` (a breaker or a restart with a
 * persisted lockout) → `locked`; only `unlock` leaves `locked` (and renews the halt signal).
 * A halt while `locked` is a no-op (nothing is running); unlock while halting waits for the halt.
 */
export function systemTransition(
  state: SystemSafetyState,
  event: SystemSafetyEvent,
): { state: SystemSafetyState; effect: SystemSafetyEffect } {
  switch (event) {
    case 'halt':
      if (state === 'open') return { state: 'halting', effect: 'graceful_halt' };
      if (state === 'halting') return { state: 'halting_immediate', effect: 'immediate_halt' };
      return { state, effect: 'none' };
    case 'halt_done':
      return state === 'halting' || state === 'halting_immediate'
        ? { state: 'locked', effect: 'none' }
        : { state, effect: 'none' };
    case 'lock':
      return state === 'open' ? { state: 'locked', effect: 'none' } : { state, effect: 'none' };
    case 'unlock':
      return state === 'locked' ? { state: 'open', effect: 'renew_signal' } : { state, effect: 'none' };
  }
}

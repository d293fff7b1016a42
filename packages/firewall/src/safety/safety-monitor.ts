import { FingerError, rfc3339 } from '@finger/protocol';

import type { AuditRecord } from '../audit/audit-entry.js';
import { callFingerprint } from '../engine/behaviour-monitor.js';
import type { VerdictEvents } from '../grants/grant-interceptor.js';
import { AgentBreakerCache } from './agent-breaker-cache.js';
import {
  cascadeTransition,
  denialSummary,
  denialTransition,
  noteDenial,
  repeatTransition,
  type SystemSafetyState,
  systemTransition,
} from './breakers.js';
import { type BudgetCheck, BudgetTracker, type StepRecord, type TaskBudget } from './budget-tracker.js';
import { counterKey, type SafetyStateStore } from './safety-state-store.js';
import {
  type AgentBreakers,
  type BreakerName,
  emptyAgentBreakers,
  type LockoutRecord,
  SAFETY_DEFAULTS,
  type SafetyActor,
  type SafetyChange,
  type SafetyConfig,
  type SafetyCorrelation,
  type SafetyState,
} from './safety-types.js';

/** The text injected into an agent's context when it repeats a failing action. */
export const SYSTEM_ALERT_REPEAT = 'SYSTEM ALERT: you are repeating a failed action. Stop and analyse why.';

/** How the monitor cancels running work on a halt: the daemon wires the hub's `abortAll` here. */
export type HaltHandler = (mode: 'graceful' | 'immediate', error: FingerError, grace_ms: number) => Promise<void>;

/** Options of {@link SafetyMonitor.open}. */
export interface SafetyMonitorOptions {
  store: SafetyStateStore;
  config?: Partial<SafetyConfig>;
  clock?: { now(): number };
  /** BREAKER_TRIPPED, HALTED, UNLOCKED go here (the hub's EventBus). */
  events?: VerdictEvents;
  /** `breaker.tripped`, `halt`, `unlock` entries go here (the AuditLog). */
  audit?: { append(record: AuditRecord): Promise<unknown> };
  logger?: { warn(obj: object, msg: string): void };
  onHalt?: HaltHandler;
  /** Most tasks with a registered budget at a time (oldest dropped). Default 10,000. */
  max_tasks?: number;
}

export type { TaskBudget } from './budget-tracker.js';
export type { SafetyActor, SafetyCorrelation, SafetyState } from './safety-types.js';

const SYSTEM = '';

/**
 * The SafetyMonitor (§3.8): budgets, repeated-failure, error-cascade and denial breakers, the
 * kill switch and SAFETY_LOCKOUT, over a {@link SafetyStateStore}. Every trip emits
 * BREAKER_TRIPPED and appends a `breaker.tripped` audit entry. Use {@link SafetyMonitor.open}.
 *
 * For agents (the executor loop): `assertOpen` before each step, `checkBudget` before each
 * model call (pass `haltSignal` to the model request), `recordUsage` after it, `recordStep` per
 * step, `recordToolOutcome` / `recordDenial` per tool call (the safety interceptor does the
 * latter two for hub calls of agent principals).
 */
export class SafetyMonitor {
  readonly config: SafetyConfig;
  private readonly store: SafetyStateStore;
  private readonly clock: { now(): number };
  private readonly lockouts = new Map<string, LockoutRecord>();
  private readonly budgets: BudgetTracker;
  private readonly breakers: AgentBreakerCache;
  private sys: SystemSafetyState = 'open';
  private ctrl = new AbortController();
  private halting: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  private constructor(private readonly o: SafetyMonitorOptions) {
    this.config = { ...SAFETY_DEFAULTS, ...o.config };
    this.store = o.store;
    this.clock = o.clock ?? { now: () => Date.now() };
    this.budgets = new BudgetTracker({
      store: this.store,
      config: this.config,
      clock: this.clock,
      trip: (breaker, agent_id, details, correlation, lock) => this.trip(breaker, agent_id, details, correlation, lock),
      ...(o.max_tasks !== undefined ? { max_tasks: o.max_tasks } : {}),
    });
    this.breakers = new AgentBreakerCache(this.store, (e) =>
      this.o.logger?.warn({ err: e }, 'safety store: breaker state not written'),
    );
  }

  /** Loads the lockouts from the store (a persisted system lockout locks at once) and subscribes. */
  static async open(options: SafetyMonitorOptions): Promise<SafetyMonitor> {
    const m = new SafetyMonitor(options);
    for (const l of await m.store.listLockouts()) m.lockouts.set(l.agent_id ?? SYSTEM, l);
    if (m.lockouts.has(SYSTEM)) {
      m.sys = systemTransition(m.sys, 'lock').state;
      m.ctrl.abort(m.lockedError(m.lockouts.get(SYSTEM)!));
    }
    m.unsubscribe = m.store.subscribe((c) => m.onChange(c));
    return m;
  }

  /** Aborted by a halt (pending model requests listen to it); a new one after an unlock. */
  get haltSignal(): AbortSignal {
    return this.ctrl.signal;
  }

  /**
   * Throws when work may not start: E_HALTED while a halt is running, E_SAFETY_LOCKOUT while the
   * system (or `agent_id`) is locked. Synchronous: reads the cached lockouts.
   */
  assertOpen(agent_id?: string): void {
    if (this.sys === 'halting' || this.sys === 'halting_immediate')
      throw new FingerError('E_HALTED', 'the kill switch is stopping everything');
    const sys = this.lockouts.get(SYSTEM);
    if (this.sys === 'locked' || sys) throw this.lockedError(sys);
    if (agent_id !== undefined) {
      const l = this.lockouts.get(agent_id);
      if (l) throw this.lockedError(l);
    }
  }

  /** True when `assertOpen(agent_id)` would throw. */
  /** The lockout of the system (`agent_id` undefined) or of one agent as this daemon knows it, if any. */
  lockoutOf(agent_id?: string): LockoutRecord | undefined {
    const l = this.lockouts.get(agent_id ?? SYSTEM);
    return l === undefined ? undefined : { ...l };
  }

  isLocked(agent_id?: string): boolean {
    return this.sys !== 'open' || this.lockouts.has(SYSTEM) || (agent_id !== undefined && this.lockouts.has(agent_id));
  }

  /** Registers a task's budget (its clock starts now). Nested: name `parent_task_id`. */
  beginTask(task: TaskBudget): void {
    this.budgets.beginTask(task);
  }

  /** Forgets a finished task and deletes its counters. */
  endTask(task_id: string): Promise<void> {
    return this.budgets.endTask(task_id);
  }

  /**
   * Forgets an agent that will not run again — a task's executor once the task is COMPLETED,
   * STOPPED or FAILED: its token counter and breaker state leave the store (which would otherwise
   * keep one of each per task for ever). A lockout of the agent stays until an admin unlocks it.
   */
  async retireAgent(agent_id: string): Promise<void> {
    this.breakers.forget(agent_id);
    await Promise.all([this.budgets.retireAgent(agent_id), this.store.deleteBreakers(agent_id)]);
  }

  /**
   * Before a model call: rejects with E_BUDGET_EXHAUSTED (details `{breaker, scope, id, used,
   * limit, estimate, state}`) when `estimate_tokens` would take the agent, the task or any
   * enclosing task past its token budget, or the task past its time budget — the call must then
   * not be sent. Also E_HALTED / E_SAFETY_LOCKOUT (see {@link assertOpen}). An unknown `task_id`
   * is registered on the spot, under `parent` when given.
   */
  async checkBudget(p: BudgetCheck): Promise<void> {
    this.assertOpen(p.agent_id);
    await this.budgets.check(p);
  }

  /** After a model call: adds the reported tokens to the agent, the task and every enclosing task. */
  recordUsage(p: { agent_id: string; task_id?: string; parent?: string; tokens: number }): Promise<{
    agent_total: number;
  }> {
    return this.budgets.recordUsage(p);
  }

  /**
   * Before a step of a task: returns `{step, final}` — `final` on step `max_steps`, the one the
   * agent must use to summarise. A step after it rejects with E_BUDGET_EXHAUSTED (`breaker:
   * 'step_budget', state: 'PAUSED'`): checkpoint and pause the task. Also checks the time budget.
   */
  async recordStep(p: StepRecord): Promise<{ step: number; final: boolean }> {
    this.assertOpen(p.agent_id);
    return this.budgets.recordStep(p);
  }

  /**
   * After a tool call of an agent: feeds the repeated-failure and error-cascade breakers, and
   * counts an allowed decision for the denial breaker. Returns `{alert}` (the SYSTEM ALERT to
   * inject into the agent's context) at exactly `repeat_failure_threshold` identical failures in
   * a row; throws E_LOOP_DETECTED on the next one (the agent is stopped and locked). An error
   * cascade locks the agent (ERROR_PAUSED) and returns `{tripped: 'error_cascade'}`.
   */
  recordToolOutcome(p: {
    agent_id: string;
    tool: string;
    args: unknown;
    ok: boolean;
    code?: string;
    correlation?: SafetyCorrelation;
  }): Promise<{ alert?: string; tripped?: BreakerName }> {
    if (p.ok) {
      const r = this.recordSuccess(p.agent_id);
      return r === undefined ? Promise.resolve({}) : r.then(() => ({}));
    }
    const b = this.breakers.peek(p.agent_id);
    if (b === undefined) return this.breakers.load(p.agent_id).then(() => this.recordToolOutcome(p));
    const fingerprint = callFingerprint(p.tool, p.args);
    const r = repeatTransition(b.repeat, { fingerprint, ok: false }, this.config);
    const c = cascadeTransition(b.cascade, { error: true }, this.config);
    const d = denialTransition(b.denial, { denied: false }, this.config);
    const next: AgentBreakers = { ...b, repeat: r.state, cascade: c.state, denial: d.state };
    if (r.effect === 'terminate') next.status = 'stopped';
    else if (c.tripped) next.status = 'error_paused';
    this.breakers.save(p.agent_id, next);
    return this.afterFailure(p, r.effect, r.state.count, c.tripped ? c.state : undefined);
  }

  /**
   * A success of an agent's tool call: resets its repeated-failure count and counts an allowed
   * operation and decision. Synchronous (returns undefined) once the agent's state is loaded —
   * the hot path of every agent call.
   */
  recordSuccess(agent_id: string): Promise<void> | undefined {
    if (this.breakers.isClean(agent_id)) return undefined;
    const b = this.breakers.peek(agent_id);
    if (b === undefined) return this.breakers.load(agent_id).then(() => this.recordSuccess(agent_id));
    this.breakers.save(agent_id, {
      ...b,
      repeat: repeatTransition(b.repeat, { fingerprint: '', ok: true }, this.config).state,
      cascade: cascadeTransition(b.cascade, { error: false }, this.config).state,
      denial: denialTransition(b.denial, { denied: false }, this.config).state,
    });
    return undefined;
  }

  private async afterFailure(
    p: { agent_id: string; tool: string; code?: string; correlation?: SafetyCorrelation },
    repeat: 'none' | 'alert' | 'terminate',
    failures: number,
    cascade: AgentBreakers['cascade'] | undefined,
  ): Promise<{ alert?: string; tripped?: BreakerName }> {
    const base = { tool: p.tool, ...(p.code ? { code: p.code } : {}) };
    if (repeat === 'terminate') {
      const details = { ...base, stage: 'terminate', failures, state: 'STOPPED' };
      await this.trip('repeated_failure', p.agent_id, details, p.correlation, true);
      throw new FingerError(
        'E_LOOP_DETECTED',
        `agent ${p.agent_id} repeated a failing ${p.tool} call ${failures} times`,
        {
          breaker: 'repeated_failure',
          agent_id: p.agent_id,
          tool: p.tool,
          failures,
        },
      );
    }
    const out: { alert?: string; tripped?: BreakerName } = {};
    if (repeat === 'alert') {
      await this.trip('repeated_failure', p.agent_id, { ...base, stage: 'alert', failures }, p.correlation);
      out.alert = SYSTEM_ALERT_REPEAT;
    }
    if (cascade) {
      const errors = cascade.recent.filter(Boolean).length;
      const details = { ...base, errors, window: cascade.recent.length, state: 'ERROR_PAUSED' };
      await this.trip('error_cascade', p.agent_id, details, p.correlation, true);
      out.tripped = 'error_cascade';
    }
    return out;
  }

  /**
   * A firewall or human denial of an agent's call (E_DENIED_BY_POLICY, E_REJECTED_BY_HUMAN,
   * E_APPROVAL_TIMEOUT, E_FORBIDDEN). At `denial_consecutive` in a row or `denial_threshold` in
   * the last `denial_window` decisions the agent is stopped and locked, and `summary` tells a
   * person what was denied.
   */
  async recordDenial(p: {
    agent_id: string;
    tool: string;
    code: string;
    correlation?: SafetyCorrelation;
  }): Promise<{ tripped: boolean; summary?: string }> {
    let b = this.breakers.peek(p.agent_id);
    if (b === undefined) {
      await this.breakers.load(p.agent_id);
      b = this.breakers.peek(p.agent_id) ?? emptyAgentBreakers();
    }
    const d = denialTransition(b.denial, { denied: true }, this.config);
    const denials = noteDenial(b.denials, { tool: p.tool, code: p.code, at: rfc3339(this.clock.now()) });
    const next: AgentBreakers = { ...b, denial: d.state, denials };
    if (d.tripped) next.status = 'stopped';
    this.breakers.save(p.agent_id, next);
    if (!d.tripped) return { tripped: false };
    const summary = denialSummary(denials);
    const details = { tool: p.tool, code: p.code, why: d.why, summary, denials, state: 'STOPPED' };
    await this.trip('denial', p.agent_id, details, p.correlation, true, summary);
    return { tripped: true, summary };
  }

  /**
   * The kill switch (priority 0). The first halt refuses new work at once (E_HALTED), aborts
   * `haltSignal`, persists the system SAFETY_LOCKOUT, emits HALTED, audits `halt`, and lets
   * in-flight calls end within `halt_grace_ms` before they are killed; a second halt during it
   * kills at once. Resolves when the halt is done. A halt while already locked changes nothing.
   */
  async halt(p: { actor: SafetyActor; reason?: string }): Promise<{ phase: 'graceful' | 'immediate' | 'locked' }> {
    const t = systemTransition(this.sys, 'halt');
    if (t.effect === 'none') {
      await this.halting;
      return { phase: 'locked' };
    }
    this.sys = t.state;
    const by = `${p.actor.kind}:${p.actor.id}`;
    const reason = p.reason ?? 'halt';
    const err = new FingerError('E_HALTED', `halted by ${by}`, { by });
    if (t.effect === 'graceful_halt') {
      this.ctrl.abort(err);
      const lockout: LockoutRecord = { cause: 'halt', reason, by, at: rfc3339(this.clock.now()) };
      this.lockouts.set(SYSTEM, lockout);
      this.halting = this.runHalt('graceful', err, p.actor, lockout);
      await this.halting;
      return { phase: 'graceful' };
    }
    await this.announce('HALTED', { phase: 'immediate', by }, p.actor, 'halt', { phase: 'immediate', reason });
    await this.o.onHalt?.('immediate', err, 0);
    await this.halting;
    return { phase: 'immediate' };
  }

  /**
   * Leaves SAFETY_LOCKOUT: the system's (no `agent_id`; renews `haltSignal`) or one agent's
   * (its breakers start over). Admins only (E_FORBIDDEN otherwise); E_HALTED while a halt is
   * still running. Emits UNLOCKED and audits `unlock` naming who. `unlocked: false` when nothing
   * was locked.
   */
  async unlock(p: { actor: SafetyActor; agent_id?: string }): Promise<{ unlocked: boolean; lockout?: LockoutRecord }> {
    if (!p.actor.roles?.includes('admin')) throw new FingerError('E_FORBIDDEN', 'only an admin may unlock');
    if (this.sys === 'halting' || this.sys === 'halting_immediate')
      throw new FingerError('E_HALTED', 'a halt is still running; unlock when it is done');
    const by = `${p.actor.kind}:${p.actor.id}`;
    const key = p.agent_id ?? SYSTEM;
    // what this daemon knows counts too (a shared store may have lost the record)
    const known = this.lockouts.get(key);
    const wasLocked = known !== undefined || (p.agent_id === undefined && this.sys === 'locked');
    const cleared = (await this.store.clearLockout(p.agent_id, by)) ?? known;
    this.lockouts.delete(key);
    if (p.agent_id === undefined) this.renew();
    else {
      this.breakers.save(p.agent_id, emptyAgentBreakers());
      if (cleared?.breaker === 'token_budget') await this.store.deleteCounter(counterKey('agent_tokens', p.agent_id));
    }
    if (!cleared && !wasLocked) return { unlocked: false };
    const data = {
      ...(p.agent_id !== undefined ? { agent_id: p.agent_id } : {}),
      by,
      ...(cleared ? { lockout: cleared } : {}),
    };
    await this.announce('UNLOCKED', data, p.actor, 'unlock', data);
    return cleared ? { unlocked: true, lockout: cleared } : { unlocked: true };
  }

  /**
   * Lockouts and breaker state, for health. Never fails for want of the store: while a shared
   * store is unreachable it answers with what this daemon knows and says so in `store_error`.
   */
  async state(): Promise<SafetyState> {
    const breakers: SafetyState['breakers'] = {};
    let stored: Record<string, AgentBreakers> = {};
    let store_error: string | undefined;
    try {
      stored = await this.store.listBreakers();
    } catch (e) {
      store_error = (e as Error).message;
    }
    const all = { ...stored, ...Object.fromEntries(this.breakers.entries()) };
    for (const [id, b] of Object.entries(all))
      breakers[id] = {
        status: b.status,
        repeat: b.repeat.count,
        errors: b.cascade.recent.filter(Boolean).length,
        denials: b.denial.recent.filter(Boolean).length,
      };
    const sys = this.lockouts.get(SYSTEM);
    return {
      system: this.sys,
      ...(sys ? { lockout: sys } : {}),
      agents_locked: [...this.lockouts.values()].filter((l) => l.agent_id !== undefined),
      breakers,
      config: { ...this.config },
      ...(store_error !== undefined ? { store_error } : {}),
    };
  }

  /** Unsubscribes from the store (the store itself is closed by its owner). */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private async runHalt(mode: 'graceful', err: FingerError, actor: SafetyActor, lockout: LockoutRecord): Promise<void> {
    // Priority 0: cancelling starts first; persisting and telling run beside it.
    const cancelling = Promise.resolve()
      .then(() => this.o.onHalt?.(mode, err, this.config.halt_grace_ms))
      .catch((e: unknown) => this.o.logger?.warn({ err: e }, 'halt handler failed'));
    try {
      await this.store
        .setLockout(lockout)
        .catch((e: unknown) => this.o.logger?.warn({ err: e }, 'persisting the halt lockout failed'));
      await this.announce('HALTED', { phase: mode, by: lockout.by, reason: lockout.reason }, actor, 'halt', {
        phase: mode,
        reason: lockout.reason,
      });
      await cancelling;
    } finally {
      this.sys = systemTransition(this.sys, 'halt_done').state;
      this.halting = undefined;
    }
  }

  private renew(): void {
    this.sys = systemTransition(this.sys, 'unlock').state;
    if (this.ctrl.signal.aborted) this.ctrl = new AbortController();
  }

  /** A change from the store (ours or another daemon's): keep the cache; follow remote halts/unlocks. */
  private onChange(c: SafetyChange): void {
    // another daemon counted a call of this agent (or unlocked it): our copy is stale
    if (c.type === 'breakers') {
      if (c.remote === true) this.breakers.forget(c.agent_id);
    } else if (c.type === 'lockout_set') {
      const key = c.lockout.agent_id ?? SYSTEM;
      this.lockouts.set(key, c.lockout);
      if (key === SYSTEM && this.sys === 'open') {
        const err = this.lockedError(c.lockout);
        if (c.lockout.cause === 'halt') {
          this.sys = 'halting';
          this.ctrl.abort(new FingerError('E_HALTED', `halted by ${c.lockout.by}`, { by: c.lockout.by }));
          this.halting = (async () => {
            try {
              await this.o.onHalt?.('graceful', new FingerError('E_HALTED', err.message), this.config.halt_grace_ms);
            } finally {
              this.sys = systemTransition(this.sys, 'halt_done').state;
              this.halting = undefined;
            }
          })();
        } else {
          this.sys = systemTransition(this.sys, 'lock').state;
          this.ctrl.abort(err);
        }
      }
    } else if (c.type === 'lockout_cleared') {
      this.lockouts.delete(c.agent_id ?? SYSTEM);
      if (c.agent_id === undefined && this.sys === 'locked') this.renew();
    }
  }

  private lockedError(l: LockoutRecord | undefined): FingerError {
    const scope = l?.agent_id !== undefined ? `agent ${l.agent_id} is` : 'the system is';
    return new FingerError(
      'E_SAFETY_LOCKOUT',
      `${scope} in SAFETY_LOCKOUT${l ? ` (${l.cause}${l.breaker ? ` ${l.breaker}` : ''}: ${l.reason}, by ${l.by})` : ''}; an admin must unlock`,
      l ? { cause: l.cause, by: l.by, at: l.at, ...(l.agent_id !== undefined ? { agent_id: l.agent_id } : {}) } : {},
    );
  }

  /** BREAKER_TRIPPED + `breaker.tripped` audit entry; `lock` puts the agent in SAFETY_LOCKOUT. */
  private async trip(
    breaker: BreakerName,
    agent_id: string,
    details: Record<string, unknown>,
    correlation: SafetyCorrelation | undefined,
    lock = false,
    reason?: string,
  ): Promise<void> {
    const data = { breaker, agent_id, ...details, locked: lock };
    this.o.events?.emit('BREAKER_TRIPPED', { ...correlation, target: agent_id }, data);
    await this.auditAppend({
      type: 'breaker.tripped',
      actor: { kind: 'agent', id: agent_id },
      request_id: correlation?.request_id ?? null,
      correlation_id: correlation?.correlation_id ?? null,
      tool: typeof details.tool === 'string' ? details.tool : null,
      decision: lock ? 'lockout' : String(details.stage ?? details.state ?? 'tripped'),
      details: data,
    });
    if (!lock) return;
    const lockout: LockoutRecord = {
      agent_id,
      cause: 'breaker',
      breaker,
      reason: reason ?? `${breaker} breaker tripped`,
      by: 'system',
      at: rfc3339(this.clock.now()),
    };
    this.lockouts.set(agent_id, lockout);
    await this.store.setLockout(lockout);
  }

  private announce(
    type: 'HALTED' | 'UNLOCKED',
    data: Record<string, unknown>,
    actor: SafetyActor,
    auditType: 'halt' | 'unlock',
    details: Record<string, unknown>,
  ): Promise<void> {
    this.o.events?.emit(type, {}, data);
    return this.auditAppend({ type: auditType, actor: { kind: actor.kind, id: actor.id }, details });
  }

  private async auditAppend(record: AuditRecord): Promise<void> {
    try {
      await this.o.audit?.append(record);
    } catch (e) {
      this.o.logger?.warn({ err: e, type: record.type }, 'safety audit append failed');
    }
  }
}

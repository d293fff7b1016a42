import { FingerError } from '@finger/protocol';

import { budgetTransition, stepTransition, timeTransition } from './breakers.js';
import { counterKey, type SafetyStateStore } from './safety-state-store.js';
import type { BreakerName, SafetyConfig } from './safety-types.js';

/** A task's budget; limits default to config `safety`. A nested task names its parent. */
export interface TaskBudget {
  task_id: string;
  agent_id: string;
  parent_task_id?: string;
  max_tokens?: number;
  max_steps?: number;
  max_ms?: number;
}

/** A registered task: its budget and when its clock started. */
export interface TaskEntry extends TaskBudget {
  started_at: number;
}

/** Correlation fields of a trip. */
export interface TripCorrelation {
  request_id?: string;
  correlation_id?: string;
  session_id?: string;
  workflow_id?: string;
}

/** What `checkBudget` gets. */
export interface BudgetCheck {
  agent_id: string;
  task_id?: string;
  parent?: string;
  estimate_tokens: number;
  correlation?: TripCorrelation;
}

/** What `recordStep` gets. */
export interface StepRecord {
  agent_id: string;
  task_id: string;
  parent?: string;
  correlation?: TripCorrelation;
}

/** Options of {@link BudgetTracker}. */
export interface BudgetTrackerOptions {
  store: SafetyStateStore;
  config: SafetyConfig;
  clock: { now(): number };
  /** Reports a trip (event, audit entry, lockout when `lock`). */
  trip(
    breaker: BreakerName,
    agent_id: string,
    details: Record<string, unknown>,
    correlation: TripCorrelation | undefined,
    lock: boolean,
  ): Promise<void>;
  /** Most tasks with a registered budget at a time (oldest dropped). Default 10,000. */
  max_tasks?: number;
}

/**
 * Token, step and time budgets (§3.8) over the store's atomic counters: per agent, per task,
 * and for every enclosing task of a nested one (a child cannot spend past its parent). Task
 * registrations (limits, parent, start time) live in this process; the counters in the store.
 */
export class BudgetTracker {
  private readonly tasks = new Map<string, TaskEntry>();
  private readonly store: SafetyStateStore;
  private readonly config: SafetyConfig;
  private readonly clock: { now(): number };

  constructor(private readonly o: BudgetTrackerOptions) {
    this.store = o.store;
    this.config = o.config;
    this.clock = o.clock;
  }

  /** Registers a task's budget (its clock starts now). Nested: name `parent_task_id`. */
  beginTask(task: TaskBudget): void {
    if (this.tasks.size >= (this.o.max_tasks ?? 10_000)) {
      const oldest = this.tasks.keys().next().value;
      if (oldest !== undefined) this.tasks.delete(oldest);
    }
    this.tasks.set(task.task_id, { ...task, started_at: this.clock.now() });
  }

  /** Forgets a finished task and deletes its counters. */
  async endTask(task_id: string): Promise<void> {
    this.tasks.delete(task_id);
    await this.store.deleteCounter(counterKey('task_tokens', task_id));
    await this.store.deleteCounter(counterKey('task_steps', task_id));
  }

  /** Deletes the token counter of an agent that will not run again (a finished task's executor). */
  async retireAgent(agent_id: string): Promise<void> {
    await this.store.deleteCounter(counterKey('agent_tokens', agent_id));
  }

  /**
   * Before a model call: rejects with E_BUDGET_EXHAUSTED (details `{breaker, scope, id, used,
   * limit, estimate, state}`) when `estimate_tokens` would take the agent, the task or any
   * enclosing task past its token budget, or the task past its time budget — the call must then
   * not be sent. An unknown `task_id`
   * is registered on the spot, under `parent` when given.
   */
  async check(p: BudgetCheck): Promise<void> {
    const used = await this.store.getCounter(counterKey('agent_tokens', p.agent_id));
    const limit = this.config.max_token_usage;
    if (!budgetTransition(used, { estimate: p.estimate_tokens }, limit).allowed)
      await this.budgetTrip(p, { scope: 'agent', id: p.agent_id, used, limit });
    for (const t of this.taskChain(p)) {
      if (timeTransition(t.started_at, this.clock.now(), { max_task_ms: t.max_ms ?? this.config.max_task_ms }))
        await this.timeTrip(p.agent_id, t, p.correlation);
      const tUsed = await this.store.getCounter(counterKey('task_tokens', t.task_id));
      const tLimit = t.max_tokens ?? this.config.max_token_usage;
      if (!budgetTransition(tUsed, { estimate: p.estimate_tokens }, tLimit).allowed)
        await this.budgetTrip(p, { scope: 'task', id: t.task_id, used: tUsed, limit: tLimit });
    }
  }

  /** After a model call: adds the reported tokens to the agent, the task and every enclosing task. */
  async recordUsage(p: { agent_id: string; task_id?: string; parent?: string; tokens: number }): Promise<{
    agent_total: number;
  }> {
    const tokens = Math.max(0, Math.floor(p.tokens));
    const agent_total = await this.store.incrBy(counterKey('agent_tokens', p.agent_id), tokens);
    for (const t of this.taskChain(p)) await this.store.incrBy(counterKey('task_tokens', t.task_id), tokens);
    return { agent_total };
  }

  /**
   * Before a step of a task: returns `{step, final}` — `final` on step `max_steps`, the one the
   * agent must use to summarise. A step after it rejects with E_BUDGET_EXHAUSTED (`breaker:
   * 'step_budget', state: 'PAUSED'`): checkpoint and pause the task. Also checks the time budget.
   */
  async recordStep(p: StepRecord): Promise<{ step: number; final: boolean }> {
    const task = this.taskChain(p)[0]!;
    if (timeTransition(task.started_at, this.clock.now(), { max_task_ms: task.max_ms ?? this.config.max_task_ms }))
      await this.timeTrip(p.agent_id, task, p.correlation);
    const step = await this.store.incrBy(counterKey('task_steps', p.task_id), 1);
    const max_steps = task.max_steps ?? this.config.max_steps;
    const effect = stepTransition(step, { max_steps });
    if (effect === 'pause') {
      const details = { scope: 'task', id: p.task_id, task_id: p.task_id, step, limit: max_steps, state: 'PAUSED' };
      await this.o.trip('step_budget', p.agent_id, details, p.correlation, false);
      throw new FingerError('E_BUDGET_EXHAUSTED', `task ${p.task_id} used its ${max_steps} steps`, {
        breaker: 'step_budget',
        ...details,
      });
    }
    return { step, final: effect === 'final' };
  }

  /** The task and its enclosing tasks, innermost first (registers an unknown task). */
  private taskChain(p: { agent_id: string; task_id?: string; parent?: string }): TaskEntry[] {
    if (p.task_id === undefined) return [];
    if (!this.tasks.has(p.task_id))
      this.beginTask({ task_id: p.task_id, agent_id: p.agent_id, ...(p.parent ? { parent_task_id: p.parent } : {}) });
    const out: TaskEntry[] = [];
    const seen = new Set<string>();
    let t = this.tasks.get(p.task_id);
    while (t && !seen.has(t.task_id)) {
      out.push(t);
      seen.add(t.task_id);
      t = t.parent_task_id !== undefined ? this.tasks.get(t.parent_task_id) : undefined;
    }
    return out;
  }

  private async budgetTrip(
    p: { agent_id: string; task_id?: string; estimate_tokens: number; correlation?: TripCorrelation },
    s: { scope: 'agent' | 'task'; id: string; used: number; limit: number },
  ): Promise<never> {
    const details = {
      ...s,
      estimate: p.estimate_tokens,
      state: 'STOPPED',
      ...(p.task_id ? { task_id: p.task_id } : {}),
    };
    await this.o.trip('token_budget', p.agent_id, details, p.correlation, s.scope === 'agent');
    throw new FingerError(
      'E_BUDGET_EXHAUSTED',
      `token budget of ${s.scope} ${s.id} exhausted: ${s.used} used + ${p.estimate_tokens} estimated > ${s.limit}`,
      { breaker: 'token_budget', ...details },
    );
  }

  private async timeTrip(agent_id: string, t: TaskEntry, correlation?: TripCorrelation): Promise<never> {
    const limit = t.max_ms ?? this.config.max_task_ms;
    const details = { scope: 'task', id: t.task_id, task_id: t.task_id, limit, state: 'PAUSED' };
    await this.o.trip('time_budget', agent_id, details, correlation, false);
    throw new FingerError('E_BUDGET_EXHAUSTED', `task ${t.task_id} ran past its ${limit} ms`, {
      breaker: 'time_budget',
      ...details,
    });
  }
}

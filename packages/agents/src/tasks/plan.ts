// Plan and subtask lifecycle: pure functions over plain data (checkpointed with the task).

import { FingerError } from '@finger/protocol';

/** Lifecycle of one subtask. */
export type SubtaskStatus = 'pending' | 'active' | 'done' | 'failed' | 'skipped';

/** What can happen to a subtask. */
export type SubtaskEvent = 'activate' | 'complete' | 'fail' | 'skip' | 'retry';

/** One step of a plan. */
export interface Subtask {
  id: number;
  title: string;
  status: SubtaskStatus;
  /** What the model or a reflection said about it (why it failed, what it produced). */
  note?: string;
}

/** A task's plan; `revision` grows with every revision (a reflection that changed it). */
export interface Plan {
  subtasks: Subtask[];
  revision: number;
}

const SUBTASK_TABLE: Readonly<Record<SubtaskStatus, Partial<Record<SubtaskEvent, SubtaskStatus>>>> = {
  pending: { activate: 'active', skip: 'skipped' },
  active: { complete: 'done', fail: 'failed', skip: 'skipped' },
  failed: { retry: 'active', skip: 'skipped' },
  done: {},
  skipped: {},
};

/** Next status of a subtask; E_CONFLICT when the event is not allowed in `status`. Pure. */
export function subtaskTransition(status: SubtaskStatus, event: SubtaskEvent): SubtaskStatus {
  const next = SUBTASK_TABLE[status][event];
  if (next === undefined) throw new FingerError('E_CONFLICT', `a ${status} subtask cannot ${event}`, { status, event });
  return next;
}

/** A fresh plan from subtask titles (all pending; the first one active). Empty titles → an empty plan. */
export function createPlan(titles: readonly string[]): Plan {
  const subtasks = titles
    .map((t) => t.trim())
    .filter((t) => t.length > 0)
    .map((title, i): Subtask => ({ id: i + 1, title, status: i === 0 ? 'active' : 'pending' }));
  return { subtasks, revision: 0 };
}

/** The active subtask, if any. */
export function activeSubtask(plan: Plan): Subtask | undefined {
  return plan.subtasks.find((s) => s.status === 'active');
}

/**
 * Applies `event` to subtask `id` and, when that closed it (done/failed/skipped), activates the
 * next pending one. Returns a new plan; the input is not changed. E_NOT_FOUND for an unknown id.
 */
export function applySubtaskEvent(plan: Plan, id: number, event: SubtaskEvent, note?: string): Plan {
  const idx = plan.subtasks.findIndex((s) => s.id === id);
  if (idx < 0) throw new FingerError('E_NOT_FOUND', `no subtask ${id} in the plan`, { id });
  const subtasks = plan.subtasks.map((s) => ({ ...s }));
  const s = subtasks[idx]!;
  s.status = subtaskTransition(s.status, event);
  if (note !== undefined) s.note = note;
  if (s.status !== 'active' && !subtasks.some((x) => x.status === 'active')) {
    const next = subtasks.find((x) => x.status === 'pending');
    if (next) next.status = 'active';
  }
  return { subtasks, revision: plan.revision };
}

/**
 * A revised plan (after a reflection): subtasks already done keep their status and id; the rest
 * is replaced by `titles`. Returns a new plan with `revision + 1`.
 */
export function revisePlan(plan: Plan, titles: readonly string[]): Plan {
  const kept = plan.subtasks.filter((s) => s.status === 'done').map((s) => ({ ...s }));
  let id = plan.subtasks.reduce((m, s) => Math.max(m, s.id), 0);
  const fresh = titles
    .map((t) => t.trim())
    .filter((t) => t.length > 0)
    .map((title): Subtask => ({ id: ++id, title, status: 'pending' }));
  const first = fresh[0];
  if (first) first.status = 'active';
  return { subtasks: [...kept, ...fresh], revision: plan.revision + 1 };
}

/** True when no subtask is pending or active (an empty plan is finished). */
export function planFinished(plan: Plan): boolean {
  return plan.subtasks.every((s) => s.status !== 'pending' && s.status !== 'active');
}

/** The plan as prompt lines: `[x] 1. read the file`, `[>] 2. …` (active), `[ ] 3. …`, `[!]` failed, `[-]` skipped. */
export function renderPlan(plan: Plan): string {
  const mark: Record<SubtaskStatus, string> = { done: 'x', active: '>', pending: ' ', failed: '!', skipped: '-' };
  return plan.subtasks.map((s) => `[${mark[s.status]}] ${s.id}. ${s.title}${s.note ? ` — ${s.note}` : ''}`).join('\n');
}

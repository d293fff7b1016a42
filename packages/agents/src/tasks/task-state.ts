// The task state machine (§1 principle 6): a pure `transition(state, event)`; the executor and the
// task service perform the side effects (checkpoint, TASK_STATE event) after a transition.

import { FingerError } from '@finger/protocol';

/** Every state a supervised task can be in. */
export const TASK_STATES = [
  'PENDING',
  'RUNNING',
  'WAITING_HUMAN',
  'PAUSED',
  'ERROR_PAUSED',
  'INTERRUPTED',
  'COMPLETED',
  'STOPPED',
  'FAILED',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** States a task never leaves. */
export const TERMINAL_TASK_STATES: readonly TaskState[] = ['COMPLETED', 'STOPPED', 'FAILED'];

/** States `--resume` may continue from. */
export const RESUMABLE_TASK_STATES: readonly TaskState[] = ['PAUSED', 'ERROR_PAUSED', 'INTERRUPTED'];

/**
 * What can happen to a task:
 * - `start`: the loop begins; `resume`: a person continues a paused or interrupted task;
 * - `wait_human` / `human_answered`: a person is asked (held call, unparseable reply, completion
 *   confirmation) and answers;
 * - `confirm_done`: the person confirmed the model's `done` → COMPLETED;
 * - `max_steps`: the loop cap was reached after the summarising step → PAUSED;
 * - `error_cascade`: too many errors → ERROR_PAUSED;
 * - `stop`: abort or kill switch → STOPPED; `fail`: a breaker terminated it (loop, budget) → FAILED;
 * - `interrupt`: the daemon restarted while the task was live → INTERRUPTED.
 */
export type TaskEvent =
  | 'start'
  | 'resume'
  | 'wait_human'
  | 'human_answered'
  | 'confirm_done'
  | 'max_steps'
  | 'error_cascade'
  | 'stop'
  | 'fail'
  | 'interrupt';

const TABLE: Readonly<Record<TaskState, Partial<Record<TaskEvent, TaskState>>>> = {
  PENDING: { start: 'RUNNING', stop: 'STOPPED', interrupt: 'INTERRUPTED', fail: 'FAILED' },
  RUNNING: {
    wait_human: 'WAITING_HUMAN',
    confirm_done: 'COMPLETED',
    max_steps: 'PAUSED',
    error_cascade: 'ERROR_PAUSED',
    stop: 'STOPPED',
    fail: 'FAILED',
    interrupt: 'INTERRUPTED',
  },
  WAITING_HUMAN: {
    human_answered: 'RUNNING',
    confirm_done: 'COMPLETED',
    stop: 'STOPPED',
    fail: 'FAILED',
    interrupt: 'INTERRUPTED',
  },
  PAUSED: { resume: 'RUNNING', stop: 'STOPPED' },
  ERROR_PAUSED: { resume: 'RUNNING', stop: 'STOPPED' },
  INTERRUPTED: { resume: 'RUNNING', stop: 'STOPPED' },
  COMPLETED: {},
  STOPPED: {},
  FAILED: {},
};

/** The next state, or undefined when `event` is not allowed in `state`. Pure. */
export function nextTaskState(state: TaskState, event: TaskEvent): TaskState | undefined {
  return TABLE[state][event];
}

/**
 * The next state of a task. Throws E_CONFLICT (naming the state and the event) when the event is
 * not allowed there — e.g. resuming a COMPLETED task. Pure.
 */
export function transition(state: TaskState, event: TaskEvent): TaskState {
  const next = TABLE[state][event];
  if (next === undefined) {
    throw new FingerError('E_CONFLICT', `a ${state} task cannot ${event.replace('_', ' ')}`, { state, event });
  }
  return next;
}

/** True for COMPLETED, STOPPED and FAILED. */
export function isTerminal(state: TaskState): boolean {
  return TERMINAL_TASK_STATES.includes(state);
}

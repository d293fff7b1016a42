import { describe, expect, it } from 'vitest';

import {
  isTerminal,
  nextTaskState,
  RESUMABLE_TASK_STATES,
  TASK_STATES,
  type TaskEvent,
  type TaskState,
  transition,
} from '../../src/tasks/task-state.js';

const EVENTS: TaskEvent[] = [
  'start',
  'resume',
  'wait_human',
  'human_answered',
  'confirm_done',
  'max_steps',
  'error_cascade',
  'stop',
  'fail',
  'interrupt',
];

// The whole table, written out: every (state, event) pair not listed here must be refused.
const ALLOWED: Record<string, TaskState> = {
  'PENDING/start': 'RUNNING',
  'PENDING/stop': 'STOPPED',
  'PENDING/interrupt': 'INTERRUPTED',
  'PENDING/fail': 'FAILED',
  'RUNNING/wait_human': 'WAITING_HUMAN',
  'RUNNING/confirm_done': 'COMPLETED',
  'RUNNING/max_steps': 'PAUSED',
  'RUNNING/error_cascade': 'ERROR_PAUSED',
  'RUNNING/stop': 'STOPPED',
  'RUNNING/fail': 'FAILED',
  'RUNNING/interrupt': 'INTERRUPTED',
  'WAITING_HUMAN/human_answered': 'RUNNING',
  'WAITING_HUMAN/confirm_done': 'COMPLETED',
  'WAITING_HUMAN/stop': 'STOPPED',
  'WAITING_HUMAN/fail': 'FAILED',
  'WAITING_HUMAN/interrupt': 'INTERRUPTED',
  'PAUSED/resume': 'RUNNING',
  'PAUSED/stop': 'STOPPED',
  'ERROR_PAUSED/resume': 'RUNNING',
  'ERROR_PAUSED/stop': 'STOPPED',
  'INTERRUPTED/resume': 'RUNNING',
  'INTERRUPTED/stop': 'STOPPED',
};

describe('task state transition', () => {
  for (const state of TASK_STATES) {
    for (const event of EVENTS) {
      const want = ALLOWED[`${state}/${event}`];
      if (want) {
        it(`${state} --${event}--> ${want}`, () => {
          expect(transition(state, event)).toBe(want);
          expect(nextTaskState(state, event)).toBe(want);
        });
      } else {
        it(`${state} refuses ${event} with E_CONFLICT`, () => {
          expect(nextTaskState(state, event)).toBeUndefined();
          expect(() => transition(state, event)).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
        });
      }
    }
  }

  it('terminal states are exactly COMPLETED, STOPPED, FAILED and accept nothing', () => {
    expect(TASK_STATES.filter(isTerminal)).toEqual(['COMPLETED', 'STOPPED', 'FAILED']);
    for (const s of TASK_STATES.filter(isTerminal)) for (const e of EVENTS) expect(nextTaskState(s, e)).toBeUndefined();
  });

  it('every resumable state resumes to RUNNING', () => {
    for (const s of RESUMABLE_TASK_STATES) expect(transition(s, 'resume')).toBe('RUNNING');
  });
});

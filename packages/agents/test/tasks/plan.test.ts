import { describe, expect, it } from 'vitest';

import {
  activeSubtask,
  applySubtaskEvent,
  createPlan,
  planFinished,
  renderPlan,
  revisePlan,
  subtaskTransition,
} from '../../src/tasks/plan.js';

describe('plan lifecycle', () => {
  it('creates a plan with the first subtask active, dropping blank titles', () => {
    expect(createPlan(['read', ' ', 'patch', 'check'])).toEqual({
      revision: 0,
      subtasks: [
        { id: 1, title: 'read', status: 'active' },
        { id: 2, title: 'patch', status: 'pending' },
        { id: 3, title: 'check', status: 'pending' },
      ],
    });
  });

  it('completing the active subtask activates the next pending one; the input is not changed', () => {
    const p = createPlan(['a', 'b']);
    const q = applySubtaskEvent(p, 1, 'complete', 'read 3 lines');
    expect(q.subtasks).toEqual([
      { id: 1, title: 'a', status: 'done', note: 'read 3 lines' },
      { id: 2, title: 'b', status: 'active' },
    ]);
    expect(p.subtasks[0]!.status).toBe('active');
    expect(activeSubtask(q)?.id).toBe(2);
    expect(planFinished(q)).toBe(false);
    expect(planFinished(applySubtaskEvent(q, 2, 'complete'))).toBe(true);
  });

  it('a failed subtask can be retried or skipped, never completed directly', () => {
    expect(subtaskTransition('failed', 'retry')).toBe('active');
    expect(subtaskTransition('failed', 'skip')).toBe('skipped');
    expect(() => subtaskTransition('failed', 'complete')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
    expect(() => subtaskTransition('done', 'activate')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
    expect(() => subtaskTransition('pending', 'complete')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
  });

  it('an unknown subtask id is E_NOT_FOUND', () => {
    expect(() => applySubtaskEvent(createPlan(['a']), 9, 'complete')).toThrow(
      expect.objectContaining({ code: 'E_NOT_FOUND' }),
    );
  });

  it('a revision keeps done subtasks and replaces the rest with fresh ids', () => {
    const p = applySubtaskEvent(createPlan(['a', 'b', 'c']), 1, 'complete');
    const r = revisePlan(p, ['b2', 'c2']);
    expect(r).toEqual({
      revision: 1,
      subtasks: [
        { id: 1, title: 'a', status: 'done' },
        { id: 4, title: 'b2', status: 'active' },
        { id: 5, title: 'c2', status: 'pending' },
      ],
    });
    expect(renderPlan(r)).toBe('[x] 1. a\n[>] 4. b2\n[ ] 5. c2');
  });

  it('an empty plan is finished (simple tasks skip planning)', () => {
    expect(planFinished(createPlan([]))).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';

import {
  checkGraph,
  type Graph,
  type GraphEvent,
  type GraphState,
  type GraphStatus,
  initialState,
  readySteps,
  transition,
} from '../../src/super/graph.js';

const G: Graph = {
  steps: [
    { id: 'a', agent: 'x' },
    { id: 'b', agent: 'y', after: ['a'] },
  ],
  max_attempts: 2,
};
const ERR = { code: 'E_MODULE_ERROR', message: 'boom' };
const CYCLE = { code: 'E_CALL_CYCLE', message: 'cycle' };

const run = (events: GraphEvent[], graph = G): GraphState =>
  events.reduce((s, e) => transition(graph, s, e), initialState(graph));

/** A state in each graph status, reached through valid transitions only. */
const IN: Record<GraphStatus, () => GraphState> = {
  idle: () => initialState(G),
  running: () => run([{ type: 'start' }]),
  completed: () =>
    run([
      { type: 'start' },
      { type: 'step_started', step: 'a' },
      { type: 'step_completed', step: 'a', result: 1 },
      { type: 'step_started', step: 'b' },
      { type: 'step_completed', step: 'b', result: 2 },
    ]),
  failed: () =>
    run([{ type: 'start' }, { type: 'step_started', step: 'a' }, { type: 'step_failed', step: 'a', error: CYCLE }]),
  degraded: () =>
    run([
      { type: 'start' },
      { type: 'step_started', step: 'a' },
      { type: 'step_failed', step: 'a', error: CYCLE },
      { type: 'degrade', reason: 'cycle' },
    ]),
};

describe('graph FSM', () => {
  it('checkGraph refuses empty graphs, duplicates, unknown and cyclic dependencies', () => {
    expect(() => checkGraph({ steps: [] })).toThrow(/no steps/);
    expect(() =>
      checkGraph({
        steps: [
          { id: 'a', agent: 'x' },
          { id: 'a', agent: 'y' },
        ],
      }),
    ).toThrow(/duplicate/);
    expect(() => checkGraph({ steps: [{ id: 'a', agent: 'x', after: ['z'] }] })).toThrow(/unknown step "z"/);
    expect(() =>
      checkGraph({
        steps: [
          { id: 'a', agent: 'x', after: ['b'] },
          { id: 'b', agent: 'y', after: ['a'] },
        ],
      }),
    ).toThrow(/cycle/);
    expect(() => initialState({ steps: [] })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGS' }));
  });

  it('a two-step run: ready steps follow the dependencies; the last completion completes the graph', () => {
    let s = transition(G, initialState(G), { type: 'start' });
    expect(readySteps(G, s)).toEqual(['a']);
    s = transition(G, s, { type: 'step_started', step: 'a' });
    expect(readySteps(G, s)).toEqual([]);
    s = transition(G, s, { type: 'step_completed', step: 'a', result: 'A' });
    expect(readySteps(G, s)).toEqual(['b']);
    s = transition(G, s, { type: 'step_started', step: 'b' });
    s = transition(G, s, { type: 'step_completed', step: 'b', result: 'B' });
    expect(s).toEqual({
      status: 'completed',
      steps: { a: { status: 'done', attempts: 1, result: 'A' }, b: { status: 'done', attempts: 1, result: 'B' } },
    });
    expect(readySteps(G, s)).toEqual([]);
  });

  it('a retryable failure goes back to pending until max_attempts; then the step and the graph fail', () => {
    let s = run([
      { type: 'start' },
      { type: 'step_started', step: 'a' },
      { type: 'step_failed', step: 'a', error: ERR },
    ]);
    expect(s.status).toBe('running');
    expect(s.steps.a).toEqual({ status: 'pending', attempts: 1, error: ERR });
    s = transition(G, s, { type: 'step_started', step: 'a' });
    s = transition(G, s, { type: 'step_failed', step: 'a', error: ERR });
    expect(s.status).toBe('failed');
    expect(s.steps.a).toEqual({ status: 'failed', attempts: 2, error: ERR });
  });

  it('a non-retryable error (E_CALL_CYCLE) fails at once; degrade records the reason', () => {
    expect(IN.failed().steps.a).toEqual({ status: 'failed', attempts: 1, error: CYCLE });
    expect(IN.degraded()).toMatchObject({ status: 'degraded', reason: 'cycle' });
  });

  it('transitions are atomic: an invalid event throws E_INVALID_ARGS and the state is unchanged', () => {
    const s = IN.running();
    const copy = structuredClone(s);
    expect(() => transition(G, s, { type: 'step_started', step: 'b' })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS' }),
    );
    expect(() => transition(G, s, { type: 'step_started', step: 'nope' })).toThrow(/unknown step/);
    expect(s).toEqual(copy);
  });

  // Every graph status × every event: which are allowed (a on a fresh or running step as fits).
  const events: Record<string, (st: GraphStatus) => GraphEvent> = {
    start: () => ({ type: 'start' }),
    step_started: () => ({ type: 'step_started', step: 'a' }),
    step_completed: () => ({ type: 'step_completed', step: 'a', result: 1 }),
    step_failed: () => ({ type: 'step_failed', step: 'a', error: ERR }),
    degrade: () => ({ type: 'degrade', reason: 'r' }),
  };
  const allowed: Record<GraphStatus, string[]> = {
    idle: ['start'],
    running: ['step_started', 'degrade'], // `a` is pending, so only starting it (or degrading) is valid
    completed: [],
    failed: ['degrade'],
    degraded: [],
  };
  for (const status of Object.keys(IN) as GraphStatus[]) {
    for (const [name, make] of Object.entries(events)) {
      const ok = allowed[status].includes(name);
      it(`${status} + ${name} → ${ok ? 'allowed' : 'E_INVALID_ARGS'}`, () => {
        const f = () => transition(G, IN[status](), make(status));
        if (ok) expect(f).not.toThrow();
        else expect(f).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGS' }));
      });
    }
  }

  it('running step + complete / fail are allowed; a running step cannot be started again', () => {
    const s = transition(G, IN.running(), { type: 'step_started', step: 'a' });
    expect(transition(G, s, { type: 'step_completed', step: 'a', result: 1 }).steps.a?.status).toBe('done');
    expect(transition(G, s, { type: 'step_failed', step: 'a', error: ERR }).steps.a?.status).toBe('pending');
    expect(() => transition(G, s, { type: 'step_started', step: 'a' })).toThrow(/not ready/);
    expect(transition(G, s, { type: 'degrade', reason: 'halt' }).status).toBe('degraded');
  });
});

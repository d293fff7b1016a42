/**
 * The SuperAgent's graph as a pure state machine: a DAG of steps, each handled by one sub-agent,
 * and `transition(graph, state, event) → state`. Every transition is atomic — it returns a whole new
 * state or throws E_INVALID_ARGS and changes nothing. No I/O, no clock: the SuperAgent performs
 * the calls and feeds their outcomes back as events.
 */
import { type ErrorInfo, FingerError } from '@finger/protocol';

/** One step: a sub-agent target and the steps whose results it needs. */
export interface GraphStep {
  id: string;
  /** The hub target that handles the step (an agent id). */
  agent: string;
  /** Steps that must be done first (default none). */
  after?: readonly string[];
}

/** A graph definition. */
export interface Graph {
  steps: readonly GraphStep[];
  /** Attempts per step before it fails for good (default 2). Non-retryable errors fail at once. */
  max_attempts?: number;
}

export type GraphStatus = 'idle' | 'running' | 'completed' | 'failed' | 'degraded';
export type StepStatus = 'pending' | 'running' | 'done' | 'failed';

/** State of one step. */
export interface StepState {
  status: StepStatus;
  attempts: number;
  result?: unknown;
  error?: ErrorInfo;
}

/** State of a graph run. */
export interface GraphState {
  status: GraphStatus;
  steps: Readonly<Record<string, StepState>>;
  /** Why the run degraded. */
  reason?: string;
}

/** What happens to a run. */
export type GraphEvent =
  | { type: 'start' }
  | { type: 'step_started'; step: string }
  | { type: 'step_completed'; step: string; result: unknown }
  | { type: 'step_failed'; step: string; error: ErrorInfo }
  | { type: 'degrade'; reason: string };

/** Errors a retry cannot fix: the step fails at its first occurrence. */
export const NON_RETRYABLE = new Set([
  'E_CALL_CYCLE',
  'E_NESTING_DEPTH',
  'E_FORBIDDEN',
  'E_DENIED_BY_POLICY',
  'E_NO_TARGET',
  'E_REJECTED_BY_HUMAN',
  'E_HALTED',
  'E_SAFETY_LOCKOUT',
  'E_INVALID_ARGS',
  'E_TIMEOUT',
]);

function invalid(message: string): FingerError {
  return new FingerError('E_INVALID_ARGS', `graph: ${message}`);
}

/**
 * Checks a graph: at least one step, unique ids, known `after` ids, no cycle. Throws
 * E_INVALID_ARGS naming the problem.
 */
export function checkGraph(graph: Graph): void {
  if (graph.steps.length === 0) throw invalid('no steps');
  const ids = new Set<string>();
  for (const s of graph.steps) {
    if (ids.has(s.id)) throw invalid(`duplicate step "${s.id}"`);
    ids.add(s.id);
  }
  for (const s of graph.steps)
    for (const a of s.after ?? []) if (!ids.has(a)) throw invalid(`step "${s.id}" runs after unknown step "${a}"`);
  // Kahn: a graph whose steps cannot all be ordered has a cycle.
  const indegree = new Map(graph.steps.map((s) => [s.id, (s.after ?? []).length]));
  const queue = graph.steps.filter((s) => (s.after ?? []).length === 0).map((s) => s.id);
  let seen = 0;
  while (queue.length > 0) {
    const id = queue.shift()!;
    seen++;
    for (const s of graph.steps) {
      if (!(s.after ?? []).includes(id)) continue;
      const left = indegree.get(s.id)! - 1;
      indegree.set(s.id, left);
      if (left === 0) queue.push(s.id);
    }
  }
  if (seen !== graph.steps.length) throw invalid('the steps depend on each other in a cycle');
}

/** The initial state: idle, every step pending. */
export function initialState(graph: Graph): GraphState {
  checkGraph(graph);
  const steps: Record<string, StepState> = {};
  for (const s of graph.steps) steps[s.id] = { status: 'pending', attempts: 0 };
  return { status: 'idle', steps };
}

/** Steps that may start now (pending, every `after` done), in definition order. */
export function readySteps(graph: Graph, state: GraphState): string[] {
  if (state.status !== 'running') return [];
  return graph.steps
    .filter((s) => state.steps[s.id]?.status === 'pending')
    .filter((s) => (s.after ?? []).every((a) => state.steps[a]?.status === 'done'))
    .map((s) => s.id);
}

function stepOf(state: GraphState, id: string): StepState {
  const s = state.steps[id];
  if (s === undefined) throw invalid(`unknown step "${id}"`);
  return s;
}

function withStep(state: GraphState, id: string, step: StepState, status = state.status): GraphState {
  return { ...state, status, steps: { ...state.steps, [id]: step } };
}

/**
 * The transition function (pure). Valid moves: `start` idle → running; `step_started` on a ready
 * step of a running graph; `step_completed` on a running step (the last one completes the graph);
 * `step_failed` on a running step — back to pending while attempts remain and the error is
 * retryable, else the step and the graph fail; `degrade` from running or failed. Anything else
 * throws E_INVALID_ARGS.
 */
export function transition(graph: Graph, state: GraphState, event: GraphEvent): GraphState {
  switch (event.type) {
    case 'start':
      if (state.status !== 'idle') throw invalid(`cannot start a ${state.status} graph`);
      return { ...state, status: 'running' };
    case 'step_started': {
      const s = stepOf(state, event.step);
      if (!readySteps(graph, state).includes(event.step))
        throw invalid(`step "${event.step}" is not ready (${s.status}, graph ${state.status})`);
      return withStep(state, event.step, { status: 'running', attempts: s.attempts + 1 });
    }
    case 'step_completed': {
      const s = stepOf(state, event.step);
      if (state.status !== 'running' || s.status !== 'running') throw invalid(`step "${event.step}" is not running`);
      const next = withStep(state, event.step, { status: 'done', attempts: s.attempts, result: event.result });
      const all = Object.values(next.steps).every((x) => x.status === 'done');
      return all ? { ...next, status: 'completed' } : next;
    }
    case 'step_failed': {
      const s = stepOf(state, event.step);
      if (state.status !== 'running' || s.status !== 'running') throw invalid(`step "${event.step}" is not running`);
      const retry = !NON_RETRYABLE.has(event.error.code) && s.attempts < (graph.max_attempts ?? 2);
      return retry
        ? withStep(state, event.step, { status: 'pending', attempts: s.attempts, error: event.error })
        : withStep(state, event.step, { status: 'failed', attempts: s.attempts, error: event.error }, 'failed');
    }
    case 'degrade':
      if (state.status !== 'running' && state.status !== 'failed')
        throw invalid(`cannot degrade a ${state.status} graph`);
      return { ...state, status: 'degraded', reason: event.reason };
  }
}

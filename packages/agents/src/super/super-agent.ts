/**
 * SuperAgent: an Agent that runs a small graph of sub-agents (graph.ts). Each step is a nested hub
 * call as the SuperAgent's principal, so the depth, cycle and lease guards, grants and the firewall
 * apply to it. The run is bounded — at most `steps × max_attempts` calls, each with a timeout capped
 * by the caller's deadline — and never hangs. On a routing cycle (E_CALL_CYCLE) or a step that keeps
 * failing it degrades, with a DEGRADED event: to `direct_reply` with the partial results and a
 * suggestion when some steps finished, else to `ask_human`.
 */
import { type ErrorInfo, toErrorInfo } from '@finger/protocol';

import type { AgentContext } from '../agent/agent.js';
import { type AgentOutcome, type AgentTurn, BaseAgent, type BaseAgentOptions } from '../agent/base-agent.js';
import { type Graph, type GraphState, initialState, readySteps, transition } from './graph.js';

/** What a SuperAgent answers. */
export interface SuperResult {
  status: 'completed' | 'degraded';
  decision: 'direct_reply' | 'ask_human';
  /** The last step's result when completed; a message with the suggestion when degraded. */
  reply: unknown;
  /** Every step's final state (results, errors, attempts). */
  steps: GraphState['steps'];
  /** When degraded: what a person could do next. */
  suggestion?: string;
  error?: ErrorInfo;
}

/** The plan the template carries from `decide` to `act`. */
interface SuperPlan {
  target: null;
  graph: Graph;
}

/** Options of {@link SuperAgent}. */
export interface SuperAgentOptions extends BaseAgentOptions {
  graph: Graph;
  /** Timeout of one step's call (default 30 s, capped by the caller's deadline). */
  step_timeout_ms?: number;
}

/** Input of every step: the original text and the results of the steps it runs after. */
export interface StepInput {
  text: string;
  results: Record<string, unknown>;
}

/** See the file comment. */
export class SuperAgent extends BaseAgent<SuperPlan, SuperResult> {
  readonly #graph: Graph;
  readonly #stepTimeout: number;

  constructor(options: SuperAgentOptions) {
    super(options);
    initialState(options.graph); // refuses a bad graph at construction (E_INVALID_ARGS)
    this.#graph = options.graph;
    this.#stepTimeout = options.step_timeout_ms ?? 30_000;
  }

  protected override decide(): Promise<SuperPlan> {
    return Promise.resolve({ target: null, graph: this.#graph });
  }

  protected override async act(
    plan: SuperPlan,
    turn: AgentTurn,
    ctx: AgentContext,
  ): Promise<AgentOutcome<SuperResult>> {
    const graph = plan.graph;
    let state = transition(graph, initialState(graph), { type: 'start' });
    const bound = graph.steps.length * (graph.max_attempts ?? 2);
    let lastError: ErrorInfo | undefined;
    for (let calls = 0; state.status === 'running' && calls < bound; calls++) {
      const id = readySteps(graph, state)[0];
      if (id === undefined) break; // cannot happen in a checked DAG; degrade below rather than loop
      const step = graph.steps.find((s) => s.id === id)!;
      state = transition(graph, state, { type: 'step_started', step: id });
      const input: StepInput = { text: turn.text, results: {} };
      for (const a of step.after ?? []) input.results[a] = state.steps[a]?.result;
      ctx.emit('DISPATCH_SENT', { step: id, target: step.agent, attempt: state.steps[id]!.attempts }, step.agent);
      try {
        const result = await ctx.call(step.agent, input, { timeout_ms: this.#stepTimeout });
        ctx.emit('DISPATCH_RESULT', { step: id, ok: true }, step.agent);
        state = transition(graph, state, { type: 'step_completed', step: id, result });
      } catch (e) {
        lastError = toErrorInfo(e);
        ctx.emit('DISPATCH_RESULT', { step: id, ok: false, error: lastError }, step.agent);
        state = transition(graph, state, { type: 'step_failed', step: id, error: lastError });
      }
    }
    if (state.status === 'completed') {
      const last = graph.steps[graph.steps.length - 1]!;
      return {
        result: {
          status: 'completed',
          decision: 'direct_reply',
          reply: state.steps[last.id]?.result,
          steps: state.steps,
        },
        record: { decision: 'graph', outcome: 'ok' },
      };
    }
    return this.#degrade(graph, state, lastError);
  }

  #degrade(graph: Graph, failed: GraphState, error: ErrorInfo | undefined): AgentOutcome<SuperResult> {
    const failedStep = graph.steps.find((s) => failed.steps[s.id]?.status !== 'done');
    const code = error?.code ?? 'E_ROUTE_FAILED';
    const reason =
      code === 'E_CALL_CYCLE'
        ? `sub-agents call each other in a cycle (${error?.message ?? ''})`
        : `step "${failedStep?.id ?? '?'}" failed with ${code}${error ? `: ${error.message}` : ''}`;
    const state = transition(graph, failed, { type: 'degrade', reason });
    const done = graph.steps.filter((s) => state.steps[s.id]?.status === 'done').map((s) => s.id);
    const suggestion =
      failedStep !== undefined
        ? `check the "${failedStep.agent}" agent, then retry, or run the step yourself: /hub target=${failedStep.agent} {"text": …}`
        : 'retry later';
    const partial = done.length > 0;
    const reply = partial
      ? `Finished ${done.join(', ')}; ${reason}. Suggestion: ${suggestion}`
      : `A person must decide: ${reason}. Suggestion: ${suggestion}`;
    const result: SuperResult = {
      status: 'degraded',
      decision: partial ? 'direct_reply' : 'ask_human',
      reply,
      steps: state.steps,
      suggestion,
      ...(error !== undefined ? { error } : {}),
    };
    return {
      result,
      event: {
        type: 'DEGRADED',
        data: {
          agent: this.id,
          reason,
          decision: result.decision,
          failed_step: failedStep?.id ?? null,
          completed_steps: done,
          ...(error !== undefined ? { error } : {}),
        },
      },
      record: { decision: 'graph', outcome: `degraded (${code})` },
    };
  }
}

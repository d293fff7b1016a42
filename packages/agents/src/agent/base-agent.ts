import type { GrantChecker } from '@finger/firewall';
import type { CapabilitySnapshot } from '@finger/hub';
import { type EventType, FingerError } from '@finger/protocol';

import type { Agent, AgentContext, AgentHealth, AgentServices } from './agent.js';
import { type Reach, reachableTools } from './reach.js';
import { SessionMemory, type SessionMemoryOptions, type TurnRecord } from './session-memory.js';

export type { Reach };

/** Everything a turn is decided on (built by {@link BaseAgent.buildContext}). */
export interface AgentTurn {
  input: unknown;
  /** The input as text: `input.text` when a string, else the input as JSON. */
  text: string;
  snapshot: CapabilitySnapshot;
  reach: Reach;
  /** Recent turns of this session, one line each (may be empty). */
  session_summary: string;
  /** Recent turns of this session that did not end `ok` (what went wrong before). */
  feedback: TurnRecord[];
}

/** What `act` returns: the result for the caller, the closing event, and the turn's record. */
export interface AgentOutcome<R> {
  result: R;
  /** Emitted by the `emitEvent` step, last. */
  event?: { type: EventType; data: Record<string, unknown>; target?: string };
  /** Remembered for the session (decision and outcome). */
  record?: Omit<TurnRecord, 'input'>;
}

/** Options every BaseAgent takes. */
export interface BaseAgentOptions {
  id: string;
  role: string;
  /** Role grants (the daemon's ToolGrantProfile); without it only module manifests' `grants` count. */
  grants?: GrantChecker;
  /** Token budget of the capability snapshot. Default 2000. */
  snapshot_budget_tokens?: number;
  memory?: SessionMemoryOptions;
}

/**
 * Template method for agents: `loadCapabilitySnapshot → buildContext → decide → validate → act →
 * emitEvent`. Subclasses override `decide`, `act` and `onError` only. `validate` refuses (E_FORBIDDEN)
 * a decision whose `target` the agent's principal may not reach, whatever `decide` produced.
 */
export abstract class BaseAgent<D extends { target?: string | null }, R = unknown> implements Agent {
  readonly id: string;
  readonly role: string;
  protected readonly memory: SessionMemory;
  #services: AgentServices | undefined;
  readonly #grants: GrantChecker | undefined;
  readonly #budget: number;

  constructor(options: BaseAgentOptions) {
    this.id = options.id;
    this.role = options.role;
    this.#grants = options.grants;
    this.#budget = options.snapshot_budget_tokens ?? 2000;
    this.memory = new SessionMemory(options.memory);
  }

  /** The services given at registration; throws E_MODULE_UNHEALTHY before `init`. */
  protected get services(): AgentServices {
    if (this.#services === undefined) throw new FingerError('E_MODULE_UNHEALTHY', `agent "${this.id}" is not started`);
    return this.#services;
  }

  init(services: AgentServices): Promise<void> {
    this.#services = services;
    return Promise.resolve();
  }

  health(): AgentHealth {
    return this.#services === undefined ? { ok: false, detail: 'not started' } : { ok: true };
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  /** Runs the template. Not to be overridden. */
  async handle(input: unknown, ctx: AgentContext): Promise<R> {
    let turn: AgentTurn | undefined;
    try {
      const { snapshot, reach } = this.loadCapabilitySnapshot();
      turn = this.buildContext(input, snapshot, reach, ctx);
      const decision = await this.decide(turn, ctx);
      const valid = this.validate(decision, turn);
      const outcome = await this.act(valid, turn, ctx);
      this.emitEvent(outcome, turn, ctx);
      return outcome.result;
    } catch (e) {
      return this.onError(e, turn, ctx);
    }
  }

  /** What the agent's principal may reach, and the snapshot of those tools within the budget. */
  protected loadCapabilitySnapshot(): { snapshot: CapabilitySnapshot; reach: Reach } {
    const { hub, principal } = this.services;
    const { reach } = reachableTools(hub, principal, this.#grants, this.id);
    return { snapshot: hub.tools.snapshot({ tool_ids: reach.tool_ids, budget_tokens: this.#budget }), reach };
  }

  /** The turn: input text, snapshot, what is reachable, this session's summary and feedback. */
  protected buildContext(input: unknown, snapshot: CapabilitySnapshot, reach: Reach, ctx: AgentContext): AgentTurn {
    const turns = this.memory.turns(sessionKey(ctx));
    return {
      input,
      text: inputText(input),
      snapshot,
      reach,
      session_summary: this.memory.summary(sessionKey(ctx)),
      feedback: turns.filter((t) => t.outcome !== 'ok'),
    };
  }

  /** Decides what to do (ask a model, plan a step…). */
  protected abstract decide(turn: AgentTurn, ctx: AgentContext): Promise<D>;

  /**
   * Refuses with E_FORBIDDEN a decision whose `target` resolves to a tool the agent may not call
   * (E_NO_TARGET when it resolves to nothing). Not to be overridden.
   */
  protected validate(decision: D, turn: AgentTurn): D {
    const target = decision.target;
    if (typeof target !== 'string') return decision;
    const tool_id = this.services.hub.resolveTarget(target).tool_id;
    if (!turn.reach.tool_ids.includes(tool_id))
      throw new FingerError('E_FORBIDDEN', `agent "${this.id}" may not reach "${tool_id}"`, {
        role: this.role,
        tool: tool_id,
      });
    return decision;
  }

  /** Carries the decision out; returns the result and the closing event. */
  protected abstract act(decision: D, turn: AgentTurn, ctx: AgentContext): Promise<AgentOutcome<R>>;

  /** Emits the outcome's event and remembers the turn. Not to be overridden. */
  protected emitEvent(outcome: AgentOutcome<R>, turn: AgentTurn, ctx: AgentContext): void {
    if (outcome.event !== undefined) ctx.emit(outcome.event.type, outcome.event.data, outcome.event.target);
    if (outcome.record !== undefined) this.memory.record(sessionKey(ctx), { input: turn.text, ...outcome.record });
  }

  /** Called with whatever a step threw (`turn` is undefined when building it failed). Default: rethrow. */
  protected onError(error: unknown, _turn: AgentTurn | undefined, _ctx: AgentContext): Promise<R> {
    return Promise.reject(error);
  }
}

/**
 * The memory key of a call: the session id scoped to the caller, so callers who pick the same
 * session id never see each other's turns in a prompt.
 */
export function sessionKey(ctx: Pick<AgentContext, 'caller' | 'session_id'>): string {
  return `${ctx.caller.kind}:${ctx.caller.id}:${ctx.session_id}`;
}

/** `input.text` when it is a string, the input itself when a string, else its JSON. */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (typeof input === 'object' && input !== null && typeof (input as { text?: unknown }).text === 'string')
    return (input as { text: string }).text;
  return JSON.stringify(input ?? null);
}

// The plugin interfaces of the ExecutorAgent (§3.15 "Supervised"). None of them makes a security
// judgement: tools are reached only through `ToolGateway` (the hub, so grants, the firewall, the
// human gate and the breakers apply), and the safety checks are the SafetyMonitor's.

import type { ErrorInfo } from '@finger/protocol';

import type { Memory } from '../memory/memory.js';
import type { ModelAdapter, ModelMessage } from '../model/model-adapter.js';
import type { CostTally, ModelPrices } from '../tasks/cost.js';
import type { TaskRecord, TaskToolCall } from '../tasks/task-types.js';

/** One tool call of an LLM decision (§3.7). */
export interface LlmToolCall {
  tool: string;
  args: Record<string, unknown>;
  intent?: string;
}

/** The executor's LLM decision (§3.7), as the guardrail returns it. */
export interface LlmDecision {
  thought: string;
  tool_calls: LlmToolCall[];
  confidence: number;
  human_required: boolean;
  done: boolean;
  summary?: string;
}

/**
 * Parses a model reply into a decision; never throws. A reply that cannot be parsed yields
 * `human_required: true` and no tool calls (the guardrail's `parseLlmDecision`); `errors` says why.
 */
export type DecisionParser = (text: string) => { decision: LlmDecision; errors?: string[] };

/** What the model is told about a granted tool. */
export interface ToolSummaryLine {
  id: string;
  summary: string;
}

/** Correlation of a task's tool call. */
export interface ToolCallMeta {
  task_id: string;
  session_id: string;
  correlation_id: string;
  /** Stable per (task, step, index): a resumed call with the same id joins the stored result. */
  request_id: string;
}

/** Tools, only through the hub. `call` rejects with the FingerError of whoever stopped it. */
export interface ToolGateway {
  call(tool: string, args: Record<string, unknown>, meta: ToolCallMeta): Promise<unknown>;
  /** The tools the executor's principal is granted, one line each. */
  granted(): ToolSummaryLine[];
  /** True for tools marked `idempotent` (safe to re-run after a crash). */
  isIdempotent(tool: string): boolean;
}

/** A person's answer to a task question (held task, confirmation of completion, in-flight call). */
export interface HumanAnswer {
  /** `confirm` (done / re-run), `continue` (with `message` for the model), `skip` (in-flight call), `stop`. */
  decision: 'confirm' | 'continue' | 'skip' | 'stop';
  message?: string;
  /** Principal id of who answered. */
  by: string;
}

/** How the executor asks a person (the task service: WAITING_HUMAN + `POST /v1/tasks/:id/answer`). */
export interface HumanChannel {
  ask(task: TaskRecord, signal: AbortSignal): Promise<HumanAnswer>;
}

/** The SafetyMonitor surface the loop uses (the firewall's SafetyMonitor satisfies it). */
export interface ExecutorSafety {
  readonly haltSignal: AbortSignal;
  assertOpen(agent_id?: string): void;
  checkBudget(p: { agent_id: string; task_id?: string; estimate_tokens: number }): Promise<void>;
  recordUsage(p: { agent_id: string; task_id?: string; tokens: number }): Promise<unknown>;
  recordStep(p: { agent_id: string; task_id: string }): Promise<{ step: number; final: boolean }>;
  /** Registers the task's budget for this run (its steps and tokens count from zero). */
  beginTask?(t: { task_id: string; agent_id: string; max_steps?: number }): void;
  /** Forgets the task's counters (end of a run: finished, paused or stopped). */
  endTask?(task_id: string): Promise<void>;
  /** Forgets an agent that will not run again (its task COMPLETED, STOPPED or FAILED): counters, breakers. */
  retireAgent?(agent_id: string): Promise<void>;
}

/** Plans a task (secondary model). Simple tasks may return no subtasks. */
export interface Planner {
  plan(task: string, model: ModelAdapter, signal: AbortSignal): Promise<{ subtasks: string[]; usage: CostTally }>;
  /**
   * Reflection at a checkpoint: the remaining subtasks as they should now be, given the plan and
   * the history; `undefined` keeps the plan. Done subtasks are kept by the caller.
   */
  revise?(
    p: { task: string; plan: string; history: string },
    model: ModelAdapter,
    signal: AbortSignal,
  ): Promise<{ subtasks: string[] | undefined; usage: CostTally }>;
}

/** Everything the ContextBuilder may put in a prompt. */
export interface PromptInput {
  task: TaskRecord;
  tools: ToolSummaryLine[];
  memories: string[];
  /** Avoidance, explain-intent, SYSTEM ALERT lines. */
  constraints: string[];
  safety_prompt: string;
  final_step: boolean;
  scratchpad?: string;
}

/** Builds the messages of one model call and keeps the history within its token budget. */
export interface ContextBuilder {
  build(input: PromptInput): ModelMessage[];
  /** The task with its history compressed when over budget (never restoring anything). */
  compact(task: TaskRecord): TaskRecord;
}

/** Progress the executor reports (the task service turns it into TASK_STATE events). */
export type ExecutorProgress =
  | { kind: 'state'; state: TaskRecord['state']; question?: TaskRecord['question'] }
  | { kind: 'step'; step: number; final: boolean }
  | { kind: 'text'; step: number; delta: string }
  | { kind: 'decision'; step: number; thought: string; confidence: number; calls: number; done: boolean }
  | { kind: 'tool_call'; step: number; call: TaskToolCall; request_id: string }
  | { kind: 'tool_result'; step: number; tool: string; request_id: string; class: string; error?: ErrorInfo }
  | { kind: 'usage'; step: number; step_usage: CostTally; total: CostTally };

/** Dependencies of {@link ExecutorAgent} (one options object). */
export interface ExecutorOptions {
  model: ModelAdapter;
  /** Reflect on the plan every this many steps (default 5; 0 = never). */
  reflect_every?: number;
  /** For plan/reflect/compress; the primary model when absent. */
  secondary_model?: ModelAdapter;
  parseDecision: DecisionParser;
  tools: ToolGateway;
  human: HumanChannel;
  /** Persists the task after every step (CheckpointStore.save). */
  checkpoint(task: TaskRecord): void;
  progress(task: TaskRecord, p: ExecutorProgress): void;
  safety?: ExecutorSafety;
  memory?: Memory;
  planner?: Planner;
  context: ContextBuilder;
  /** The firewall's constraint hints for a session (PerceptionBus.hintsFor), as text lines. */
  hints?(session_id: string): string[];
  /** The agent's own scratchpad for the prompt (read only: the system never writes it for the agent). */
  scratchpad?(task: TaskRecord): string | undefined | Promise<string | undefined>;
  /** Records the model's self-reported confidence of each decision (PerceptionBus.recordConfidence). */
  recordConfidence?(session_id: string, value: number): void;
  /** The firewall's safety prompt, injected into every step. */
  safety_prompt: string;
  prices?: ModelPrices;
  clock?: { now(): number };
  /** Principal id of the executor for this task (breakers are per agent id). */
  agent_id(task_id: string): string;
}

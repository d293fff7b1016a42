// The persisted shape of a supervised task (one JSON checkpoint per task, §3.13 `state/tasks/`).

import type { ErrorInfo } from '@finger/protocol';

import type { ContextState } from '../executor/context-window.js';
import type { ResultClass } from '../executor/result-summary.js';
import type { CostTally } from './cost.js';
import type { Plan } from './plan.js';
import type { TaskState } from './task-state.js';

/** One tool call the model proposed, as the task records it. */
export interface TaskToolCall {
  tool: string;
  args: Record<string, unknown>;
  intent?: string;
}

/** How one proposed tool call ended. */
export interface TaskCallOutcome extends TaskToolCall {
  request_id: string;
  class: ResultClass;
  /** Text fed back to the model (summarised, never silently cut). */
  summary: string;
  error?: ErrorInfo;
}

/** One completed executor step. */
export interface TaskStep {
  step: number;
  thought: string;
  confidence: number | null;
  calls: TaskCallOutcome[];
  usage: CostTally;
  /** The step was the final summarising one after `max_steps`. */
  final?: boolean;
}

/** A step whose model decision is made and whose tool calls are being run. */
export interface CurrentStep extends TaskStep {
  /** Calls not yet run, in order. */
  pending: TaskToolCall[];
  done: boolean;
  human_required: boolean;
  summary?: string;
  /** Why the decision could not be parsed (then `human_required`). */
  parse_errors?: string[];
}

/** A tool call that was sent and not answered before the checkpoint (daemon killed mid-call). */
export interface InFlightCall extends TaskToolCall {
  step: number;
  request_id: string;
  idempotent: boolean;
}

/** Why a task waits for a person, and what it needs. */
export interface TaskQuestion {
  kind: 'confirm_done' | 'human_required' | 'in_flight' | 'conflict';
  message: string;
}

/** The whole task state, checkpointed after every step. */
export interface TaskRecord {
  id: string;
  text: string;
  /** Absolute, realpath'd directory `myfinger run` was started in. */
  workspace: string;
  state: TaskState;
  /** Principal id of the person who started it (only they or an admin may see and steer it). */
  owner: string;
  session_id: string;
  correlation_id: string;
  created_at: string;
  updated_at: string;
  max_steps: number;
  /** Number of the last completed step (0 before the first). */
  step: number;
  plan: Plan | null;
  context: ContextState;
  steps: TaskStep[];
  usage: CostTally;
  /** The step under way: its decision is made, some calls may be left (resume runs those without asking the model again). */
  current?: CurrentStep;
  in_flight?: InFlightCall;
  question?: TaskQuestion;
  summary?: string;
  /** Set by the first abort: finish the current step, then stop. */
  abort_requested?: boolean;
  error?: ErrorInfo;
}

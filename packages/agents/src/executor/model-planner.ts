// The default Planner: asks the (secondary) model to split a task into a few subtasks. No
// security judgement: the plan is guidance in the prompt, every call is still judged. A reply
// that is not a JSON array of strings, or that the model did not finish (token limit, refusal,
// content filter), means "no plan" (the task runs unplanned; a revision keeps the plan).

import type { ModelAdapter } from '../model/model-adapter.js';
import { stopOf } from '../model/model-reply.js';
import { callCost, type CostTally } from '../tasks/cost.js';
import type { Planner } from './executor-types.js';
import { shortenText } from './result-summary.js';

/** Most subtasks kept from a plan. */
export const MAX_SUBTASKS = 8;

const PROMPT =
  'Split the task below into at most 6 short, concrete subtasks in order. Answer with only a JSON ' +
  'array of strings. Answer [] when the task is simple enough to do directly.';

const REVISE_PROMPT =
  'You review the progress of a task against its plan. Answer with only a JSON array of the subtasks ' +
  'still to do, in order (at most 6), revised if the history shows the plan must change.';

/** Reads a JSON array of strings out of a model reply; anything else → []. Pure. */
export function parsePlanReply(text: string): string[] {
  const start = text.indexOf('[');
  const end = text.lastIndexOf(']');
  if (start < 0 || end <= start) return [];
  try {
    const v = JSON.parse(text.slice(start, end + 1)) as unknown;
    if (!Array.isArray(v)) return [];
    return v
      .filter((x): x is string => typeof x === 'string')
      .map((x) => x.trim().slice(0, 300))
      .filter(Boolean)
      .slice(0, MAX_SUBTASKS);
  } catch {
    return [];
  }
}

/** See the file comment. Model errors propagate (the executor maps them). */
export class ModelPlanner implements Planner {
  constructor(private readonly o: { prices?: { input_per_mtok?: number; output_per_mtok?: number } } = {}) {}

  /** Reflection: asks the model for the remaining subtasks; an unreadable answer keeps the plan. */
  async revise(
    p: { task: string; plan: string; history: string },
    model: ModelAdapter,
    signal: AbortSignal,
  ): Promise<{ subtasks: string[] | undefined; usage: CostTally }> {
    const r = await model.complete(
      {
        messages: [
          { role: 'system', content: REVISE_PROMPT },
          { role: 'user', content: `Task: ${p.task}\n\nPlan:\n${p.plan}\n\nHistory:\n${shortenText(p.history, 8000)}` },
        ],
        max_tokens: 400,
      },
      { signal },
    );
    const subtasks = stopOf(r) === 'complete' && r.text.includes('[') ? parsePlanReply(r.text) : [];
    return { subtasks: subtasks.length ? subtasks : undefined, usage: callCost(r.usage, this.o.prices) };
  }

  async plan(
    task: string,
    model: ModelAdapter,
    signal: AbortSignal,
  ): Promise<{ subtasks: string[]; usage: CostTally }> {
    const r = await model.complete(
      {
        messages: [
          { role: 'system', content: PROMPT },
          { role: 'user', content: task },
        ],
        max_tokens: 400,
      },
      { signal },
    );
    // a cut, refused or filtered reply is no plan (a cut list may have lost its last steps)
    const subtasks = stopOf(r) === 'complete' ? parsePlanReply(r.text) : [];
    return { subtasks, usage: callCost(r.usage, this.o.prices) };
  }
}

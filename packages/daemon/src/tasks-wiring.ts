// The daemon's side of supervised tasks: builds the TaskService (@finger/agents) from config.json —
// the `llm` adapters (`secondary_model` for planning when set), the guardrail parser,
// `safety.max_steps`, `llm.prices` — and the ports the daemon owns (hub, events, audit, the
// scratchpad module's reader).

import { createModelAdapter, parseTaskDecision, TaskService, type TaskServiceOptions } from '@finger/agents';

import type { DaemonConfig } from './config.js';

/** What the daemon hands {@link wireTasks}: the service's ports, and the config the rest comes from. */
export type TaskWiringOptions = Omit<
  TaskServiceOptions,
  'model' | 'secondary_model' | 'parseDecision' | 'prices' | 'max_steps'
> & { config: DaemonConfig };

/**
 * Builds the TaskService from the daemon's config: the `llm` adapters (`secondary_model` for
 * planning when set), the guardrail parser, `safety.max_steps`, `llm.prices`. Marks the tasks a
 * previous process left running as INTERRUPTED.
 */
export function wireTasks(o: TaskWiringOptions): TaskService {
  const { config, ...ports } = o;
  const llm = config.llm;
  return new TaskService({
    ...ports,
    model: createModelAdapter(llm),
    ...(llm.secondary_model ? { secondary_model: createModelAdapter(llm, { secondary: true }) } : {}),
    parseDecision: parseTaskDecision,
    ...(llm.prices ? { prices: llm.prices } : {}),
    max_steps: config.safety.max_steps,
  });
}

// The default ContextBuilder: one system message (role, decision contract, the firewall's safety
// prompt) and one user message with the task, workspace, plan, granted tools, memories,
// constraint hints and the (compressed) history. Pure.

import type { ModelMessage } from '../model/model-adapter.js';
import { renderPlan } from '../tasks/plan.js';
import type { TaskRecord } from '../tasks/task-types.js';
import { compressContext, type CompressionOptions } from './context-window.js';
import type { ContextBuilder, PromptInput } from './executor-types.js';

/** The decision contract the model must follow (§3.7). */
export const DECISION_CONTRACT =
  'Answer with exactly one JSON object and nothing after it:\n' +
  '{"thought": "…", "tool_calls": [{"tool": "<tool id>", "args": {…}, "intent": "why"}], ' +
  '"confidence": 0.0-1.0, "human_required": false, "done": false, "summary": "…"}\n' +
  'Call only the tools listed. Set "done": true with a "summary" when the task is finished; ' +
  'set "human_required": true when you need the person.';

/** Options of {@link DefaultContextBuilder}. */
export interface DefaultContextBuilderOptions {
  /** History budget; compression starts above it (default 6000 estimated tokens). */
  compression?: CompressionOptions;
}

function section(title: string, body: string | string[]): string {
  const text = Array.isArray(body) ? body.map((l) => `- ${l}`).join('\n') : body;
  return text.trim() ? `# ${title}\n${text}` : '';
}

/** See the file comment. */
export class DefaultContextBuilder implements ContextBuilder {
  private readonly compression: CompressionOptions;

  constructor(o: DefaultContextBuilderOptions = {}) {
    this.compression = o.compression ?? { max_tokens: 6000 };
  }

  build(input: PromptInput): ModelMessage[] {
    const t = input.task;
    const system = [
      "You are finger's executor. You work on the person's task step by step with tools; every tool call " +
        'is checked by a firewall and may be held for the person, rejected, or fail.',
      DECISION_CONTRACT,
      input.safety_prompt,
    ]
      .filter((s) => s.trim())
      .join('\n\n');
    const history = t.context.entries.map((e) => `[step ${e.step} ${e.kind}] ${e.text}`).join('\n');
    const now = input.final_step
      ? `This is step ${t.step + 1}, your FINAL step (max_steps reached): call no tools; set "done": true and ` +
        'summarise what was done and what is left.'
      : `This is step ${t.step + 1} of at most ${t.max_steps}.`;
    const user = [
      section('Task', t.text),
      section('Workspace', `${t.workspace} (relative paths resolve here; work only inside it)`),
      t.plan && t.plan.subtasks.length ? section('Plan', renderPlan(t.plan)) : '',
      section(
        'Tools you may call',
        input.tools.map((x) => `${x.id}: ${x.summary}`),
      ),
      section('Scratchpad', input.scratchpad ?? ''),
      section('Relevant memories', input.memories),
      section('Constraints from the firewall and the person', input.constraints),
      section('History', history),
      section('Now', now),
    ]
      .filter(Boolean)
      .join('\n\n');
    return [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ];
  }

  compact(task: TaskRecord): TaskRecord {
    const context = compressContext(task.context, this.compression);
    return context === task.context ? task : { ...task, context };
  }
}

/**
 * The text a person should see of a streamed reply: everything before the JSON decision block
 * (a ```json fence or the first `{` at a line start). Pure; call it on the accumulated text.
 */
export function visibleText(accumulated: string): string {
  const fence = accumulated.search(/```/);
  const brace = accumulated.search(/(^|\n)\s*\{/);
  const cut = [fence, brace].filter((i) => i >= 0);
  return cut.length ? accumulated.slice(0, Math.min(...cut)) : accumulated;
}

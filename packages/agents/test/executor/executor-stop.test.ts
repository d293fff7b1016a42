import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { ExecutorAgent, newTask, type RunControl } from '../../src/executor/executor-agent.js';
import type { DecisionParser, ExecutorOptions, ExecutorProgress } from '../../src/executor/executor-types.js';
import { ModelPlanner } from '../../src/executor/model-planner.js';
import { DefaultContextBuilder } from '../../src/executor/prompt-builder.js';
import { parseLlmDecision } from '../../src/guardrail/llm-decision.js';
import { AnthropicAdapter } from '../../src/model/anthropic.js';
import type { ModelAdapter } from '../../src/model/model-adapter.js';
import { OpenAiAdapter } from '../../src/model/openai.js';
import type { TaskQuestion } from '../../src/tasks/task-types.js';

// The ExecutorAgent with the real adapters (streaming, as the loop asks) against the fake model
// server on loopback: a reply the model did not finish, refused or had filtered runs no tool.

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;

const parse: DecisionParser = (text) => {
  const r = parseLlmDecision(text);
  return r.outcome === 'ok' ? { decision: r.decision } : { decision: r.decision, errors: r.errors };
};

// Every control field is complete; the summary was cut by the token limit.
const CUT_AFTER_CALLS =
  '{"thought":"write it","tool_calls":[{"tool":"fs.write","args":{"path":"a.txt","content":"x"},"intent":"w"}],' +
  '"confidence":0.9,"human_required":false,"done":false,"summary":"writing a.t';
const WHOLE = `${CUT_AFTER_CALLS}xt"}`;

function run(model: ModelAdapter) {
  const calls: string[] = [];
  const questions: TaskQuestion[] = [];
  const progress: ExecutorProgress[] = [];
  const options: ExecutorOptions = {
    model,
    parseDecision: parse,
    tools: {
      call: (tool) => {
        calls.push(tool);
        return Promise.resolve({ ok: true });
      },
      granted: () => [{ id: 'fs.write', summary: 'write a file' }],
      isIdempotent: () => false,
    },
    human: {
      ask: (task) => {
        questions.push(task.question!);
        return Promise.resolve({ decision: 'stop', by: 'alice' });
      },
    },
    checkpoint: () => undefined,
    progress: (_t, p) => progress.push(p),
    context: new DefaultContextBuilder(),
    safety_prompt: 'SAFETY',
    clock: { now: () => 0 },
    agent_id: (id) => `executor-${id}`,
  };
  const control: RunControl = { signal: new AbortController().signal, stopRequested: () => false };
  const task = newTask({ id: 't1', text: 'write a.txt', workspace: '/ws', owner: 'alice', max_steps: 5, now: 0 });
  return { calls, questions, progress, done: new ExecutorAgent(options).run(task, control) };
}

const openai = (s: FakeLlmServer) =>
  new OpenAiAdapter({ base_url: s.openaiBaseUrl, api_key: 'k', model: 'gpt-test', sleep: noSleep });
const anthropic = (s: FakeLlmServer) =>
  new AnthropicAdapter({ base_url: s.url, api_key: 'k', model: 'claude-test', sleep: noSleep });

describe('ExecutorAgent and the stop reason', () => {
  it('the same reply, finished: the tool call runs (the baseline the cases below differ from)', async () => {
    server = await startFakeLlmServer({ script: [{ text: WHOLE }] });
    const r = run(openai(server));
    await r.done;
    expect(r.calls).toEqual(['fs.write']);
  });

  it('regression: a streamed OpenAI reply cut by finish_reason length runs no tool and asks the person', async () => {
    server = await startFakeLlmServer({ script: [{ text: CUT_AFTER_CALLS, finish_reason: 'length' }] });
    const r = run(openai(server));
    const t = await r.done;
    expect(r.calls).toEqual([]);
    expect(r.questions).toEqual([
      {
        kind: 'human_required',
        message:
          'the model\'s reply could not be read (the answer was cut off at the token limit (stop reason "length"))',
      },
    ]);
    expect(t.state).toBe('STOPPED');
    expect(t.steps[0]).toMatchObject({ calls: [], confidence: 0 });
  });

  it('a streamed Anthropic reply cut by stop_reason max_tokens runs no tool', async () => {
    server = await startFakeLlmServer({ script: [{ text: CUT_AFTER_CALLS, finish_reason: 'max_tokens' }] });
    const r = run(anthropic(server));
    await r.done;
    expect(r.calls).toEqual([]);
    expect(r.questions[0]!.message).toContain('cut off at the token limit (stop reason "max_tokens")');
  });

  it('Anthropic refusal and OpenAI content_filter: no tool, the person is told why', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: WHOLE, finish_reason: 'refusal' },
        { text: WHOLE, finish_reason: 'content_filter' },
      ],
    });
    const refused = run(anthropic(server));
    await refused.done;
    expect(refused.calls).toEqual([]);
    expect(refused.questions[0]!.message).toContain('the model refused to answer (stop reason "refusal")');
    const filtered = run(openai(server));
    await filtered.done;
    expect(filtered.calls).toEqual([]);
    expect(filtered.questions[0]!.message).toContain("the provider's content filter withheld the answer");
  });

  it('the planner takes a plan cut by the token limit as no plan', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: '["read a", "patch a", "run the tests"]', finish_reason: 'length' },
        { text: '["read a", "patch a"]' },
      ],
    });
    const planner = new ModelPlanner();
    const signal = new AbortController().signal;
    expect((await planner.plan('fix a', openai(server), signal)).subtasks).toEqual([]);
    expect((await planner.plan('fix a', openai(server), signal)).subtasks).toEqual(['read a', 'patch a']);
  });
});

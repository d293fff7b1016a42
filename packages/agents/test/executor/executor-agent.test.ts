import { describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';

import { ExecutorAgent, newTask, type RunControl } from '../../src/executor/executor-agent.js';
import type {
  DecisionParser,
  ExecutorOptions,
  ExecutorProgress,
  HumanAnswer,
  LlmDecision,
} from '../../src/executor/executor-types.js';
import { DefaultContextBuilder } from '../../src/executor/prompt-builder.js';
import type { ModelAdapter, ModelRequestParams } from '../../src/model/model-adapter.js';
import type { TaskQuestion, TaskRecord } from '../../src/tasks/task-types.js';

// The unit's own collaborators are scripted here: the model (replies in order), the tools and the person.

const parse: DecisionParser = (text) => {
  try {
    const o = JSON.parse(text.slice(text.indexOf('{'))) as Partial<LlmDecision>;
    return {
      decision: {
        thought: o.thought ?? '',
        tool_calls: o.tool_calls ?? [],
        confidence: o.confidence ?? 0.5,
        human_required: o.human_required ?? false,
        done: o.done ?? false,
        ...(o.summary ? { summary: o.summary } : {}),
      },
    };
  } catch (e) {
    return {
      decision: { thought: '', tool_calls: [], confidence: 0, human_required: true, done: false },
      errors: [(e as Error).message],
    };
  }
};

function reply(d: Partial<LlmDecision>): string {
  return `Working on it.\n${JSON.stringify({ thought: 't', tool_calls: [], confidence: 0.9, ...d })}`;
}

class ScriptedModel implements ModelAdapter {
  readonly provider = 'offline';
  readonly model = 'scripted';
  readonly requests: ModelRequestParams[] = [];
  constructor(private readonly replies: string[]) {}
  complete(params: ModelRequestParams, o?: { onText?: (d: string) => void }) {
    this.requests.push(params);
    const text = this.replies.shift();
    if (text === undefined) return Promise.reject(new FingerError('E_LLM_UNAVAILABLE', 'script ended'));
    o?.onText?.(text);
    return Promise.resolve({ text, usage: { input_tokens: 100, output_tokens: 10 }, model: 'scripted', attempts: 1 });
  }
}

interface Harness {
  model: ScriptedModel;
  calls: { tool: string; args: unknown; request_id: string }[];
  questions: TaskQuestion[];
  progress: ExecutorProgress[];
  saved: TaskRecord[];
  agent: ExecutorAgent;
}

function harness(
  replies: string[],
  o: {
    tool?: (tool: string, args: Record<string, unknown>) => unknown;
    answers?: HumanAnswer['decision'][];
    hints?: string[];
    idempotent?: string[];
  } = {},
): Harness {
  const h: Harness = {
    model: new ScriptedModel(replies),
    calls: [],
    questions: [],
    progress: [],
    saved: [],
    agent: undefined as unknown as ExecutorAgent,
  };
  const answers = [...(o.answers ?? [])];
  const options: ExecutorOptions = {
    model: h.model,
    parseDecision: parse,
    tools: {
      call: (tool, args, meta) => {
        h.calls.push({ tool, args, request_id: meta.request_id });
        try {
          return Promise.resolve(o.tool ? o.tool(tool, args) : { ok: true });
        } catch (e) {
          return Promise.reject(e);
        }
      },
      granted: () => [
        { id: 'fs.read', summary: 'read a file' },
        { id: 'fs.write', summary: 'write a file' },
      ],
      isIdempotent: (tool) => (o.idempotent ?? []).includes(tool),
    },
    human: {
      ask: (task) => {
        h.questions.push(task.question!);
        return Promise.resolve({ decision: answers.shift() ?? 'stop', by: 'alice', message: 'go on' });
      },
    },
    checkpoint: (t) => h.saved.push(structuredClone(t)),
    progress: (_t, p) => h.progress.push(p),
    context: new DefaultContextBuilder(),
    hints: () => o.hints ?? [],
    safety_prompt: 'SAFETY: never leave the workspace.',
    prices: { input_per_mtok: 1, output_per_mtok: 2 },
    clock: { now: () => 1_700_000_000_000 },
    agent_id: (id) => `executor-${id}`,
  };
  h.agent = new ExecutorAgent(options);
  return h;
}

const control = (stop = () => false): RunControl => ({ signal: new AbortController().signal, stopRequested: stop });
const task = (max_steps = 10) =>
  newTask({ id: 't1', text: 'patch greeting.txt', workspace: '/ws', owner: 'alice', max_steps, now: 0 });

describe('ExecutorAgent', () => {
  it('runs read → write → done, asks the person to confirm, and completes', async () => {
    const h = harness(
      [
        reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }] }),
        reply({ tool_calls: [{ tool: 'fs.write', args: { path: 'greeting.txt', content: 'hi' } }] }),
        reply({ done: true, summary: 'patched greeting.txt' }),
      ],
      { answers: ['confirm'] },
    );
    const t = await h.agent.run(task(), control());
    expect(t.state).toBe('COMPLETED');
    expect(t.summary).toBe('patched greeting.txt');
    expect(h.calls.map((c) => [c.tool, c.request_id])).toEqual([
      ['fs.read', 't1-s1-c1'],
      ['fs.write', 't1-s2-c1'],
    ]);
    expect(h.questions).toEqual([
      { kind: 'confirm_done', message: 'the model says the task is done: patched greeting.txt' },
    ]);
    expect(t.steps.map((s) => s.calls.map((c) => c.class))).toEqual([['success'], ['success'], []]);
    expect(t.usage).toEqual({ input_tokens: 300, output_tokens: 30, cost: 0.00036 });
    expect(h.progress.filter((p) => p.kind === 'state').map((p) => (p as { state: string }).state)).toEqual([
      'RUNNING',
      'WAITING_HUMAN',
      'COMPLETED',
    ]);
    const prompt = h.model.requests[1]!.messages;
    expect(prompt[0]!.content).toContain('SAFETY: never leave the workspace.');
    expect(prompt[1]!.content).toContain('fs.read → success');
    expect(h.saved.at(-1)!.state).toBe('COMPLETED');
  });

  it('feeds a rejection reason back and the next prompt carries the avoidance note and the firewall hints', async () => {
    const h = harness(
      [
        reply({ tool_calls: [{ tool: 'fs.write', args: { path: 'a', content: 'x' } }] }),
        reply({ human_required: true, thought: 'which file then?' }),
      ],
      {
        tool: (tool) => {
          if (tool === 'fs.write') throw new FingerError('E_REJECTED_BY_HUMAN', 'wrong file, use b.txt');
          return {};
        },
        hints: ['avoid fs.write: the user rejected it 3 times in a row.'],
      },
    );
    const t = await h.agent.run(task(), control());
    const second = h.model.requests[1]!.messages[1]!.content;
    expect(second).toContain('the person REJECTED fs.write: wrong file, use b.txt');
    expect(second).toContain('avoid fs.write: the user rejected it 3 times in a row.');
    expect(h.questions[0]).toEqual({ kind: 'human_required', message: 'the model asks for you: which file then?' });
    expect(t.state).toBe('STOPPED');
    expect(t.steps[0]!.calls[0]).toMatchObject({ class: 'failure', error: { code: 'E_REJECTED_BY_HUMAN' } });
  });

  it('at max_steps runs one final summarising step without tools, then PAUSED with a checkpoint', async () => {
    const h = harness([
      reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'a' } }] }),
      reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'b' } }], summary: 'read a; b is left' }),
    ]);
    const t = await h.agent.run(task(2), control());
    expect(t.state).toBe('PAUSED');
    expect(h.calls.map((c) => c.args)).toEqual([{ path: 'a' }]);
    expect(t.summary).toBe('read a; b is left');
    expect(t.steps.map((s) => s.final ?? false)).toEqual([false, true]);
    expect(h.model.requests[1]!.messages[1]!.content).toContain('your FINAL step');
    expect(h.saved.at(-1)).toMatchObject({ state: 'PAUSED', step: 2 });
  });

  it('an unparseable reply becomes a question for the person, never a tool call', async () => {
    const h = harness(['I will now run {"tool": rm -rf'], { answers: ['stop'] });
    const t = await h.agent.run(task(), control());
    expect(h.calls).toEqual([]);
    expect(h.questions[0]!.kind).toBe('human_required');
    expect(h.questions[0]!.message).toMatch(/could not be read/);
    expect(t.state).toBe('STOPPED');
  });

  it('a graceful abort stops after the current step', async () => {
    let steps = 0;
    const h = harness([reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'a' } }] }), reply({ done: true })]);
    const t = await h.agent.run(
      task(),
      control(() => steps++ > 0),
    );
    expect(t.state).toBe('STOPPED');
    expect(h.model.requests).toHaveLength(1);
    expect(t.step).toBe(1);
  });

  it('E_LOOP_DETECTED from the breakers fails the task with the error', async () => {
    const h = harness([reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'a' } }] })], {
      tool: () => {
        throw new FingerError('E_LOOP_DETECTED', 'repeated');
      },
    });
    const t = await h.agent.run(task(), control());
    expect(t.state).toBe('FAILED');
    expect(t.error).toMatchObject({ code: 'E_LOOP_DETECTED' });
  });

  it('resumes from the last checkpoint: pending calls run without asking the model again', async () => {
    const first = harness([
      reply({
        tool_calls: [
          { tool: 'fs.read', args: { path: 'a' } },
          { tool: 'fs.write', args: { path: 'b', content: 'x' } },
        ],
      }),
    ]);
    // the checkpoint written after the first call finished, as if the daemon died there
    await first.agent.run(task(), control()).catch(() => undefined);
    const ckpt = first.saved.find((s) => s.current?.calls.length === 1 && !s.in_flight)!;
    const resumed = harness([reply({ done: true, summary: 'ok' })], { answers: ['confirm'] });
    const t = await resumed.agent.run({ ...ckpt, state: 'INTERRUPTED' }, control());
    expect(resumed.calls.map((c) => [c.tool, c.request_id])).toEqual([['fs.write', 't1-s1-c2']]);
    expect(resumed.model.requests).toHaveLength(1);
    expect(t.state).toBe('COMPLETED');
    expect(t.steps.map((s) => s.calls.map((c) => c.tool))).toEqual([['fs.read', 'fs.write'], []]);
  });

  it('a non-idempotent call in flight at the crash is not re-run unless the person confirms', async () => {
    const first = harness([reply({ tool_calls: [{ tool: 'fs.write', args: { path: 'b', content: 'x' } }] })]);
    await first.agent.run(task(), control()).catch(() => undefined);
    const ckpt = first.saved.find((s) => s.in_flight !== undefined)!;
    const skip = harness([reply({ done: true })], { answers: ['skip', 'confirm'] });
    const t = await skip.agent.run({ ...ckpt, state: 'INTERRUPTED' }, control());
    expect(skip.calls).toEqual([]);
    expect(skip.questions[0]!.kind).toBe('in_flight');
    expect(t.steps[0]!.calls[0]).toMatchObject({ tool: 'fs.write', class: 'failure', error: { code: 'E_CONFLICT' } });
    const rerun = harness([reply({ done: true })], { answers: ['confirm', 'confirm'] });
    await rerun.agent.run({ ...ckpt, state: 'INTERRUPTED' }, control());
    expect(rerun.calls.map((c) => c.request_id)).toEqual(['t1-s1-c1']);
  });

  it('an idempotent call in flight is re-run without asking', async () => {
    const first = harness([reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'a' } }] })], {
      idempotent: ['fs.read'],
    });
    await first.agent.run(task(), control()).catch(() => undefined);
    const ckpt = first.saved.find((s) => s.in_flight !== undefined)!;
    const h = harness([reply({ done: true })], { answers: ['confirm'], idempotent: ['fs.read'] });
    await h.agent.run({ ...ckpt, state: 'INTERRUPTED' }, control());
    expect(h.calls.map((c) => c.tool)).toEqual(['fs.read']);
    expect(h.questions.map((q) => q.kind)).toEqual(['confirm_done']);
  });

  it('plans first with the planner and shows the plan in every prompt', async () => {
    const h = harness([reply({ done: true, summary: 's' })], { answers: ['confirm'] });
    const planned = new ExecutorAgent({
      ...(h.agent as unknown as { o: ExecutorOptions }).o,
      planner: {
        plan: () =>
          Promise.resolve({ subtasks: ['read it', 'patch it'], usage: { input_tokens: 5, output_tokens: 1, cost: 0 } }),
      },
    });
    const t = await planned.run(task(), control());
    expect(t.plan).toEqual({
      revision: 0,
      subtasks: [
        { id: 1, title: 'read it', status: 'active' },
        { id: 2, title: 'patch it', status: 'pending' },
      ],
    });
    expect(h.model.requests[0]!.messages[1]!.content).toContain('# Plan\n[>] 1. read it\n[ ] 2. patch it');
    expect(t.usage.input_tokens).toBe(105);
  });

  it('reflects on the plan at checkpoints with the planner and shows the revised plan', async () => {
    const h = harness(
      [
        reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'a' } }] }),
        reply({ tool_calls: [{ tool: 'fs.read', args: { path: 'b' } }] }),
        reply({ done: true, summary: 's' }),
      ],
      { answers: ['confirm'] },
    );
    const seen: string[] = [];
    const planned = new ExecutorAgent({
      ...(h.agent as unknown as { o: ExecutorOptions }).o,
      reflect_every: 2,
      planner: {
        plan: () =>
          Promise.resolve({ subtasks: ['read a', 'read b'], usage: { input_tokens: 0, output_tokens: 0, cost: 0 } }),
        revise: (p) => {
          seen.push(p.history);
          return Promise.resolve({
            subtasks: ['read c instead'],
            usage: { input_tokens: 1, output_tokens: 1, cost: 0 },
          });
        },
      },
    });
    const t = await planned.run(task(), control());
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('[step 2 result] fs.read');
    // nothing marks subtasks done yet, so the revision replaces the whole open plan
    expect(t.plan).toEqual({ revision: 1, subtasks: [{ id: 3, title: 'read c instead', status: 'active' }] });
    expect(h.model.requests[2]!.messages[1]!.content).toContain('[>] 3. read c instead');
  });

  it('refuses to run a COMPLETED task (E_CONFLICT)', async () => {
    const h = harness([]);
    await expect(h.agent.run({ ...task(), state: 'COMPLETED' }, control())).rejects.toMatchObject({
      code: 'E_CONFLICT',
    });
  });
});

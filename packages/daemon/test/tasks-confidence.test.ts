import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmScript, startFakeLlmServer, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

// The model's self-reported confidence for a step reaches the firewall for that step's tool calls
// (TaskConfidence → confidenceOf): a run of low-confidence calls is held for a person (layer 5),
// while the same calls at high confidence run AUTO. Real daemon, real fake-LLM server over HTTP.

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

const step = (tool: string, args: Record<string, unknown>, confidence: number) => ({
  text: `\`\`\`json\n${JSON.stringify({ thought: 'look around', tool_calls: [{ tool, args }], confidence, human_required: false, done: false, summary: '' })}\n\`\`\``,
});
const script = (confidence: number): FakeLlmScript => [
  step('fs.read', { path: 'greeting.txt' }, confidence),
  step('fs.stat', { path: 'greeting.txt' }, confidence),
  step('fs.list', { path: '.' }, confidence),
  {
    text: '```json\n{"thought":"ask","tool_calls":[],"confidence":0.9,"human_required":true,"done":false,"summary":""}\n```',
  },
];

async function setup(confidence: number) {
  const llm = await startFakeLlmServer({ script: script(confidence) });
  open.push(llm);
  const d: TestDaemon = await startTestDaemon({
    prepareHome: async (_home, workspace) => {
      await mkdir(join(workspace, 'proj'), { recursive: true });
      await writeFile(join(workspace, 'proj', 'greeting.txt'), 'hello\n');
    },
    config: {
      llm: { provider: 'openai', base_url: llm.openaiBaseUrl, model: 'fake', max_retries: 0 },
    },
  });
  open.push(d);
  const id = (await d.http('POST', '/v1/tasks', { text: 'look at the project', workspace: join(d.workspace, 'proj') }))
    .body.id as string;
  return { d, id };
}

const until = <T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> => waitFor(what, fn, ms, 25);

describe('task confidence reaches the firewall', { timeout: 40_000 }, () => {
  it('three low-confidence read-only calls in a row: the third is held (metacognitive.low_confidence_run)', async () => {
    const { d, id } = await setup(0.2);
    const approval = await until('the held call', async () => {
      const r = await d.http('GET', `/v1/approvals?session_id=task-${id}`);
      return r.body.approvals[0];
    });
    expect(approval.tool_id).toBe('fs.list');
    expect(JSON.stringify(approval)).toContain('metacognitive.low_confidence_run');
    const task = (await d.http('GET', `/v1/tasks/${id}`)).body;
    expect(task.steps.slice(0, 2).map((s: { calls: { tool: string; class: string }[] }) => s.calls[0]?.class)).toEqual([
      'success',
      'success',
    ]);
    await d.http('POST', `/v1/approvals/${approval.id}`, { decision: 'reject', reason: 'not now' });
    await until('the task asks its question', async () => {
      const r = await d.http('GET', `/v1/tasks/${id}`);
      return r.body.state === 'WAITING_HUMAN' ? r.body : undefined;
    });
  });

  it('the same calls at high confidence run without a person', async () => {
    const { d, id } = await setup(0.9);
    const task = await until('the task asks its question', async () => {
      const r = await d.http('GET', `/v1/tasks/${id}`);
      return r.body.state === 'WAITING_HUMAN' ? r.body : undefined;
    });
    expect(task.steps.slice(0, 3).map((s: { calls: { tool: string; class: string }[] }) => s.calls[0]?.class)).toEqual([
      'success',
      'success',
      'success',
    ]);
    expect((await d.http('GET', '/v1/approvals')).body.approvals).toEqual([]);
  });
});

import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  executorDecision,
  type FakeLlmScript,
  type FakeLlmServer,
  startFakeLlmServer,
  startTestDaemon,
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

// Real parts: the daemon on loopback, the fake OpenAI-compatible server over HTTP, the fs module,
// the firewall and the human gate. Only the person is played by the test (through the HTTP API).

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

const decision = (d: Record<string, unknown>) => executorDecision(d, 'Let me do this.');

async function setup(script: FakeLlmScript, config: Record<string, unknown> = {}) {
  const llm: FakeLlmServer = await startFakeLlmServer({ script });
  open.push(llm);
  let ws = '';
  const d: TestDaemon = await startTestDaemon({
    prepareHome: async (home, workspace) => {
      ws = workspace;
      await mkdir(join(ws, 'proj'), { recursive: true });
      await writeFile(join(ws, 'proj', 'greeting.txt'), 'helo world\n');
      // writes by the task are held for the person, with the diff
      const policy = { version: 1, rules: [{ tool: 'fs.write', level: 'APPROVE' }] };
      await mkdir(join(home, 'config'), { recursive: true });
      await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
    },
    config: {
      llm: { provider: 'openai', base_url: llm.openaiBaseUrl, model: 'fake', max_retries: 0 },
      ...config,
    },
  });
  open.push(d);
  return { d, llm, ws: join(d.workspace, 'proj') };
}

const until = <T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> => waitFor(what, fn, ms, 25);

const taskIn = (d: TestDaemon, id: string, states: string[]) =>
  until(`task ${id} in ${states.join('|')}`, async () => {
    const r = await d.http('GET', `/v1/tasks/${id}`);
    return states.includes(r.body.state) ? r.body : undefined;
  });

describe('/v1/tasks', { timeout: 30_000 }, () => {
  it('without a model (the offline default) a task is refused with E_LLM_UNAVAILABLE saying what to set', async () => {
    const d = await startTestDaemon({
      prepareHome: async (_home, workspace) =>
        mkdir(join(workspace, 'proj'), { recursive: true }).then(() => undefined),
    });
    open.push(d);
    const r = await d.http('POST', '/v1/tasks', { text: 'do it', workspace: join(d.workspace, 'proj') });
    expect(r).toMatchObject({
      status: 503,
      body: { error: { code: 'E_LLM_UNAVAILABLE', details: { provider: 'offline' } } },
    });
    expect(r.body.error.message).toContain('FINGER_LLM_PROVIDER');
    expect((await d.http('GET', '/v1/tasks?all=true')).body.tasks).toEqual([]);
  });

  it('runs a small coding task: read AUTO, write held for approval, completion confirmed by the person', async () => {
    const { d, llm, ws } = await setup([
      decision({ tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' }, intent: 'see the typo' }] }),
      decision({ tool_calls: [{ tool: 'fs.write', args: { path: 'greeting.txt', content: 'hello world\n' } }] }),
      decision({ done: true, summary: 'fixed the typo in greeting.txt' }),
    ]);
    await mkdir(join(ws, '.finger'));
    await writeFile(join(ws, '.finger', 'scratchpad.md'), 'note to self: the typo is in line 1');
    const started = await d.http('POST', '/v1/tasks', { text: 'fix the typo in greeting.txt', workspace: ws });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    const approval = await until('the held write', async () => {
      const r = await d.http('GET', `/v1/approvals?session_id=task-${id}`);
      return r.body.approvals[0];
    });
    expect(approval.tool_id).toBe('fs.write');
    expect(JSON.stringify(approval)).toContain('hello world');
    expect((await d.http('POST', `/v1/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(200);
    const waiting = await taskIn(d, id, ['WAITING_HUMAN']);
    expect(waiting.question).toEqual({
      kind: 'confirm_done',
      message: 'the model says the task is done: fixed the typo in greeting.txt',
    });
    expect((await d.http('POST', `/v1/tasks/${id}/answer`, { decision: 'confirm' })).status).toBe(200);
    const done = await taskIn(d, id, ['COMPLETED']);
    expect(
      done.steps.map((s: { calls: { tool: string; class: string }[] }) => s.calls.map((c) => `${c.tool}:${c.class}`)),
    ).toEqual([['fs.read:success'], ['fs.write:success'], []]);
    expect(await readFile(join(ws, 'greeting.txt'), 'utf8')).toBe('hello world\n');
    expect(llm.requests).toHaveLength(3);
    expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain('helo world');
    expect(JSON.stringify(llm.requests[0]!.body.messages)).toContain(
      '# Scratchpad\\nnote to self: the typo is in line 1',
    );
    expect((await d.http('GET', '/v1/audit/verify')).body).toMatchObject({ ok: true });
    expect((await d.http('GET', '/v1/tasks')).body.tasks).toEqual([]);
    expect((await d.http('GET', '/v1/tasks?all=true')).body.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
  });

  it("a scratchpad behind a symlink out of the workspace is not read into the prompt (the scratchpad module's checks, not a raw file read)", async () => {
    const { d, llm, ws } = await setup([decision({ done: true, summary: 'nothing to do' })]);
    const outside = join(d.workspace, '..', 'outside-pad');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'scratchpad.md'), 'SECRET-OUTSIDE-THE-WORKSPACE');
    await symlink(outside, join(ws, '.finger'));
    const started = await d.http('POST', '/v1/tasks', { text: 'look around', workspace: ws });
    expect(started.status).toBe(201);
    await taskIn(d, started.body.id as string, ['WAITING_HUMAN']);
    expect(llm.requests).toHaveLength(1);
    expect(JSON.stringify(llm.requests[0]!.body.messages)).not.toContain('SECRET-OUTSIDE-THE-WORKSPACE');
  });

  it('a rejected write goes back to the model with the reason, then the person stops the task', async () => {
    const { d, llm, ws } = await setup([
      decision({ tool_calls: [{ tool: 'fs.write', args: { path: 'greeting.txt', content: 'bye\n' } }] }),
      decision({ human_required: true, thought: 'what should the file say?' }),
    ]);
    const id = (await d.http('POST', '/v1/tasks', { text: 'change greeting.txt', workspace: ws })).body.id as string;
    const approval = await until(
      'the held write',
      async () => (await d.http('GET', '/v1/approvals')).body.approvals[0],
    );
    await d.http('POST', `/v1/approvals/${approval.id}`, { decision: 'reject', reason: 'keep the greeting friendly' });
    const waiting = await taskIn(d, id, ['WAITING_HUMAN']);
    expect(waiting.question.kind).toBe('human_required');
    const second = JSON.stringify(llm.requests[1]!.body.messages);
    expect(second).toContain('the person REJECTED fs.write');
    expect(second).toContain('keep the greeting friendly');
    await d.http('POST', `/v1/tasks/${id}/answer`, { decision: 'stop' });
    expect((await taskIn(d, id, ['STOPPED'])).steps[0].calls[0].error.code).toBe('E_REJECTED_BY_HUMAN');
    expect(await readFile(join(ws, 'greeting.txt'), 'utf8')).toBe('helo world\n');
  });

  it('an unparseable model reply ends in a question for the person, not a tool call', async () => {
    const { d, ws } = await setup([{ text: 'sure! I will run rm -rf / now {"tool_calls": [' }]);
    const id = (await d.http('POST', '/v1/tasks', { text: 'clean up', workspace: ws })).body.id as string;
    const t = await taskIn(d, id, ['WAITING_HUMAN']);
    expect(t.question.kind).toBe('human_required');
    expect(t.steps[0].calls).toEqual([]);
    expect((await d.http('GET', '/v1/approvals')).body.approvals).toEqual([]);
  });

  it('max_steps: the final step summarises, then the task is PAUSED', async () => {
    const { d, llm, ws } = await setup([
      decision({ tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }] }),
      decision({
        tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }],
        summary: 'read it; nothing changed',
      }),
    ]);
    const id = (await d.http('POST', '/v1/tasks', { text: 'look around', workspace: ws, max_steps: 2 })).body.id;
    const t = await taskIn(d, id, ['PAUSED']);
    expect(t).toMatchObject({ step: 2, summary: 'read it; nothing changed' });
    expect(t.steps[1]).toMatchObject({ final: true, calls: [] });
    expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain('FINAL step');
  });

  it('refuses a workspace outside the roots (E_FORBIDDEN), a relative one (E_INVALID_ARGS), and unknown ids (E_NOT_FOUND)', async () => {
    const { d } = await setup([]);
    const outside = await d.http('POST', '/v1/tasks', { text: 'x', workspace: d.home });
    expect(outside).toMatchObject({ status: 403, body: { error: { code: 'E_FORBIDDEN' } } });
    const rel = await d.http('POST', '/v1/tasks', { text: 'x', workspace: 'ws' });
    expect(rel).toMatchObject({ status: 400, body: { error: { code: 'E_INVALID_ARGS' } } });
    expect((await d.http('GET', '/v1/tasks/tnope')).body.error.code).toBe('E_NOT_FOUND');
    expect((await d.http('POST', '/v1/tasks/tnope/abort')).body.error.code).toBe('E_NOT_FOUND');
  });

  it('another operator cannot see or steer the task (E_NOT_FOUND)', async () => {
    const { d, ws } = await setup([{ text: 'garbage' }]);
    const id = (await d.http('POST', '/v1/tasks', { text: 'x', workspace: ws })).body.id;
    await taskIn(d, id, ['WAITING_HUMAN']);
    const other = await d.token('operator');
    expect((await d.http('GET', `/v1/tasks/${id}`, undefined, other)).body.error.code).toBe('E_NOT_FOUND');
    expect((await d.http('POST', `/v1/tasks/${id}/answer`, { decision: 'stop' }, other)).status).toBe(404);
    expect((await d.http('GET', '/v1/tasks?all=true', undefined, other)).body.tasks).toEqual([]);
  });

  it('two running tasks touching the same file: the later call is held for its person and an event is raised', async () => {
    const calls = new Map<string, number>();
    const { d } = await setup((req) => {
      const prompt = JSON.stringify(req.body.messages);
      const who = prompt.includes('task alpha') ? 'alpha' : 'beta';
      const n = (calls.get(who) ?? 0) + 1;
      calls.set(who, n);
      if (n === 1) return decision({ tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }] });
      return decision({ human_required: true, thought: `${who} waits` });
    });
    const ws = join(d.workspace, 'proj');
    const events = await d.events();
    open.push(events);
    await events.subscribe({ types: ['TASK_STATE'] });
    const a = (await d.http('POST', '/v1/tasks', { text: 'task alpha', workspace: ws })).body.id;
    await taskIn(d, a, ['WAITING_HUMAN']);
    const b = (await d.http('POST', '/v1/tasks', { text: 'task beta', workspace: ws })).body.id;
    const held = await taskIn(d, b, ['WAITING_HUMAN']);
    expect(held.question.kind).toBe('conflict');
    expect(held.question.message).toContain(`also used by task ${a}`);
    const isConflict = (m: any) => m.type === 'event' && m.event.data.kind === 'conflict';
    await events.waitFor((ms) => ms.some(isConflict), 'the conflict event');
    const conflict = events.messages.find(isConflict) as any;
    expect(conflict.event.data).toMatchObject({
      task_id: b,
      tool: 'fs.read',
      conflicts: [{ path: join(ws, 'greeting.txt'), task: a }],
    });
    await d.http('POST', `/v1/tasks/${b}/answer`, { decision: 'skip' });
    const after = await until('beta asks again', async () => {
      const t = (await d.http('GET', `/v1/tasks/${b}`)).body;
      return t.question?.kind === 'human_required' ? t : undefined;
    });
    expect(after.steps[0].calls[0]).toMatchObject({ tool: 'fs.read', error: { code: 'E_REJECTED_BY_HUMAN' } });
    // both end when their person says stop
    await d.http('POST', `/v1/tasks/${b}/answer`, { decision: 'stop' });
    await d.http('POST', `/v1/tasks/${a}/answer`, { decision: 'stop' });
    await taskIn(d, b, ['STOPPED']);
  });
});

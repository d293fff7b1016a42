import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { startFakeLlmServer, tempDir, waitFor } from '@finger/testkit';

import { build, type FingerApp } from '../src/index.js';

// Memory across daemon sessions, and the task controls (abort, resume) — real daemon, real HTTP,
// real fake-LLM server; the person is played through the HTTP API.

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

function decision(d: Record<string, unknown>): { text: string } {
  const body = { thought: 'next', tool_calls: [], confidence: 0.9, human_required: false, done: false, summary: '' };
  return { text: JSON.stringify({ ...body, ...d }) };
}

async function session(home: string, llmUrl: string) {
  const app: FingerApp = await build({
    home,
    env: {},
    config: {
      log: { level: 'silent' },
      server: { host: '127.0.0.1', port: 0 },
      // the workspace lives beside FINGER_HOME (see home())
      workspace: { roots: [join(home, '..', 'ws')] },
      llm: { provider: 'openai', base_url: llmUrl, model: 'fake', max_retries: 0 },
    },
  });
  const { url } = await app.listen();
  const token = readFileSync(join(home, 'token'), 'utf8').trim();
  const http = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
  return { app, http };
}

const until = <T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> => waitFor(what, fn, ms, 25);

/** A FINGER_HOME (`path`) and a workspace root beside it (`ws`), in one temp dir. */
async function home(): Promise<{ path: string; ws: string }> {
  const h = await tempDir('finger-task-mem-');
  cleanup.push(() => h.remove());
  const fingerHome = join(h.path, 'home');
  const ws = join(h.path, 'ws');
  await mkdir(join(fingerHome, 'config'), { recursive: true });
  await mkdir(ws, { recursive: true });
  await writeFile(join(ws, 'README.md'), '# demo\n');
  const policy = { version: 1, rules: [{ id: 'hold-writes', tool: 'fs.write', level: 'APPROVE' }] };
  await writeFile(join(fingerHome, 'config', 'admin-policy.json'), JSON.stringify(policy));
  return { path: fingerHome, ws };
}

const cases = [
  {
    lang: 'English',
    first: 'update the README badges',
    reason: 'never touch README.md without asking me first',
    next: 'add new badges to the README',
  },
  {
    lang: 'Chinese',
    first: '更新README的徽章',
    reason: '修改README之前必须先问我',
    next: '给README添加新的徽章',
  },
];

describe('task memory across daemon sessions', { timeout: 30_000 }, () => {
  for (const c of cases) {
    it(`a rejection remembered in one session is in the prompt of a related task in the next (${c.lang})`, async () => {
      const llm = await startFakeLlmServer({
        script: [
          decision({ tool_calls: [{ tool: 'fs.write', args: { path: 'README.md', content: 'x' } }] }),
          decision({ human_required: true, thought: '?' }),
          decision({ human_required: true, thought: 'ask first' }),
        ],
      });
      cleanup.push(() => llm.close());
      const h = await home();
      const s1 = await session(h.path, llm.openaiBaseUrl);
      const id1 = (await s1.http('POST', '/v1/tasks', { text: c.first, workspace: h.ws })).body.id;
      const held = await until('the held write', async () => (await s1.http('GET', '/v1/approvals')).body.approvals[0]);
      await s1.http('POST', `/v1/approvals/${held.id}`, { decision: 'reject', reason: c.reason });
      await until('the question', async () =>
        (await s1.http('GET', `/v1/tasks/${id1}`)).body.state === 'WAITING_HUMAN' ? true : undefined,
      );
      await s1.http('POST', `/v1/tasks/${id1}/answer`, { decision: 'stop' });
      await until('STOPPED', async () =>
        (await s1.http('GET', `/v1/tasks/${id1}`)).body.state === 'STOPPED' ? true : undefined,
      );
      await s1.app.close();

      const s2 = await session(h.path, llm.openaiBaseUrl);
      cleanup.push(() => s2.app.close());
      const id2 = (await s2.http('POST', '/v1/tasks', { text: c.next, workspace: h.ws })).body.id;
      await until('the second task asks', async () =>
        (await s2.http('GET', `/v1/tasks/${id2}`)).body.state === 'WAITING_HUMAN' ? true : undefined,
      );
      const prompt = JSON.stringify(llm.requests[2]!.body.messages);
      expect(prompt).toContain('Relevant memories');
      expect(prompt).toContain(c.reason);
      expect(prompt).toContain(`the person rejected fs.write`);
    });
  }
});

describe('task controls', { timeout: 30_000 }, () => {
  it('abort is two-phase: the first stops after the current step; a finished task cannot be aborted or resumed (E_CONFLICT)', async () => {
    const llm = await startFakeLlmServer({
      script: [
        decision({ tool_calls: [{ tool: 'fs.write', args: { path: 'a.txt', content: 'x' } }] }),
        decision({ done: true }),
      ],
    });
    cleanup.push(() => llm.close());
    const h = await home();
    const s = await session(h.path, llm.openaiBaseUrl);
    cleanup.push(() => s.app.close());
    const id = (await s.http('POST', '/v1/tasks', { text: 'write a.txt', workspace: h.ws })).body.id;
    const held = await until('the held write', async () => (await s.http('GET', '/v1/approvals')).body.approvals[0]);
    const first = await s.http('POST', `/v1/tasks/${id}/abort`);
    expect(first.body.phase).toBe('graceful');
    await s.http('POST', `/v1/approvals/${held.id}`, { decision: 'approve' });
    const t = await until('STOPPED', async () => {
      const b = (await s.http('GET', `/v1/tasks/${id}`)).body;
      return b.state === 'STOPPED' ? b : undefined;
    });
    expect(t.step).toBe(1);
    expect(llm.requests).toHaveLength(1);
    const again = await s.http('POST', `/v1/tasks/${id}/abort`);
    expect(again.body.error.code).toBe('E_CONFLICT');
    expect((await s.http('POST', `/v1/tasks/${id}/resume`)).body.error.code).toBe('E_CONFLICT');
  });

  it('a PAUSED task resumes with a fresh step window and completes', async () => {
    const llm = await startFakeLlmServer({
      script: [
        decision({ tool_calls: [{ tool: 'fs.read', args: { path: 'README.md' } }] }),
        decision({ summary: 'read the readme, not summarised yet' }),
        decision({ done: true, summary: 'read it' }),
      ],
    });
    cleanup.push(() => llm.close());
    const h = await home();
    const s = await session(h.path, llm.openaiBaseUrl);
    cleanup.push(() => s.app.close());
    const id = (await s.http('POST', '/v1/tasks', { text: 'read the readme', workspace: h.ws, max_steps: 2 })).body.id;
    await until('PAUSED', async () =>
      (await s.http('GET', `/v1/tasks/${id}`)).body.state === 'PAUSED' ? true : undefined,
    );
    expect((await s.http('POST', `/v1/tasks/${id}/resume`)).status).toBe(200);
    await until('the confirmation', async () => {
      const b = (await s.http('GET', `/v1/tasks/${id}`)).body;
      return b.question?.kind === 'confirm_done' ? true : undefined;
    });
    await s.http('POST', `/v1/tasks/${id}/answer`, { decision: 'confirm' });
    const done = await until('COMPLETED', async () => {
      const b = (await s.http('GET', `/v1/tasks/${id}`)).body;
      return b.state === 'COMPLETED' ? b : undefined;
    });
    expect(done).toMatchObject({ step: 3, max_steps: 4, summary: 'read it' });
    expect(llm.requests).toHaveLength(3);
    expect((await s.http('POST', `/v1/tasks/${id}/answer`, { decision: 'confirm' })).body.error.code).toBe(
      'E_CONFLICT',
    );
  });

  it('the kill switch stops a task that waits for its person (STOPPED, E_HALTED); aborting a waiting task is immediate', async () => {
    const llm = await startFakeLlmServer({
      script: [decision({ human_required: true, thought: 'which file?' }), decision({ human_required: true })],
    });
    cleanup.push(() => llm.close());
    const h = await home();
    const s = await session(h.path, llm.openaiBaseUrl);
    cleanup.push(() => s.app.close());
    const waiting = async (id: string) =>
      until('WAITING_HUMAN', async () =>
        (await s.http('GET', `/v1/tasks/${id}`)).body.state === 'WAITING_HUMAN' ? true : undefined,
      );
    const a = (await s.http('POST', '/v1/tasks', { text: 'one', workspace: h.ws })).body.id;
    await waiting(a);
    expect((await s.http('POST', `/v1/tasks/${a}/abort`)).body.phase).toBe('immediate');
    const stopped = await until('STOPPED', async () => {
      const b = (await s.http('GET', `/v1/tasks/${a}`)).body;
      return b.state === 'STOPPED' ? b : undefined;
    });
    expect(stopped.error.code).toBe('E_HALTED');
    const b = (await s.http('POST', '/v1/tasks', { text: 'two', workspace: h.ws })).body.id;
    await waiting(b);
    expect((await s.http('POST', '/v1/halt', { reason: 'test' })).status).toBe(200);
    const halted = await until('STOPPED', async () => {
      const t = (await s.http('GET', `/v1/tasks/${b}`)).body;
      return t.state === 'STOPPED' ? t : undefined;
    });
    expect(halted.error).toEqual({ code: 'E_HALTED', message: 'the kill switch stopped the task' });
  });
});

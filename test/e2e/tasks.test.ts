import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  type CliChild,
  executorDecision,
  type FakeLlmServer,
  runCli,
  startCli,
  startFakeLlmServer,
  startTestDaemon,
  tempDir,
  waitFor,
} from '@finger/testkit';

// `myfinger run` end to end: the built CLI, a real daemon, the fake OpenAI-compatible server
// scripted as a small coding task (read a file, write a patched version, run a check, done).

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

const decision = (d: Record<string, unknown>) => executorDecision(d, 'Working on it.');

const SCRIPT = [
  decision({ thought: 'look first', tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }] }),
  decision({
    thought: 'fix it',
    tool_calls: [{ tool: 'fs.write', args: { path: 'greeting.txt', content: 'hello world\n' } }],
  }),
  decision({ thought: 'check', tool_calls: [{ tool: 'shell.exec', args: { command: 'grep -q hello greeting.txt' } }] }),
  decision({ done: true, summary: 'greeting.txt fixed and checked' }),
];

const until = waitFor;

/** `myfinger run …` as a child in `cwd`, killed when the test ends. */
function startRun(args: string[], env: Record<string, string>, cwd: string): CliChild {
  const run = startCli(args, env, { cwd, timeout_ms: 60_000 });
  cleanup.push(async () => run.kill());
  return run;
}

/** Writes the config and policy of `home` with `root` (outside it) as the workspace root; returns the project in it. */
async function prepare(home: string, root: string, llm: FakeLlmServer): Promise<string> {
  const ws = join(root, 'proj');
  await mkdir(ws, { recursive: true });
  await writeFile(join(ws, 'greeting.txt'), 'helo world\n');
  await mkdir(join(home, 'config'), { recursive: true });
  const policy = { version: 1, rules: [{ id: 'hold-writes', tool: 'fs.write', level: 'APPROVE' }] };
  await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
  const config = {
    log: { level: 'silent' },
    workspace: { roots: [root] },
    llm: { provider: 'openai', base_url: llm.openaiBaseUrl, model: 'fake', max_retries: 0 },
  };
  await writeFile(join(home, 'config', 'config.json'), JSON.stringify(config));
  return ws;
}

describe('myfinger run (supervised task) end to end', { timeout: 90_000 }, () => {
  it('completes a small coding task: read and check AUTO, write held with a diff and approved from a second CLI, completion confirmed, audit verifies', async () => {
    const llm = await startFakeLlmServer({ script: SCRIPT });
    cleanup.push(() => llm.close());
    let ws = '';
    const d = await startTestDaemon({ prepareHome: async (home, root) => void (ws = await prepare(home, root, llm)) });
    cleanup.push(() => d.close());
    const env = { FINGER_HOME: d.home };
    const run = startRun(['run', 'fix the typo in greeting.txt'], env, ws);
    const approval = await until(
      'the held write',
      async () => (await d.http('GET', '/v1/approvals')).body.approvals[0],
    );
    expect(approval.tool_id).toBe('fs.write');
    await until('the diff on the run output', async () => (run.out().includes('+hello world') ? true : undefined));
    const approve = await runCli(['approve', approval.id], env);
    expect(approve.code).toBe(0);
    const id = await until('the completion question', async () => {
      const t = (await d.http('GET', '/v1/tasks')).body.tasks[0];
      return t?.question?.kind === 'confirm_done' ? (t.id as string) : undefined;
    });
    await until('the prompt on the run output', async () =>
      run.out().includes(`tasks answer ${id}`) ? true : undefined,
    );
    expect((await runCli(['tasks', 'answer', id, 'confirm'], env)).code).toBe(0);
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('── step 1 ──');
    expect(r.stdout).toContain('Working on it.');
    expect(r.stdout).not.toContain('"tool_calls"');
    expect(r.stdout).toContain('→ fs.read {"path":"greeting.txt"}');
    expect(r.stdout).toContain('→ shell.exec {"command":"grep -q hello greeting.txt"}');
    expect(r.stdout).toMatch(/→ fs\.read .*\n {2}← success \(AUTO\)/);
    expect(r.stdout).toMatch(/→ fs\.write [^\n]*\n {2}verdict APPROVE → hold/);
    expect(r.stdout).toMatch(/tokens: step \d+ in \/ \d+ out tokens/);
    expect(r.stdout).toContain('COMPLETED after 4 step(s)');
    expect(await readFile(join(ws, 'greeting.txt'), 'utf8')).toBe('hello world\n');
    // only the write was held: the read and the check ran AUTO
    const t = (await d.http('GET', `/v1/tasks/${id}`)).body;
    expect(t.steps.map((s: any) => s.calls.map((c: any) => `${c.tool}:${c.class}`))).toEqual([
      ['fs.read:success'],
      ['fs.write:success'],
      ['shell.exec:success'],
      [],
    ]);
    const audit = (await d.http('GET', `/v1/audit?limit=1000`)).body.entries as any[];
    const trail = audit
      .filter((e) => e.correlation_id === t.correlation_id && ['task.step', 'task.state', 'tool.call'].includes(e.type))
      .map((e) => (e.type === 'tool.call' ? e.tool : e.type === 'task.step' ? `step ${e.details.step}` : e.decision));
    // every step in order: each decision before the calls it made, the state changes around them
    expect(trail).toEqual([
      'RUNNING',
      'step 1',
      'fs.read',
      'step 2',
      'fs.write',
      'step 3',
      'shell.exec',
      'step 4',
      'WAITING_HUMAN',
      'COMPLETED',
    ]);
    const verify = await runCli(['audit', 'verify'], env);
    expect(verify.code).toBe(0);
    // the finished task's executor leaves the safety state (a counter per task would pile up for ever)
    const safety = async () =>
      JSON.parse(await readFile(join(d.home, 'state', 'safety.json'), 'utf8')) as {
        counters: Record<string, number>;
        breakers: Record<string, unknown>;
      };
    await until('the executor’s safety state gone', async () => {
      const s = await safety();
      return Object.keys(s.counters).some((k) => k.endsWith(`executor-${id}`)) ? undefined : true;
    });
    expect(Object.keys((await safety()).breakers)).not.toContain(`executor-${id}`);
  });

  it('SIGKILL mid-task: after a restart the task is listed INTERRUPTED and --resume finishes without repeating steps', async () => {
    const llm = await startFakeLlmServer({ script: SCRIPT });
    cleanup.push(() => llm.close());
    const home = await tempDir('finger-e2e-tasks-');
    const root = await tempDir('finger-e2e-tasks-ws-');
    cleanup.push(
      () => home.remove(),
      () => root.remove(),
    );
    const ws = await prepare(home.path, root.path, llm);
    const env = { FINGER_HOME: home.path, FINGER_PORT: '0' };
    expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
    cleanup.push(() => runCli(['daemon', 'stop'], env, 30_000));
    const first = await startRun(['run', '--detach', '--json', 'fix the typo in greeting.txt'], env, ws).done;
    expect(first.code).toBe(0);
    const id = JSON.parse(first.stdout).id as string;
    // the write is held: the task is mid-step 2, its read (step 1) done
    await until('the held write', async () => {
      const r = await runCli(['approvals', '--json'], env);
      const list = JSON.parse(r.stdout).approvals as any[];
      return list.length ? list : undefined;
    });
    const info = JSON.parse(await readFile(join(home.path, 'daemon.json'), 'utf8'));
    process.kill(info.pid, 'SIGKILL');
    await until('the daemon to die', async () => {
      try {
        process.kill(info.pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
    const listed = await runCli(['tasks', '--json'], env);
    expect(JSON.parse(listed.stdout).tasks.map((t: any) => [t.id, t.state])).toEqual([[id, 'INTERRUPTED']]);
    expect(llm.requests).toHaveLength(2);
    const run = startRun(['run', '--resume', id], env, ws);
    // fs.write is idempotent: re-sent without a question, held again by the firewall
    const approval = await until('the held write again', async () => {
      const r = await runCli(['approvals', '--json'], env);
      return (JSON.parse(r.stdout).approvals as any[])[0];
    });
    expect((await runCli(['approve', approval.id], env)).code).toBe(0);
    await until('the completion question', async () => (run.out().includes(`tasks answer ${id}`) ? true : undefined));
    expect((await runCli(['tasks', 'answer', id, 'confirm'], env)).code).toBe(0);
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('COMPLETED after 4 step(s)');
    // steps 1 and 2 were not asked again: exactly one model request per step
    expect(llm.requests).toHaveLength(4);
    const shown = JSON.parse((await runCli(['tasks', 'show', id, '--json'], env)).stdout);
    expect(shown.steps.map((s: any) => s.calls.map((c: any) => c.tool))).toEqual([
      ['fs.read'],
      ['fs.write'],
      ['shell.exec'],
      [],
    ]);
    expect(await readFile(join(ws, 'greeting.txt'), 'utf8')).toBe('hello world\n');
  });

  it('--json streams the task events as JSON lines; a task the person stops exits 8', async () => {
    const llm = await startFakeLlmServer({ script: [{ text: 'I think I should delete everything {"tool_calls": [' }] });
    cleanup.push(() => llm.close());
    let ws = '';
    const d = await startTestDaemon({ prepareHome: async (home, root) => void (ws = await prepare(home, root, llm)) });
    cleanup.push(() => d.close());
    const env = { FINGER_HOME: d.home };
    const run = startRun(['run', '--json', 'clean up'], env, ws);
    const id = await until('the question', async () => {
      const t = (await d.http('GET', '/v1/tasks')).body.tasks[0];
      return t?.question?.kind === 'human_required' ? (t.id as string) : undefined;
    });
    await until('the question on stdout', async () => (run.out().includes('WAITING_HUMAN') ? true : undefined));
    expect((await runCli(['tasks', 'answer', id, 'stop'], env)).code).toBe(0);
    const r = await run.done;
    expect(r.code).toBe(8);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; kind?: string; state?: string; task?: { state: string } });
    expect(lines.filter((l) => l.event === 'TASK_STATE' && l.kind === 'state').map((l) => l.state)).toEqual([
      'RUNNING',
      'WAITING_HUMAN',
      'STOPPED',
    ]);
    expect(lines.some((l) => l.kind === 'tool_call')).toBe(false);
    expect(lines.at(-1)).toMatchObject({ event: 'TASK_END', task: { id, state: 'STOPPED' } });
  });
});

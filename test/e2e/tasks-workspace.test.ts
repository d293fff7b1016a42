import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
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
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

// A task's workspace is the directory `myfinger run` was started in (§3.13), also outside the
// daemon's workspace.roots: the built CLI, a real daemon (default policy), the fake LLM server.

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

const decision = (d: Record<string, unknown>) => executorDecision(d);

const until = waitFor;

/** `myfinger run …` as a child in `cwd`, killed when the test ends. */
function startRun(args: string[], env: Record<string, string>, cwd: string): CliChild {
  const run = startCli(args, env, { cwd, timeout_ms: 60_000 });
  cleanup.push(async () => run.kill());
  return run;
}

/** A daemon with the default policy and workspace.roots — which do not hold the project dirs. */
async function daemon(llm: FakeLlmServer): Promise<TestDaemon> {
  const d = await startTestDaemon({
    prepareHome: async (home) => {
      await mkdir(join(home, 'config'), { recursive: true });
      const config = {
        log: { level: 'silent' },
        llm: { provider: 'openai', base_url: llm.openaiBaseUrl, model: 'fake', max_retries: 0 },
      };
      await writeFile(join(home, 'config', 'config.json'), JSON.stringify(config));
    },
  });
  cleanup.push(() => d.close());
  return d;
}

async function pending(d: TestDaemon, tool: string, principal: string): Promise<any> {
  return until(`a held ${tool} of ${principal}`, async () =>
    ((await d.http('GET', '/v1/approvals')).body.approvals as any[]).find(
      (a) => a.tool_id === tool && a.facts.principal.id === principal,
    ),
  );
}

const rules = (a: any): string[] => a.evaluation.matched_rules.map((r: any) => `${r.source}:${r.id}`);

describe('a task works in the directory myfinger run was started in', { timeout: 120_000 }, () => {
  it('reads, writes and runs there; outside (a sibling dir, a symlink) is held or refused; nobody else gets the root; undo restores', async () => {
    const proj = await tempDir('finger-proj-');
    const sib = await tempDir('finger-sibling-');
    cleanup.push(
      () => proj.remove(),
      () => sib.remove(),
    );
    const P = await realpath(proj.path);
    const S = await realpath(sib.path);
    await writeFile(join(P, 'greeting.txt'), 'helo world\n');
    await writeFile(join(S, 'secret.txt'), 'outside\n');
    await symlink(S, join(P, 'out'));
    const llm = await startFakeLlmServer({
      script: [
        decision({ thought: 'look', tool_calls: [{ tool: 'fs.read', args: { path: 'greeting.txt' } }] }),
        decision({
          thought: 'fix',
          tool_calls: [{ tool: 'fs.write', args: { path: 'greeting.txt', content: 'hello world\n' } }],
        }),
        decision({
          thought: 'check',
          tool_calls: [{ tool: 'shell.exec', args: { command: 'grep -q hello greeting.txt' } }],
        }),
        decision({
          thought: 'stray',
          tool_calls: [{ tool: 'fs.write', args: { path: join(S, 'evil.txt'), content: 'x' } }],
        }),
        decision({ thought: 'peek', tool_calls: [{ tool: 'fs.read', args: { path: 'out/secret.txt' } }] }),
        decision({ done: true, summary: 'fixed' }),
      ],
    });
    cleanup.push(() => llm.close());
    const d = await daemon(llm);
    // the configured root is the test daemon's workspace (beside FINGER_HOME): neither dir is inside it
    expect([d.home, d.workspace].some((r) => P.startsWith(r) || S.startsWith(r))).toBe(false);
    const env = { FINGER_HOME: d.home };
    const run = startRun(['run', 'fix the typo in greeting.txt'], env, P);
    const id = await until('the task', async () => (await d.http('GET', '/v1/tasks')).body.tasks[0]?.id as string);
    const me = `executor-${id}`;

    // outside the project: a write to the sibling dir is held (APPROVE by the sandbox) ...
    const stray = await pending(d, 'fs.write', me);
    expect(stray.level).toBe('APPROVE');
    expect(rules(stray)).toContain('builtin:sandbox.outside_write');
    // ... and approving it does not widen the roots: the fs module refuses it itself
    expect((await runCli(['approve', stray.id], env)).code).toBe(0);
    // a symlink inside the project that leads out is outside too: held (CONFIRM), rejected here
    const peek = await pending(d, 'fs.read', me);
    expect(peek.level).toBe('CONFIRM');
    expect(rules(peek)).toContain('builtin:sandbox.outside_read');
    expect(peek.evaluation.reasons.join(' ')).toContain(join(S, 'secret.txt'));
    expect((await runCli(['reject', peek.id, '--reason', 'stay in the project'], env)).code).toBe(0);

    await until('the completion question', async () => {
      const t = (await d.http('GET', `/v1/tasks/${id}`)).body;
      return t.question?.kind === 'confirm_done' ? true : undefined;
    });
    // while the task runs, its root is its own: an agent token of the same name is held as outside ...
    const twin = await d.token('agent:executor', me);
    const asTwin = d.http('POST', '/v1/tools/fs.read/run', { args: { path: join(P, 'greeting.txt') } }, twin);
    const held = await pending(d, 'fs.read', me);
    expect(held.id).not.toBe(peek.id);
    expect(rules(held)).toContain('builtin:sandbox.outside_read');
    await d.http('POST', `/v1/approvals/${held.id}`, { decision: 'reject' });
    expect((await asTwin).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    // ... and a person's direct run (holds waived) still meets the module's own root check
    const direct = await d.http('POST', '/v1/tools/fs.read/run', { args: { path: join(P, 'greeting.txt') } });
    expect(direct).toMatchObject({ status: 403, body: { error: { code: 'E_FORBIDDEN' } } });

    expect((await runCli(['tasks', 'answer', id, 'confirm'], env)).code).toBe(0);
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('COMPLETED after 6 step(s)');
    expect(await readFile(join(P, 'greeting.txt'), 'utf8')).toBe('hello world\n');
    await expect(readFile(join(S, 'evil.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    const t = (await d.http('GET', `/v1/tasks/${id}`)).body;
    expect(t.workspace).toBe(P);
    expect(
      t.steps.map((s: any) => s.calls.map((c: any) => `${c.tool}:${c.class}${c.error ? `:${c.error.code}` : ''}`)),
    ).toEqual([
      ['fs.read:success'],
      ['fs.write:success'],
      ['shell.exec:success'],
      ['fs.write:failure:E_FORBIDDEN'],
      ['fs.read:failure:E_REJECTED_BY_HUMAN'],
      [],
    ]);

    // the write in the project was backed up: undo restores it (the backup remembers the task's root)
    const backups = (await d.http('GET', '/v1/backups')).body.backups as any[];
    const mine = backups.find((b) => b.path === join(P, 'greeting.txt'));
    expect(mine).toBeDefined();
    const undo = await d.http('POST', '/v1/undo', { id: mine.id });
    expect(undo.status).toBe(200);
    expect(await readFile(join(P, 'greeting.txt'), 'utf8')).toBe('helo world\n');
  });

  it('refuses FINGER_HOME, what is inside it, / and the home directory as a workspace: E_FORBIDDEN with the reason', async () => {
    const llm = await startFakeLlmServer({ script: [] });
    cleanup.push(() => llm.close());
    const d = await daemon(llm);
    const env = { FINGER_HOME: d.home };
    await mkdir(join(d.home, 'state'), { recursive: true });
    for (const [cwd, why] of [
      [d.home, 'it is FINGER_HOME'],
      [join(d.home, 'state'), 'inside FINGER_HOME'],
      ['/', 'the root directory'],
      ...(homedir() !== '/' ? ([[homedir(), 'your home directory']] as const) : []),
    ] as const) {
      const r = await startRun(['run', 'anything'], env, cwd).done;
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('E_FORBIDDEN');
      expect(r.stderr).toContain(why);
    }
    expect((await d.http('GET', '/v1/tasks?all=true')).body.tasks).toEqual([]);
    expect(llm.requests).toHaveLength(0);
  });
});

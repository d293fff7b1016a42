// `myfinger hook install|uninstall|status` and the doctor's hooks lines, with the built CLI against
// a real daemon: the settings files of each agent are merged (others' entries kept), idempotent,
// backed up, fail closed where the agent can, and the installed command answers a real payload.

import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, tempDir, type TestDaemon } from '@finger/testkit';

let d: TestDaemon;
let project: Awaited<ReturnType<typeof tempDir>>;
let userHome: Awaited<ReturnType<typeof tempDir>>;
const env = (): Record<string, string> => ({
  FINGER_URL: d.url,
  FINGER_TOKEN: d.adminToken,
  FINGER_HOME: d.home,
  HOME: userHome.path,
});

beforeAll(async () => {
  d = await startTestDaemon();
  project = await tempDir('finger-hook-project-');
  userHome = await tempDir('finger-hook-user-');
}, 60_000);

afterAll(async () => {
  await d?.close();
  await project?.[Symbol.asyncDispose]();
  await userHome?.[Symbol.asyncDispose]();
});

const readJson = async (p: string): Promise<any> => JSON.parse(await readFile(p, 'utf8'));

/** Runs a command line the way the agent's hook runner does (sh -c), payload on stdin. */
function runInstalled(command: string, payload: unknown): Promise<{ code: number | null; stdout: string }> {
  const child = spawn('/bin/sh', ['-c', command], {
    env: { PATH: process.env.PATH ?? '', HOME: userHome.path, FINGER_URL: d.url, FINGER_HOME: d.home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (b) => (stdout += String(b)));
  child.stdin.end(JSON.stringify(payload));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout })));
}

describe('myfinger hook install', () => {
  it('claude --project: merges into .claude/settings.json with onFailure block, keeps other hooks, is idempotent', async () => {
    const file = path.join(project.path, '.claude', 'settings.json');
    await runCli(['hook', 'status', '--dir', project.path], env());
    const other = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo other' }] };
    await (await import('node:fs/promises')).mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ permissions: { allow: ['Read'] }, hooks: { PreToolUse: [other] } }));
    const r = await runCli(['hook', 'install', 'claude', '--project', '--dir', project.path, '--json'], env());
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      file,
      changed: true,
      backup: `${file}.finger-backup`,
      wiring: { agent: 'claude', scope: 'project', wired: true, fail_closed: true, post: true },
    });
    const s = await readJson(file);
    expect(s.permissions).toEqual({ allow: ['Read'] });
    expect(s.hooks.PreToolUse[0]).toEqual(other);
    expect(s.hooks.PreToolUse[1]).toMatchObject({
      matcher: '*',
      hooks: [{ type: 'command', timeout: 600, onFailure: 'block' }],
    });
    expect(s.hooks.PostToolUse).toHaveLength(1);
    const again = await runCli(['hook', 'install', 'claude', '--project', '--dir', project.path, '--json'], env());
    expect(JSON.parse(again.stdout).changed).toBe(false);
    expect((await readJson(file)).hooks.PreToolUse).toHaveLength(2);
    // the installed command answers a real payload with the minted agent:delegated token
    const command = s.hooks.PreToolUse[1].hooks[0].command as string;
    const payload = JSON.parse(
      await readFile(path.resolve(import.meta.dirname, '../fixtures/hooks/claude-pre-bash.json'), 'utf8'),
    );
    const answer = await runInstalled(command, {
      ...payload,
      cwd: d.workspace,
      tool_input: { command: 'cat ~/.finger/token' },
    });
    expect(answer.code).toBe(0);
    expect(JSON.parse(answer.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('cursor --user: failClosed true; codex and copilot wired but not fail-closed; doctor and status say so', async () => {
    for (const agent of ['cursor', 'codex', 'copilot'])
      expect((await runCli(['hook', 'install', agent, '--user'], env())).code).toBe(0);
    const cursor = await readJson(path.join(userHome.path, '.cursor', 'hooks.json'));
    expect(cursor.version).toBe(1);
    expect(cursor.hooks.preToolUse[0]).toMatchObject({ timeout: 60, failClosed: true });
    const codex = await readJson(path.join(userHome.path, '.codex', 'hooks.json'));
    expect(codex.hooks.PreToolUse[0]).toMatchObject({ matcher: '', hooks: [{ type: 'command', timeout: 600 }] });
    const copilot = await readJson(path.join(userHome.path, '.copilot', 'hooks', 'finger.json'));
    expect(copilot.hooks.preToolUse[0]).toMatchObject({ type: 'command', timeoutSec: 60 });
    const status = JSON.parse((await runCli(['hook', 'status', '--dir', project.path, '--json'], env())).stdout);
    const byAgent = Object.fromEntries(status.wired.map((w: any) => [`${w.agent}/${w.scope}`, w.fail_closed]));
    expect(byAgent).toEqual({
      'claude/project': true,
      'cursor/user': true,
      'codex/user': false,
      'copilot/user': false,
    });
    const run = await runCli(['doctor', '--json'], env());
    const doctor = JSON.parse(run.stdout);
    // an agent that cannot fail closed is a warning, and warnings do not fail doctor (exit 0 unless a check fails)
    expect(doctor.ok).toBe(doctor.checks.every((c: any) => c.status !== 'fail'));
    expect(run.code).toBe(doctor.ok ? 0 : 1);
    expect(doctor.checks.find((c: any) => c.name === 'hooks' && c.detail.startsWith('codex')).detail).toMatch(
      /; waits up to 240 s for a person \(hooks\.hold_ms\.codex\)$/,
    );
    const hooks = doctor.checks
      .filter((c: any) => c.name === 'hooks')
      .map((c: any) => [c.status, c.detail.split(' ')[0]]);
    expect(hooks).toEqual(
      expect.arrayContaining([
        ['ok', 'cursor'],
        ['warn', 'codex'],
        ['warn', 'copilot'],
      ]),
    );
  });

  it('uninstall removes only finger’s entries', async () => {
    const file = path.join(project.path, '.claude', 'settings.json');
    expect((await runCli(['hook', 'uninstall', 'claude', '--project', '--dir', project.path], env())).code).toBe(0);
    const s = await readJson(file);
    expect(s).toEqual({
      permissions: { allow: ['Read'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo other' }] }] },
    });
    const cursorFile = path.join(userHome.path, '.cursor', 'hooks.json');
    expect((await runCli(['hook', 'uninstall', 'cursor', '--user'], env())).code).toBe(0);
    expect(await readJson(cursorFile)).toEqual({ version: 1 });
  });

  it('an unknown agent is a usage error', async () => {
    const r = await runCli(['hook', 'install', 'vim', '--json'], env());
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('E_USAGE');
  });
});

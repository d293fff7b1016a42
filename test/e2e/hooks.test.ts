// Delegated mode (issue 24): `myfinger hook <agent>` as the agents run it — the real hook process
// (the built CLI's lean entry) fed the recorded payloads of test/fixtures/hooks/, against a real
// daemon. Per agent: allow, deny, hold→approve→allow, hold→pending→retry after approval→allow
// exactly once, daemon down → deny with exit 2, malformed stdin → deny with exit 2, and a hook
// killed while it waits never leaves an approval that later lets something else through.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MYFINGER_BIN, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/hooks');
const fixture = (name: string): Record<string, any> =>
  JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, any>;

type Agent = 'claude' | 'codex' | 'cursor' | 'copilot';

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built hook with `stdin`; `onStart` gets the child (to kill it). */
function runHook(
  agent: Agent,
  stdin: string,
  env: Record<string, string>,
  args: string[] = [],
  onStart?: (kill: () => void) => void,
): Promise<HookRun> {
  const child = spawn(process.execPath, [MYFINGER_BIN, 'hook', agent, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
  onStart?.(() => child.kill('SIGKILL'));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The agent's recorded payload for a shell command `command` run in `cwd`. */
function shellPayload(agent: Agent, command: string, cwd: string): Record<string, any> {
  switch (agent) {
    case 'claude': {
      const p = fixture('claude-pre-bash.json');
      return { ...p, cwd, tool_input: { ...p.tool_input, command } };
    }
    case 'codex': {
      const p = fixture('codex-pre-bash.json');
      return { ...p, cwd, tool_input: { ...p.tool_input, command } };
    }
    case 'cursor': {
      const p = fixture('cursor-pre-shell.json');
      return { ...p, workspace_roots: [cwd], tool_input: { command, cwd } };
    }
    case 'copilot': {
      const p = fixture('copilot-pre-bash.json');
      return { ...p, cwd, toolArgs: JSON.stringify({ ...JSON.parse(p.toolArgs as string), command }) };
    }
  }
}

/** The decision word an answer carries ('' = no opinion: the agent's own rules decide). */
function decisionOf(agent: Agent, stdout: string): { decision: string; reason: string; updated?: any } {
  if (stdout.trim() === '') return { decision: '', reason: '' };
  const j = JSON.parse(stdout) as Record<string, any>;
  if (agent === 'cursor') return { decision: j.permission, reason: j.agent_message ?? '' };
  if (agent === 'copilot') return { decision: j.permissionDecision, reason: j.permissionDecisionReason ?? '' };
  const h = j.hookSpecificOutput as Record<string, any>;
  expect(h.hookEventName).toBe('PreToolUse');
  return { decision: h.permissionDecision, reason: h.permissionDecisionReason ?? '', updated: h.updatedInput };
}

/** What an agent answers for an AUTO call: no opinion, except Cursor's fail-closed hook, which must allow. */
const AUTO_ANSWER: Record<Agent, string> = { claude: '', codex: '', cursor: 'allow', copilot: '' };
/** What an agent answers once a person approved: allow where the agent takes it (Codex: no opinion lets it run). */
const APPROVED_ANSWER: Record<Agent, string> = { claude: 'allow', codex: '', cursor: 'allow', copilot: 'allow' };

let d: TestDaemon;
let token: string;
let ws: string;
const env = (): Record<string, string> => ({ FINGER_URL: d.url, FINGER_HOOK_TOKEN: token, FINGER_HOME: d.home });

async function pendingFor(command: string): Promise<{ id: string; args: any }> {
  return waitFor(`an approval for ${command}`, async () => {
    const r = await d.http<{ approvals: { id: string; args: any }[] }>('GET', '/v1/approvals');
    return r.body.approvals.find((a) => a.args?.command === command);
  });
}

async function answer(id: string, body: Record<string, unknown>): Promise<void> {
  const r = await d.http('POST', `/v1/approvals/${id}`, body);
  expect(r.status).toBe(200);
}

beforeAll(async () => {
  d = await startTestDaemon();
  ws = d.workspace;
  await mkdir(path.join(ws, 'build'), { recursive: true });
  token = await d.token('agent:delegated', 'hook-test');
}, 60_000);

afterAll(async () => {
  await d?.close();
});

describe.each(['claude', 'codex', 'cursor', 'copilot'] as const)('myfinger hook %s', (agent) => {
  it('allows an AUTO call (ls) and audits it as a delegated tool.call', async () => {
    const r = await runHook(agent, JSON.stringify(shellPayload(agent, 'ls', ws)), env());
    expect(r.code).toBe(0);
    expect(decisionOf(agent, r.stdout).decision).toBe(AUTO_ANSWER[agent]);
    const audit = await d.http<{ entries: any[] }>('GET', '/v1/audit?type=tool.call&limit=10000');
    const mine = audit.body.entries.filter((e) => e.details?.delegated === true && e.details?.agent === agent);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.at(-1)).toMatchObject({
      tool: 'shell.exec',
      decision: 'allow',
      actor: { kind: 'agent', id: 'hook-test' },
      details: { delegated: true, agent, cwd: ws },
    });
  });

  it('denies a DENY call (finger’s own token) with the reason, exit 0', async () => {
    const r = await runHook(agent, JSON.stringify(shellPayload(agent, 'cat ~/.finger/token', ws)), env());
    expect(r.code).toBe(0);
    const a = decisionOf(agent, r.stdout);
    expect(a.decision).toBe('deny');
    expect(a.reason).toMatch(/finger's own/);
  });

  it('hold → a person approves while the hook waits → allow', async () => {
    const command = `rm -rf build/${agent}-wait`;
    const run = runHook(agent, JSON.stringify(shellPayload(agent, command, ws)), env(), ['--hold-ms', '30000']);
    const p = await pendingFor(command);
    await answer(p.id, { decision: 'approve' });
    const r = await run;
    expect(r.code).toBe(0);
    expect(decisionOf(agent, r.stdout).decision).toBe(APPROVED_ANSWER[agent]);
  });

  it('hold → pending answer → approved later → the retry of the same call is allowed exactly once', async () => {
    const command = `rm -rf build/${agent}-retry`;
    const payload = JSON.stringify(shellPayload(agent, command, ws));
    const first = await runHook(agent, payload, env(), ['--hold-ms', '0', '--pending', 'deny']);
    expect(first.code).toBe(0);
    const a = decisionOf(agent, first.stdout);
    expect(a.decision).toBe('deny');
    const p = await pendingFor(command);
    expect(a.reason).toContain(`held for a person as ${p.id}: ask them to approve (\`myfinger approve ${p.id}\` or `);
    expect(a.reason).toContain(`/ui/approvals/${p.id}), then retry`);
    await answer(p.id, { decision: 'approve' });
    // the answer is kept for the retry once the gate has settled it
    const retry = await waitFor('the approved retry', async () => {
      const r = await runHook(agent, payload, env(), ['--hold-ms', '0', '--pending', 'deny']);
      return decisionOf(agent, r.stdout).decision === APPROVED_ANSWER[agent] ? r : undefined;
    });
    expect(retry.code).toBe(0);
    // single use: the next identical call is held again (a new approval)
    const again = await runHook(agent, payload, env(), ['--hold-ms', '0', '--pending', 'deny']);
    expect(decisionOf(agent, again.stdout).decision).toBe('deny');
    const next = await pendingFor(command);
    expect(next.id).not.toBe(p.id);
    await answer(next.id, { decision: 'reject', reason: 'cleanup' });
  });

  it('a rejection while the hook waits → deny with the person’s reason', async () => {
    const command = `rm -rf build/${agent}-reject`;
    const run = runHook(agent, JSON.stringify(shellPayload(agent, command, ws)), env(), ['--hold-ms', '30000']);
    const p = await pendingFor(command);
    await answer(p.id, { decision: 'reject', reason: 'not today' });
    const r = await run;
    expect(r.code).toBe(0);
    expect(decisionOf(agent, r.stdout)).toMatchObject({ decision: 'deny', reason: 'not today' });
  });

  it('daemon unreachable → an explicit deny and exit 2', async () => {
    const r = await runHook(agent, JSON.stringify(shellPayload(agent, 'ls', ws)), {
      ...env(),
      FINGER_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(2);
    expect(decisionOf(agent, r.stdout).decision).toBe('deny');
    expect(r.stderr).toMatch(/unreachable/);
  });

  it('malformed stdin → an explicit deny and exit 2', async () => {
    for (const bad of ['{not json', '[]', '{"hook_event_name":"PreToolUse"}']) {
      const r = await runHook(agent, bad, env());
      expect(r.code).toBe(2);
      expect(decisionOf(agent, r.stdout).decision).toBe('deny');
    }
  });

  it('a hook killed while it waits leaves no approval that lets a different call through', async () => {
    const command = `rm -rf build/${agent}-killed`;
    let kill!: () => void;
    const run = runHook(agent, JSON.stringify(shellPayload(agent, command, ws)), env(), ['--hold-ms', '60000'], (k) => {
      kill = k;
    });
    const p = await pendingFor(command);
    kill();
    expect((await run).code).toBe(null);
    await answer(p.id, { decision: 'approve' });
    // a different call is judged on its own: held, not allowed by the left-over approval
    const other = `rm -rf build/${agent}-other`;
    const r = await runHook(agent, JSON.stringify(shellPayload(agent, other, ws)), env(), [
      '--hold-ms',
      '0',
      '--pending',
      'deny',
    ]);
    expect(decisionOf(agent, r.stdout).decision).toBe('deny');
    const held = await pendingFor(other);
    await answer(held.id, { decision: 'reject', reason: 'cleanup' });
  });
});

describe('myfinger hook claude: edited input', () => {
  it('a person approves an edited command → allow with updatedInput', async () => {
    const command = 'rm -rf build/claude-edit';
    const run = runHook('claude', JSON.stringify(shellPayload('claude', command, ws)), env(), ['--hold-ms', '30000']);
    const p = await pendingFor(command);
    await answer(p.id, { decision: 'approve', args: { ...p.args, command: 'rm -rf build/claude-edit/tmp' } });
    const r = await run;
    expect(r.code).toBe(0);
    const a = decisionOf('claude', r.stdout);
    expect(a.decision).toBe('allow');
    expect(a.updated).toEqual({
      ...fixture('claude-pre-bash.json').tool_input,
      command: 'rm -rf build/claude-edit/tmp',
    });
  });

  it('pending is `ask` by default for Claude Code', async () => {
    const command = 'rm -rf build/claude-ask';
    const r = await runHook('claude', JSON.stringify(shellPayload('claude', command, ws)), env(), ['--hold-ms', '0']);
    expect(r.code).toBe(0);
    const a = decisionOf('claude', r.stdout);
    expect(a.decision).toBe('ask');
    expect(a.reason).toMatch(/^finger: held for a person as /);
    const p = await pendingFor(command);
    await answer(p.id, { decision: 'reject', reason: 'cleanup' });
  });

  it('a command the workspace-write sandbox would run at NOTIFY is not let through unseen for a delegated agent', async () => {
    const r = await runHook('claude', JSON.stringify(shellPayload('claude', 'touch notes.txt', ws)), env(), [
      '--hold-ms',
      '0',
      '--pending',
      'deny',
    ]);
    expect(decisionOf('claude', r.stdout).decision).toBe('deny');
    const p = await pendingFor('touch notes.txt');
    await answer(p.id, { decision: 'reject', reason: 'cleanup' });
  });
});

describe('post events (PostToolUse)', () => {
  it('a post matched to its pre decision is recorded; one with no pre decision is flagged', async () => {
    const pre = { ...fixture('claude-pre-bash.json'), cwd: ws, tool_use_id: 'toolu_matched' };
    expect((await runHook('claude', JSON.stringify(pre), env())).code).toBe(0);
    const post = { ...fixture('claude-post-bash.json'), cwd: ws, tool_use_id: 'toolu_matched' };
    expect((await runHook('claude', JSON.stringify(post), env())).code).toBe(0);
    const stray = { ...fixture('claude-post-bash.json'), cwd: ws, tool_use_id: 'toolu_never_asked' };
    expect((await runHook('claude', JSON.stringify(stray), env())).code).toBe(0);
    const audit = await d.http<{ entries: any[] }>('GET', '/v1/audit?type=tool.result&limit=10000');
    const byUse = (id: string) => audit.body.entries.find((e) => e.details?.tool_use_id === id);
    expect(byUse('toolu_matched')).toMatchObject({ decision: 'ran', details: { delegated: true, ok: true } });
    expect(byUse('toolu_matched').details.flag).toBeUndefined();
    expect(byUse('toolu_never_asked')).toMatchObject({ details: { flag: 'no_pre_decision', delegated: true } });
  });
});

// Delegated mode (issue 24 items 1–2), the gaps of the first hooks pass, through the real hook
// process (the built CLI's lean entry) and a real daemon: a file an agent is allowed to write is
// backed up at the pre event in the fs module's undo store, and `myfinger undo <id>` restores it;
// the role grants of finger's own calls apply to delegated calls (E_FORBIDDEN); config
// hooks.hold_ms bounds the wait, and the hook's --hold-ms wins only when lower; and the bin shim
// without a built CLI still answers with an explicit deny and exit 2.

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MYFINGER_BIN, runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/hooks');
const fixture = (name: string): Record<string, any> =>
  JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, any>;

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin` (the built shim by default) as `hook <agent> …args` with `stdin`. */
function runHook(
  agent: string,
  stdin: string,
  env: Record<string, string>,
  args: string[] = [],
  bin = MYFINGER_BIN,
): Promise<HookRun> {
  const child = spawn(process.execPath, [bin, 'hook', agent, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

const claudeOut = (stdout: string): Record<string, any> =>
  (JSON.parse(stdout) as { hookSpecificOutput: Record<string, any> }).hookSpecificOutput;

let d: TestDaemon;
let token: string;
let ws: string;
const env = (): Record<string, string> => ({ FINGER_URL: d.url, FINGER_HOOK_TOKEN: token, FINGER_HOME: d.home });

beforeAll(async () => {
  // Claude Code's hook waits at most 0 ms for a person here (config), the others their defaults
  d = await startTestDaemon({
    config: {
      log: { level: 'silent' },
      hooks: { hold_ms: { claude: 0, codex: 240_000, cursor: 45_000, copilot: 45_000 } },
    },
  });
  ws = d.workspace;
  token = await d.token('agent:delegated', 'hook-undo');
}, 60_000);

afterAll(async () => {
  await d?.close();
});

describe('a delegated file write is backed up at the pre event (item 1)', () => {
  it('Claude Write over an existing file: the hook allows it, the agent writes, myfinger undo <id> restores it', async () => {
    const file = path.join(ws, 'notes.txt');
    writeFileSync(file, 'before λ\r\n');
    const p = fixture('claude-pre-write.json');
    const pre = { ...p, cwd: ws, tool_input: { file_path: file, content: 'after\n' }, tool_use_id: 'toolu_undo' };
    const r = await runHook('claude', JSON.stringify(pre), env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // a write in the workspace is NOTIFY: no opinion (Claude Code's own rules decide)
    expect(r.stdout).toBe('');
    // the agent then writes the file itself
    writeFileSync(file, 'after\n');
    const list = await runCli(['undo', '--list', '--json'], { FINGER_HOME: d.home });
    expect(list.code).toBe(0);
    const backups = (JSON.parse(list.stdout) as { backups: Record<string, any>[] }).backups;
    const b = backups.find((x) => x.path === file);
    expect(b).toMatchObject({ kind: 'write', existed: true, principal: 'agent:hook-undo' });
    // the undo restores byte for byte
    const undo = await runCli(['undo', b!.id as string], { FINGER_HOME: d.home });
    expect(undo.stderr).toBe('');
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain(`restored ${file} (11 bytes) from backup ${b!.id as string}`);
    expect(readFileSync(file, 'utf8')).toBe('before λ\r\n');
  });

  it('the verdict names the backup; a write outside the workspace is judged without one (nothing to undo there)', async () => {
    const file = path.join(ws, 'new.txt');
    const call = { agent: 'claude', tool: 'fs.write', args: { path: file, content: 'x' }, session_id: 's', cwd: ws };
    const v = await d.http<Record<string, any>>('POST', '/v1/hooks/evaluate', call, token);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ outcome: 'allow', backup_id: expect.any(String) });
    const backups = await d.http<{ backups: Record<string, any>[] }>('GET', '/v1/backups');
    expect(backups.body.backups.find((b) => b.id === v.body.backup_id)).toMatchObject({
      path: file,
      existed: false,
      kind: 'write',
    });
    const outside = mkdtempSync(path.join(tmpdir(), 'finger-hook-outside-'));
    try {
      const far = { ...call, args: { path: path.join(outside, 'x.txt'), content: 'x' } };
      const o = await d.http<Record<string, any>>('POST', '/v1/hooks/evaluate', { ...far, hold_ms: 0 }, token);
      expect(o.status).toBe(200);
      expect(o.body.backup_id).toBeUndefined();
      if (o.body.outcome === 'pending') {
        const id = o.body.approval_id as string;
        expect((await d.http('POST', `/v1/approvals/${id}`, { decision: 'reject', reason: 'cleanup' })).status).toBe(
          200,
        );
      }
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('a delegated edit, and a file the store cannot hold', () => {
  it('Claude Edit → fs.patch: backed up as a patch, restored by undo', async () => {
    const file = path.join(ws, 'app.ts');
    writeFileSync(file, 'const port = 3000;\n');
    const p = fixture('claude-pre-edit.json');
    const pre = { ...p, cwd: ws, tool_input: { ...p.tool_input, file_path: file }, tool_use_id: 'toolu_edit' };
    const r = await runHook('claude', JSON.stringify(pre), env());
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    writeFileSync(file, 'const port = 8080;\n');
    const backups = await d.http<{ backups: Record<string, any>[] }>('GET', '/v1/backups');
    const b = backups.body.backups.find((x) => x.path === file)!;
    expect(b).toMatchObject({ kind: 'patch', existed: true, principal: 'agent:hook-undo' });
    expect((await d.http('POST', '/v1/undo', { id: b.id })).status).toBe(200);
    expect(readFileSync(file, 'utf8')).toBe('const port = 3000;\n');
  });

  it('a file over the store’s size bound is refused with E_INVALID_ARGS (it could not be undone)', async () => {
    const small = await startTestDaemon({
      config: { log: { level: 'silent' }, modules: { settings: { fs: { max_backup_bytes: 8 } } } },
    });
    try {
      const t = await small.token('agent:delegated', 'hook-small');
      const file = path.join(small.workspace, 'big.txt');
      writeFileSync(file, 'more than eight bytes\n');
      const call = { agent: 'codex', tool: 'fs.write', args: { path: file, content: 'x' }, session_id: 's' };
      const v = await small.http<Record<string, any>>('POST', '/v1/hooks/evaluate', call, t);
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ outcome: 'deny', code: 'E_INVALID_ARGS' });
      expect(v.body.reason).toMatch(
        new RegExp(`^finger could not back up ${file} before the change, so it is refused: `),
      );
      expect(readFileSync(file, 'utf8')).toBe('more than eight bytes\n');
    } finally {
      await small.close();
    }
  }, 60_000);
});

describe('role grants apply to delegated calls (item 2)', () => {
  it('a delegated role without shell.* is denied Bash with E_FORBIDDEN, and may still read', async () => {
    const revoke = await d.http('DELETE', '/v1/grants', { role: 'delegated', tool: 'shell.*' });
    expect(revoke.status).toBe(200);
    try {
      const call = { agent: 'claude', tool: 'shell.exec', args: { command: 'ls', cwd: ws }, session_id: 's', cwd: ws };
      const v = await d.http<Record<string, any>>('POST', '/v1/hooks/evaluate', call, token);
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({
        outcome: 'deny',
        level: 'DENY',
        code: 'E_FORBIDDEN',
        reason: 'role "delegated" has no grant for "shell.exec"',
      });
      // through the hook: an explicit deny with the reason, and the audit names the code
      const pre = { ...fixture('claude-pre-bash.json'), cwd: ws, tool_input: { command: 'ls' } };
      const r = await runHook('claude', JSON.stringify(pre), env());
      expect(r.code).toBe(0);
      expect(claudeOut(r.stdout)).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: 'role "delegated" has no grant for "shell.exec"',
      });
      const audit = await d.http<{ entries: any[] }>('GET', '/v1/audit?type=tool.call&limit=10000');
      expect(audit.body.entries.filter((e) => e.details?.code === 'E_FORBIDDEN').at(-1)).toMatchObject({
        tool: 'shell.exec',
        decision: 'deny',
        actor: { kind: 'agent', id: 'hook-undo' },
        details: { delegated: true, layer: 'permission', role: 'delegated' },
      });
      const read = { ...call, tool: 'fs.read', args: { path: path.join(ws, 'notes.txt') } };
      const ok = await d.http<Record<string, any>>('POST', '/v1/hooks/evaluate', read, token);
      expect(ok.body.outcome).toBe('allow');
    } finally {
      expect((await d.http('POST', '/v1/grants', { role: 'delegated', tool: 'shell.*' })).status).toBe(201);
    }
  });
});

describe('config hooks.hold_ms (item 3)', () => {
  it('bounds the wait of an agent: a longer --hold-ms does not extend it, so the hold is pending at once', async () => {
    const command = 'rm -rf build/hold-config';
    const pre = { ...fixture('claude-pre-bash.json'), cwd: ws, tool_input: { command } };
    const r = await runHook('claude', JSON.stringify(pre), env(), ['--hold-ms', '30000']);
    expect(r.code).toBe(0);
    expect(claudeOut(r.stdout)).toMatchObject({ permissionDecision: 'ask' });
    const p = await waitFor('the approval', async () => {
      const a = await d.http<{ approvals: { id: string; args: any }[] }>('GET', '/v1/approvals');
      return a.body.approvals.find((x) => x.args?.command === command);
    });
    expect(claudeOut(r.stdout).permissionDecisionReason).toContain(`held for a person as ${p.id}`);
    expect((await d.http('POST', `/v1/approvals/${p.id}`, { decision: 'reject', reason: 'cleanup' })).status).toBe(200);
  });

  it('a lower --hold-ms wins over a longer configured wait (Cursor: 45 s by default)', async () => {
    const command = 'rm -rf build/hold-flag';
    const pre = { ...fixture('cursor-pre-shell.json'), workspace_roots: [ws], tool_input: { command, cwd: ws } };
    const r = await runHook('cursor', JSON.stringify(pre), env(), ['--hold-ms', '0']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ permission: 'deny' });
    expect((JSON.parse(r.stdout) as { agent_message: string }).agent_message).toMatch(/^held for a person as /);
    const a = await d.http<{ approvals: { id: string; args: any }[] }>('GET', '/v1/approvals');
    const p = a.body.approvals.find((x) => x.args?.command === command)!;
    expect((await d.http('POST', `/v1/approvals/${p.id}`, { decision: 'reject', reason: 'cleanup' })).status).toBe(200);
  });

  it('a value above the agent’s cap is refused at start (E_INVALID_ARGS names the key)', async () => {
    const { resolveConfig } = await import('@finger/daemon');
    expect(() => resolveConfig({ hooks: { hold_ms: { cursor: 60_000 } } })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS', message: expect.stringContaining('$.hooks.hold_ms.cursor') }),
    );
  });
});

describe('the bin shim without a built CLI (item 4)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'finger-unbuilt-'));
  const bin = path.join(dir, 'bin', 'myfinger.js');
  beforeAll(() => {
    mkdirSync(path.dirname(bin));
    copyFileSync(MYFINGER_BIN, bin);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const payload = JSON.stringify(fixture('codex-pre-bash.json'));

  it.each([
    ['claude', (o: any) => o.hookSpecificOutput.permissionDecision],
    ['codex', (o: any) => o.hookSpecificOutput.permissionDecision],
    ['cursor', (o: any) => o.permission],
    ['copilot', (o: any) => o.permissionDecision],
  ] as const)('hook %s: an explicit deny in the agent’s format and exit 2', async (agent, decision) => {
    const r = await runHook(agent, payload, {}, [], bin);
    expect(r.code).toBe(2);
    expect(decision(JSON.parse(r.stdout))).toBe('deny');
    expect(r.stderr).toMatch(/^finger: myfinger is not built/);
  });

  it('any other command still says it is not built, exit 1', async () => {
    const child = spawn(process.execPath, [bin, 'status'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/myfinger is not built/);
  });
});

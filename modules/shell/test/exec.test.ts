import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { InProcessRuntime } from '@finger/hub';

import { groupGone, loadShell, makeCtx, processGone, rejectionOf, tempWorkspace, until } from './helpers.js';

let dir: string;
let ws: string;
let rt: InProcessRuntime;

beforeEach(async () => {
  ({ dir, ws } = await tempWorkspace());
  rt = await loadShell({ workspace_roots: [ws], kill_grace_ms: 300 });
});

afterEach(async () => {
  await rt.close();
  delete process.env.FAKE_API_TOKEN;
  delete process.env.FAKE_DB_PASSWORD;
  await fs.rm(dir, { recursive: true, force: true });
});

const exec = (args: unknown, ctx = makeCtx()) => rt.invoke('exec', args, ctx) as Promise<any>;

describe('shell.exec', () => {
  it('runs argv directly, without a shell', async () => {
    const r = await exec({ argv: ['printf', '%s|', 'a b', '$HOME', '*'] });
    expect({ ...r, duration_ms: 0 }).toEqual({
      exit_code: 0,
      signal: null,
      timed_out: false,
      cancelled: false,
      stdout: 'a b|$HOME|*|',
      stderr: '',
      stdout_bytes: 12,
      stderr_bytes: 0,
      truncated: { stdout: false, stderr: false },
      duration_ms: 0,
    });
  });

  it('runs a command string through /bin/sh -c and reports a non-zero exit as a result', async () => {
    const r = await exec({ command: 'echo "$((1+2))"; echo oops >&2; exit 3' });
    expect([r.exit_code, r.signal, r.stdout, r.stderr, r.stdout_bytes, r.stderr_bytes]).toEqual([
      3,
      null,
      '3\n',
      'oops\n',
      2,
      5,
    ]);
  });

  it('feeds stdin and runs in the first root by default, or in a cwd inside it', async () => {
    expect((await exec({ argv: ['cat'], stdin: 'hello\n' })).stdout).toBe('hello\n');
    expect((await exec({ argv: ['pwd'] })).stdout).toBe(`${ws}\n`);
    await fs.mkdir(path.join(ws, 'sub', 'deeper'), { recursive: true });
    expect((await exec({ argv: ['pwd'], cwd: 'sub/deeper' })).stdout).toBe(`${ws}/sub/deeper\n`);
    expect((await exec({ argv: ['pwd'], cwd: path.join(ws, 'sub') })).stdout).toBe(`${ws}/sub\n`);
  });

  it('refuses a cwd escaping the workspace by .., by an absolute path and by a symlink (E_FORBIDDEN)', async () => {
    await fs.mkdir(path.join(dir, 'outside'));
    await fs.symlink(path.join(dir, 'outside'), path.join(ws, 'link'));
    for (const cwd of ['..', '../outside', dir, 'link', 'link/missing', '../nope/deeper']) {
      const err = await rejectionOf(exec({ argv: ['pwd'], cwd }));
      expect([cwd, err.code]).toEqual([cwd, 'E_FORBIDDEN']);
    }
  });

  it('fails with E_NOT_FOUND for a missing cwd inside the workspace and for a missing program', async () => {
    expect((await rejectionOf(exec({ argv: ['pwd'], cwd: 'missing' }))).code).toBe('E_NOT_FOUND');
    expect((await rejectionOf(exec({ argv: ['finger-no-such-program-xyz'] }))).code).toBe('E_NOT_FOUND');
  });

  it('rejects bad arguments with E_INVALID_ARGS listing every problem', async () => {
    const err = await rejectionOf(exec({ argv: ['ls'], command: 'ls', timeout_ms: 600_001, extra: 1 }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details.issues).toEqual([
      { path: '$.extra', message: 'unknown property "extra"' },
      { path: '$', message: 'exactly one of "argv" and "command" is required' },
      { path: '$.timeout_ms', message: 'must be an integer from 1 to 600000 (settings max_timeout_ms)' },
    ]);
    expect((await rejectionOf(exec({}))).code).toBe('E_INVALID_ARGS');
    expect((await rejectionOf(exec({ argv: [] }))).code).toBe('E_INVALID_ARGS');
  });

  it('kills the whole process group past the timeout: E_TIMEOUT with partial output, no process left', async () => {
    const err = await rejectionOf(exec({ command: 'sleep 30 & echo $$ $!; sleep 30', timeout_ms: 300 }));
    expect(err.code).toBe('E_TIMEOUT');
    const [pgid, bg] = (err.details.stdout as string).trim().split(' ').map(Number) as [number, number];
    expect(err.details).toMatchObject({
      timed_out: true,
      cancelled: false,
      exit_code: null,
      signal: 'SIGTERM',
      stdout: `${pgid} ${bg}\n`,
      stdout_bytes: `${pgid} ${bg}\n`.length,
      stderr_bytes: 0,
      truncated: { stdout: false, stderr: false },
      timeout_ms: 300,
    });
    await until(() => groupGone(pgid), `process group ${pgid} to be gone`);
    expect(processGone(bg)).toBe(true);
  });

  it('SIGKILLs a group that ignores SIGTERM after the grace', async () => {
    const err = await rejectionOf(exec({ command: "trap '' TERM; sleep 30 & echo $$ $!; sleep 30", timeout_ms: 300 }));
    expect(err.code).toBe('E_TIMEOUT');
    expect(err.details.signal).toBe('SIGKILL');
    const [pgid, bg] = (err.details.stdout as string).trim().split(' ').map(Number) as [number, number];
    await until(() => groupGone(pgid), `process group ${pgid} to be gone`);
    expect(processGone(bg)).toBe(true);
  });

  it('kills the group when the call is cancelled (ctx.signal aborted) and reports cancelled', async () => {
    const ac = new AbortController();
    const p = exec({ command: 'sleep 30 & echo $$ > pid.txt; sleep 30' }, makeCtx(ac));
    const pidFile = path.join(ws, 'pid.txt');
    await until(async () => (await fs.readFile(pidFile, 'utf8').catch(() => '')).endsWith('\n'), 'pid.txt');
    const pgid = Number((await fs.readFile(pidFile, 'utf8')).trim());
    ac.abort();
    const r = await p;
    expect([r.cancelled, r.timed_out, r.exit_code, r.signal]).toEqual([true, false, null, 'SIGTERM']);
    await until(() => groupGone(pgid), `process group ${pgid} to be gone`);
  });

  it('does not start anything for an already aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await exec({ command: 'touch started' }, makeCtx(ac));
    expect([r.cancelled, r.exit_code]).toEqual([true, null]);
    await expect(fs.stat(path.join(ws, 'started'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('kills what a finished command left running in its group', async () => {
    const r = await exec({ command: 'sleep 30 >/dev/null 2>&1 & echo $!' });
    expect(r.exit_code).toBe(0);
    const bg = Number(r.stdout.trim());
    await until(() => processGone(bg), `leftover ${bg} to be gone`);
  });

  it('caps stdout at 1 MiB with a truncation marker and the true byte count', async () => {
    const r = await exec({ command: "head -c 3000000 /dev/zero | tr '\\0' a; echo tail >&2" });
    const marker = '\n[finger: output truncated — 3000000 bytes total, 1048576 shown]';
    expect(r.stdout_bytes).toBe(3_000_000);
    expect(r.truncated).toEqual({ stdout: true, stderr: false });
    expect(r.stdout).toBe('a'.repeat(1_048_576) + marker);
    expect([r.stderr, r.stderr_bytes, r.exit_code]).toEqual(['tail\n', 5, 0]);
  });

  it('scrubs secrets from the environment, keeps PATH, and adds allowed caller variables', async () => {
    vi.stubEnv('FAKE_API_TOKEN', 'leak-me');
    vi.stubEnv('FAKE_DB_PASSWORD', 'leak-me-too');
    const r = await exec({ argv: ['env'], env: { GREETING: 'hi' } });
    const names = new Map(
      (r.stdout as string)
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(names.has('FAKE_API_TOKEN')).toBe(false);
    expect(names.has('FAKE_DB_PASSWORD')).toBe(false);
    expect(names.get('PATH')).toBe(process.env.PATH);
    expect(names.get('GREETING')).toBe('hi');
    expect(r.stdout).not.toContain('leak-me');
  });

  it('runs git so that a directory shaped like a bare repository is not one (its config never read)', async () => {
    // an agent can write files at NOTIFY: a planted HEAD + config + objects/ would make `git status`
    // there (AUTO) obey a core.fsmonitor or core.pager of the agent's choosing
    const bare = path.join(ws, 'planted');
    await fs.mkdir(path.join(bare, 'objects'), { recursive: true });
    await fs.mkdir(path.join(bare, 'refs', 'heads'), { recursive: true });
    await fs.writeFile(path.join(bare, 'HEAD'), 'ref: refs/heads/main\n');
    await fs.writeFile(path.join(bare, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    const r = await exec({ argv: ['git', 'rev-parse', '--git-dir'], cwd: 'planted' });
    expect(r.exit_code).not.toBe(0);
    expect(r.stderr).toMatch(/bare repository/);
    // the caller's own GIT_CONFIG_* entries come first: ours still win
    const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.bareRepository', GIT_CONFIG_VALUE_0: 'all' };
    const again = await exec({ argv: ['git', 'rev-parse', '--git-dir'], cwd: 'planted', env });
    expect(again.exit_code).not.toBe(0);
    const cfg = await exec({ argv: ['git', 'config', '--get-all', 'safe.bareRepository'], env });
    expect(cfg.stdout).toBe('all\nexplicit\n');
  });

  it('refuses caller variables on the deny list with E_INVALID_ARGS naming each', async () => {
    const err = await rejectionOf(
      exec({ argv: ['env'], env: { GITHUB_TOKEN: 'x', OK: '1', aws_secret_access_key: 'y' } }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details.issues).toEqual([
      {
        path: '$.env.GITHUB_TOKEN',
        message: '"GITHUB_TOKEN" is on the environment deny list (secrets are not passed to commands)',
      },
      {
        path: '$.env.aws_secret_access_key',
        message: '"aws_secret_access_key" is on the environment deny list (secrets are not passed to commands)',
      },
    ]);
  });

  it('extends the lease (3 heartbeat periods) while a command runs longer than a period', async () => {
    await rt.close();
    rt = await loadShell({ workspace_roots: [ws], lease_heartbeat_ms: 50 });
    const ctx = makeCtx();
    const r = await rt.invoke('exec', { command: 'sleep 0.5' }, ctx);
    expect((r as any).exit_code).toBe(0);
    expect(ctx.extended.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ctx.extended)).toEqual(new Set([150]));
  });

  it('kills running groups when the module closes', async () => {
    const p = exec({ command: 'sleep 30 & echo $$ > pid.txt; sleep 30' });
    const pidFile = path.join(ws, 'pid.txt');
    await until(async () => (await fs.readFile(pidFile, 'utf8').catch(() => '')).endsWith('\n'), 'pid.txt');
    const pgid = Number((await fs.readFile(pidFile, 'utf8')).trim());
    await rt.close();
    const r = await p;
    expect([r.signal, r.timed_out, r.cancelled]).toEqual(['SIGTERM', false, false]);
    await until(() => groupGone(pgid), `process group ${pgid} to be gone`);
  });
});

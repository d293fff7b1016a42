// Issue 28 item 5 (rest), against a real background daemon started by the CLI:
// - a path argument with a NUL byte is refused at once (400 E_INVALID_ARGS), never held for a person
//   (it was held, and refused only after approval);
// - a call still held when the daemon is killed with SIGKILL gets its resolution at the next start:
//   an `approval.resolved` audit entry with decision `abandoned` and an APPROVAL_RESOLVED event, and
//   `myfinger approvals` does not list it (the `approval.requested` entry stayed unanswered).
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runCli, tempDir, waitFor } from '@finger/testkit';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Running {
  pid: number;
  url: string;
}

async function started(home: string): Promise<Running> {
  const info = JSON.parse(await readFile(join(home, 'daemon.json'), 'utf8')) as Running;
  return { pid: info.pid, url: info.url };
}

describe('held calls and NUL paths (real daemon, kill -9)', () => {
  it('refuses a NUL path before holding it; a hold pending at kill -9 is recorded as abandoned at restart', async () => {
    await using home = await tempDir('finger-e2e-kill9-');
    await using outside = await tempDir('finger-e2e-kill9-outside-');
    const env = { FINGER_HOME: home.path, FINGER_PORT: '0' };
    await mkdir(join(home.path, 'config'), { recursive: true });
    expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
    let d = await started(home.path);
    try {
      const admin = (await readFile(join(home.path, 'token'), 'utf8')).trim();
      const http = async (method: string, path: string, body?: unknown, token = admin) => {
        const r = await fetch(`${d.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        return { status: r.status, body: (await r.json()) as any };
      };
      const minted = await http('POST', '/v1/tokens', { name: 'bot', role: 'agent:executor' });
      expect(minted.status).toBe(201);
      const agent = minted.body.token as string;
      const pending = async (): Promise<any[]> => (await http('GET', '/v1/approvals')).body.approvals;

      // a write outside the workspace is held for a person: left pending when the daemon dies
      const held = http(
        'POST',
        '/v1/tools/fs.write/run',
        { args: { path: join(outside.path, 'a.txt'), content: 'x' } },
        agent,
      );
      held.catch(() => undefined);
      const [approval] = await waitFor('the write to be held', async () => {
        const list = await pending();
        return list.length === 1 ? list : undefined;
      });

      // the same write with a NUL in its path: refused at once, nothing more is held
      const nul = await http(
        'POST',
        '/v1/tools/fs.write/run',
        { args: { path: join(outside.path, 'b\u0000.txt'), content: 'x' } },
        agent,
      );
      expect(nul.status).toBe(400);
      expect(nul.body.error).toMatchObject({
        code: 'E_INVALID_ARGS',
        details: { tool: 'fs.write', issues: [{ path: '$.path', message: 'must not contain a NUL byte' }] },
      });
      expect((await pending()).map((a) => a.id)).toEqual([approval.id]);

      process.kill(d.pid, 'SIGKILL');
      await waitFor('the daemon to die', async () => (pidAlive(d.pid) ? undefined : true));

      expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
      d = await started(home.path);
      const resolved = (await http('GET', '/v1/audit?type=approval.resolved')).body.entries as any[];
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatchObject({
        type: 'approval.resolved',
        actor: { kind: 'system', id: 'human-gate' },
        tool: 'fs.write',
        decision: 'abandoned',
        details: {
          approval_id: approval.id,
          decided_by: 'gate',
          reason: 'the daemon stopped before anyone answered (found at the next start)',
        },
      });
      const events = (await http('GET', '/v1/events?type=APPROVAL_RESOLVED')).body.events as any[];
      expect(events.map((e) => [e.data.id, e.data.decision, e.data.approved])).toEqual([
        [approval.id, 'abandoned', false],
      ]);
      const listed = await runCli(['approvals', '--json'], env);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject({ approvals: [] });

      // a clean restart settles nothing twice
      expect((await runCli(['daemon', 'stop'], env, 30_000)).code).toBe(0);
      expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
      d = await started(home.path);
      expect((await http('GET', '/v1/audit?type=approval.resolved')).body.entries).toHaveLength(1);
    } finally {
      if (pidAlive(d.pid)) await runCli(['daemon', 'stop'], env, 30_000);
    }
  });
});

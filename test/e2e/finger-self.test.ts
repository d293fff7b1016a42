// Issue 22 end to end: with an agent token against a running daemon, finger's own home, token and
// API are out of reach — DENY with the reason, even after an admin rule allowing shell.exec at
// AUTO and after a person's standing `always` answer; a shell read outside the read roots is
// held; fs.read of the token is DENY. Nothing forbidden runs.

import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type EventsClient, startTestDaemon, type TestDaemon } from '@finger/testkit';

const REASON = "finger's own API/home: an agent must not govern its own firewall";

describe("finger's own home and API are out of an agent's reach", () => {
  let d: TestDaemon;
  let agent: string;
  let ws: EventsClient;
  let port: string;

  beforeAll(async () => {
    d = await startTestDaemon({
      // every forbidden call is a denial: the denial breaker must not lock the agent out mid-test
      config: { log: { level: 'silent' }, safety: { denial_consecutive: 1000, denial_threshold: 1000 } },
      prepareHome: async (home, workspace) => {
        await mkdir(join(home, 'config'), { recursive: true });
        await mkdir(join(workspace, 'proj'), { recursive: true });
        const policy = { version: 1, rules: [{ id: 'shell-auto', tool: 'shell.exec', level: 'AUTO' }] };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy, null, 2));
      },
    });
    port = new URL(d.url).port;
    agent = await d.token('agent:executor', 'x');
    ws = await d.events();
    await ws.subscribe({ types: ['APPROVAL_REQUESTED'] });
  });
  afterAll(async () => {
    await ws?.close();
    await d?.close();
  });

  const run = (tool: string, args: Record<string, unknown>) => d.http('POST', `/v1/tools/${tool}/run`, { args }, agent);

  /** The forbidden calls: the token through `file -f`, the daemon's port, the CLI, its pid, its config. */
  const forbidden = async (): Promise<string[]> => {
    const home = await realpath(d.home);
    const rel = join(await realpath(d.workspace), '..');
    return [
      `file -f ${join(home, 'token')}`,
      `cd ${rel} && file -f ./${home.slice(rel.length + 1)}/token`,
      `curl -s http://127.0.0.1:${port}/v1/tokens`,
      `curl -s http://localhost.:${port}/v1/halt -X POST`,
      'myfinger approve 01JAAAAAAAAAAAAAAAAAAAAAAA',
      `kill ${process.pid}`,
      `cat ${join(home, 'config', 'admin-policy.json')}`,
    ];
  };

  const expectDenied = async (commands: string[]) => {
    for (const command of commands) {
      const r = await run('shell.exec', { command });
      expect({ command, status: r.status, code: r.body.error?.code }).toEqual({
        command,
        status: 403,
        code: 'E_DENIED_BY_POLICY',
      });
      expect(r.body.error.message).toContain(REASON);
    }
  };

  it('file -f, curl to the daemon, myfinger, kill of its pid and its config are DENY despite an AUTO rule', async () => {
    await expectDenied(await forbidden());
  });

  it('and still after a standing `always` answer for shell.exec in the session', async () => {
    // a held call (outside the read roots), answered `always`
    const held = run('shell.exec', { command: 'head -c 1 /etc/hostname' });
    await ws.waitFor(
      () => ws.messages.some((m) => m.type === 'event' && m.event.type === 'APPROVAL_REQUESTED'),
      'APPROVAL_REQUESTED',
    );
    const ev = ws.messages.find((m) => m.type === 'event' && m.event.type === 'APPROVAL_REQUESTED')!.event;
    expect(ev.data.approval.evaluation.level).toBe('CONFIRM');
    expect(ev.data.approval.evaluation.reasons.join('\n')).toContain('outside readable_paths');
    const answer = await d.http('POST', `/v1/approvals/${ev.data.approval.id}`, { decision: 'always' });
    expect(answer.status).toBe(200);
    expect((await held).status).toBe(200);
    await expectDenied(await forbidden());
  });

  it('fs.read of the token file is DENY', async () => {
    const r = await run('fs.read', { path: join(await realpath(d.home), 'token') });
    expect([r.status, r.body.error?.code]).toEqual([403, 'E_DENIED_BY_POLICY']);
    expect(r.body.error.message).toContain(REASON);
  });
});

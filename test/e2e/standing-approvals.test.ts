// Standing approvals (issue 23, item 1) and adaptation per shape (item 2), through a real daemon
// over HTTP, as an agent (`agent:executor`) answered by a scripted person. Nothing risky runs: a
// call that must not be covered is only held, checked and rejected.

import { mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build } from '@finger/daemon';
import { type EventsClient, runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

describe('standing approvals and adaptation per shape, end to end', () => {
  let d: TestDaemon;
  let ws: EventsClient;
  let outside: string;

  beforeAll(async () => {
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        // the old behaviour of moderate shell commands (held at CONFIRM), whatever the host offers
        sandbox: { mode: 'off', exempt_modules: [] },
      },
      prepareHome: async (home, workspace) => {
        await mkdir(join(home, 'config'), { recursive: true });
        // writes in the workspace are held (CONFIRM) so that `always` has something to answer
        const policy = { version: 1, rules: [{ id: 'writes-asked', tool: 'fs.write', level: 'CONFIRM' }] };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
        await mkdir(join(workspace, 'src', 'lib'), { recursive: true });
      },
    });
    outside = join(dirname(d.workspace), `outside-${Date.now()}`);
    await mkdir(outside, { recursive: true });
    await symlink(outside, join(d.workspace, 'src', 'out'));
    ws = await d.events();
    await ws.subscribe({ types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'] });
  });
  afterAll(async () => {
    await ws?.close();
    await d?.close();
  });

  const requests = (): any[] =>
    ws.messages.filter((m) => m.type === 'event' && m.event.type === 'APPROVAL_REQUESTED').map((m) => m.event.data);
  /** Sends one call as `agent` in `session`; resolves with the answer once it is settled. */
  const call = (agent: string, session: string, tool: string, args: unknown) =>
    d.http('POST', '/v1/input', { text: `/hub target=${tool} ${JSON.stringify(args)}`, session_id: session }, agent);
  /** Sends a call and waits until it is held; returns the pending approval and the call's answer. */
  const held = async (agent: string, session: string, tool: string, args: unknown) => {
    const before = requests().length;
    const answer = call(agent, session, tool, args);
    await ws.waitFor(() => requests().length > before, `a hold of ${tool} ${JSON.stringify(args)}`);
    return { approval: requests()[before].approval, answer };
  };
  const answer = (id: string, body: unknown) => d.http('POST', `/v1/approvals/${id}`, body);
  /** A call that must not be covered: it is held; the person rejects it. */
  const heldThenRejected = async (agent: string, session: string, tool: string, args: unknown, level: string) => {
    const h = await held(agent, session, tool, args);
    expect([args, h.approval.tool_id, h.approval.level, h.approval.level === level ? '' : h.approval.risk]).toEqual([
      args,
      tool,
      level,
      '',
    ]);
    expect((await answer(h.approval.id, { decision: 'reject', agent_fault: false })).status).toBe(200);
    expect((await h.answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
  };

  it('always on `npm test` covers npm test only: not `npm test && rm -rf ~`, `npm publish`, `rm -rf ~` or an APPROVE hold; revoked, it is held again', async () => {
    const agent = await d.token('agent:executor', 'npm-agent');
    const first = await held(agent, 's-npm', 'shell.exec', { command: 'npm test' });
    expect(first.approval.level).toBe('CONFIRM');
    expect(first.approval.standing).toEqual({
      offered: true,
      shape: { kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: ['test'] }] },
      description: 'shell.exec: npm test …',
    });
    const always = await answer(first.approval.id, { decision: 'always' });
    expect(always.status).toBe(200);
    const sa = always.body.standing_approval;
    expect(sa).toMatchObject({
      tool_id: 'shell.exec',
      scope: 'session',
      session_id: 's-npm',
      principal: 'agent:npm-agent',
      level: 'CONFIRM',
      by: 'admin',
    });
    expect((await first.answer).status).toBe(200);

    // the same shape runs without asking; the audit entry names the standing approval
    const before = requests().length;
    expect((await call(agent, 's-npm', 'shell.exec', { command: 'npm test -- --silent' })).status).toBe(200);
    expect(requests().length).toBe(before);
    const audit = (await d.http('GET', '/v1/audit?type=approval.resolved&limit=10000')).body.entries;
    const used = audit.filter((e: any) => e.decision === 'standing');
    expect(used).toHaveLength(1);
    expect(used[0].verdict.matched_rules.map((m: any) => `${m.source}:${m.id}`)).toContain(`user:standing:${sa.id}`);
    expect(used[0].details.standing_approval).toMatchObject({ id: sa.id, description: 'shell.exec: npm test …' });
    const created = audit.find((e: any) => e.decision === 'always');
    expect(created.details.standing_approval).toMatchObject({ id: sa.id, scope: 'session' });

    // what it must never cover: held (and rejected here, so nothing runs)
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: 'npm test && rm -rf ~' }, 'APPROVE');
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: 'npm publish' }, 'CONFIRM');
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: 'npm run build' }, 'CONFIRM');
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: 'rm -rf ~' }, 'APPROVE');
    // an APPROVE-level call of the same shape (a write outside the workspace) is held too
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: `npm test > ${join(outside, 'x')}` }, 'APPROVE');
    // another session of the same caller, another caller in the same session: asked again
    await heldThenRejected(agent, 's-other', 'shell.exec', { command: 'npm test' }, 'CONFIRM');
    const other = await d.token('agent:executor', 'npm-other');
    await heldThenRejected(other, 's-npm', 'shell.exec', { command: 'npm test' }, 'CONFIRM');

    // list, show and revoke over HTTP: viewers read, operators revoke
    const viewer = await d.token('viewer', 'npm-viewer');
    const list = await d.http('GET', '/v1/standing-approvals', undefined, viewer);
    expect(list.status).toBe(200);
    expect(list.body.standing_approvals.map((a: any) => [a.id, a.description])).toEqual([
      [sa.id, 'shell.exec: npm test …'],
    ]);
    expect((await d.http('GET', `/v1/standing-approvals/${sa.id}`, undefined, viewer)).body).toMatchObject({
      id: sa.id,
      shape: sa.shape,
    });
    expect((await d.http('GET', '/v1/standing-approvals/NOPE', undefined, viewer)).body.error.code).toBe('E_NOT_FOUND');
    const denied = await d.http('DELETE', `/v1/standing-approvals/${sa.id}`, undefined, viewer);
    expect([denied.status, denied.body.error.code]).toEqual([403, 'E_FORBIDDEN']);
    expect((await d.http('DELETE', `/v1/standing-approvals/${sa.id}`, undefined, agent)).body.error.code).toBe(
      'E_FORBIDDEN',
    );
    const revoked = await d.http('DELETE', `/v1/standing-approvals/${sa.id}`);
    expect([revoked.status, revoked.body.revoked.id]).toEqual([200, sa.id]);
    expect((await d.http('DELETE', `/v1/standing-approvals/${sa.id}`)).body.error.code).toBe('E_NOT_FOUND');
    const changes = (await d.http('GET', '/v1/audit?type=policy.changed&limit=10000')).body.entries;
    expect(changes.map((e: any) => [e.details.change, e.details.standing_approval?.id])).toContainEqual([
      'standing_approval.revoked',
      sa.id,
    ]);
    // revoked: the next matching call is held again
    await heldThenRejected(agent, 's-npm', 'shell.exec', { command: 'npm test' }, 'CONFIRM');
  });

  it('always on a write of src/ covers src/** only: not ../.bashrc, not a symlink out of the workspace', async () => {
    const agent = await d.token('agent:executor', 'fs-agent');
    const first = await held(agent, 's-fs', 'fs.write', { path: 'src/a.txt', content: 'a\n' });
    expect(first.approval.standing.shape).toEqual({
      kind: 'path',
      tool: 'fs.write',
      paths: [`${d.workspace}/src/**`],
    });
    const r = await answer(first.approval.id, { decision: 'always' });
    expect(r.body.standing_approval.shape.paths).toEqual([`${d.workspace}/src/**`]);
    expect((await first.answer).status).toBe(200);

    // covered: a deeper write in src/
    const before = requests().length;
    expect((await call(agent, 's-fs', 'fs.write', { path: 'src/b.txt', content: 'b\n' })).status).toBe(200);
    expect(requests().length).toBe(before);
    expect(await readFile(join(d.workspace, 'src', 'b.txt'), 'utf8')).toBe('b\n');

    // not covered: held, then rejected (nothing is written)
    await heldThenRejected(agent, 's-fs', 'fs.write', { path: '../.bashrc', content: 'x' }, 'APPROVE');
    await heldThenRejected(agent, 's-fs', 'fs.write', { path: 'src/out/x.txt', content: 'x' }, 'APPROVE');
    await heldThenRejected(agent, 's-fs', 'fs.write', { path: 'notes.txt', content: 'x' }, 'CONFIRM');
    await expect(readFile(join(outside, 'x.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a narrower shape may be answered; a wider one is E_INVALID_ARGS and the call stays held', async () => {
    const agent = await d.token('agent:executor', 'narrow-agent');
    const h = await held(agent, 's-narrow', 'fs.write', { path: 'src/lib/c.txt', content: 'c\n' });
    const wider = await answer(h.approval.id, {
      decision: 'always',
      shape: { kind: 'path', tool: 'fs.write', paths: [`${d.workspace}/**`] },
    });
    expect([wider.status, wider.body.error.code]).toEqual([400, 'E_INVALID_ARGS']);
    expect((await d.http('GET', '/v1/approvals')).body.approvals.map((a: any) => a.id)).toContain(h.approval.id);
    const narrow = await answer(h.approval.id, {
      decision: 'always',
      scope: 'persistent',
      shape: { kind: 'path', tool: 'fs.write', paths: [`${d.workspace}/src/lib/c.txt`] },
    });
    expect([narrow.status, narrow.body.error]).toEqual([200, undefined]);
    expect(narrow.body.standing_approval).toMatchObject({ scope: 'persistent' });
    expect(Date.parse(narrow.body.standing_approval.expires_at)).toBeGreaterThan(Date.now());
    expect((await h.answer).status).toBe(200);
    // persistent ones are kept in state/, mode 0600
    const file = JSON.parse(await readFile(join(d.home, 'state', 'standing-approvals.json'), 'utf8'));
    expect(file.approvals.map((a: any) => a.id)).toEqual([narrow.body.standing_approval.id]);
  });

  it('myfinger approvals standing list|show|revoke', async () => {
    const env = { FINGER_URL: d.url, FINGER_TOKEN: d.adminToken, FINGER_HOME: d.home };
    const list = await runCli(['approvals', 'standing', 'list', '--json'], env);
    expect(list.code).toBe(0);
    const one = JSON.parse(list.stdout).standing_approvals.find((a: any) => a.scope === 'persistent');
    expect(one).toMatchObject({ scope: 'persistent', tool_id: 'fs.write' });
    const show = await runCli(['approvals', 'standing', 'show', one.id], env);
    expect([show.code, show.stdout]).toEqual([0, expect.stringContaining(`standing approval ${one.id}`)]);
    expect(show.stdout).toContain(`shape:     fs.write: ${d.workspace}/src/lib/c.txt`);
    const table = await runCli(['approvals', 'standing'], env);
    expect(table.stdout).toContain(one.id);
    const revoke = await runCli(['approvals', 'standing', 'revoke', one.id], env);
    expect([revoke.code, revoke.stdout.trim()]).toEqual([
      0,
      `revoked ${one.id}: fs.write: ${d.workspace}/src/lib/c.txt`,
    ]);
    const gone = await runCli(['approvals', 'standing', 'show', one.id, '--json'], env);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr + gone.stdout).toContain('E_NOT_FOUND');
  });

  it('three rejections of `git push` raise `git push`, not `git status`; reverting works as before', async () => {
    const agent = await d.token('agent:executor', 'git-agent');
    for (let i = 0; i < 3; i++) {
      const h = await held(agent, 's-git', 'shell.exec', { command: `git push origin b${i}` });
      expect((await answer(h.approval.id, { decision: 'reject', reason: `not now ${i}` })).status).toBe(200);
      expect((await h.answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    }
    const rule = await waitFor(
      'the adaptation to escalate git push',
      async () => {
        const p = await d.http('GET', '/v1/policy');
        return p.body.user.rules.find((x: any) => x.match?.command === 'git push *');
      },
      10_000,
      25,
    );
    expect(rule).toMatchObject({ tool: 'shell.exec', level: 'APPROVE', match: { command: 'git push *' } });
    expect(rule.id).toMatch(/^adaptation:shell\.exec@[0-9a-f]{12}$/);
    const check = (command: string) =>
      d.http('POST', '/v1/policy/check', { tool: 'shell.exec', args: { command }, principal_kind: 'agent' });
    const push = await check('git push --force-with-lease');
    expect(push.body.level).toBe('APPROVE');
    expect(push.body.matched_rules.map((m: any) => `${m.source}:${m.id}`)).toContain(`user:${rule.id}`);
    const status = await check('git status');
    expect(status.body.level).toBe('AUTO');
    expect((await check('git commit -m x')).body.level).toBe('CONFIRM');
    // reverting: policy reset removes the escalation as before
    expect((await d.http('POST', '/v1/policy/reset')).status).toBe(200);
    expect((await check('git push')).body.level).toBe('CONFIRM');
  });

  it('rejections marked agent_fault: false do not trip the denial breaker (unmarked ones do)', async () => {
    const careful = await d.token('agent:executor', 'excused-agent');
    for (let i = 0; i < 4; i++) {
      const h = await held(careful, 's-excused', 'shell.exec', { command: `git push origin e${i}` });
      const r = await answer(h.approval.id, { decision: 'reject', agent_fault: false, reason: 'wrong moment' });
      expect(r.status).toBe(200);
      expect((await h.answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    }
    const rejected = (await d.http('GET', '/v1/audit?type=approval.resolved&limit=10000')).body.entries.filter(
      (e: any) => e.details?.agent_fault === false && e.actor?.id === 'admin',
    );
    expect(rejected.length).toBeGreaterThanOrEqual(4);
    // still not locked: its next call is held as usual, not refused
    const next = await held(careful, 's-excused', 'shell.exec', { command: 'git push origin e4' });
    await answer(next.approval.id, { decision: 'reject', agent_fault: false });
    await next.answer;
    const health = (await d.http('GET', '/v1/health')).body;
    expect(JSON.stringify(health.locked_agents ?? health.safety?.locked_agents ?? [])).not.toContain('excused-agent');

    // the same three rejections without the mark lock the agent (E_SAFETY_LOCKOUT on its next call)
    const blamed = await d.token('agent:executor', 'blamed-agent');
    for (let i = 0; i < 3; i++) {
      const h = await held(blamed, 's-blamed', 'shell.exec', { command: `git push origin f${i}` });
      await answer(h.approval.id, { decision: 'reject' });
      await h.answer;
    }
    const locked = await call(blamed, 's-blamed', 'shell.exec', { command: 'git push origin f3' });
    expect(locked.body.error.code).toBe('E_SAFETY_LOCKOUT');
    const stillOpen = await held(careful, 's-excused', 'shell.exec', { command: 'git push origin e5' });
    await answer(stillOpen.approval.id, { decision: 'reject', agent_fault: false });
    expect((await stillOpen.answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
  });
});

describe('config firewall.behaviour reaches the behaviour layer', () => {
  it('max_tool_calls: 2 holds the third call of the same tool in the window', async () => {
    const d = await startTestDaemon({
      config: { log: { level: 'silent' }, firewall: { approval_timeout_ms: 60_000, behaviour: { max_tool_calls: 2 } } },
    });
    try {
      const agent = await d.token('agent:executor', 'busy-agent');
      const run = (i: number) =>
        d.http('POST', '/v1/input', { text: `/hub target=shell.exec {"command":"ls ${i}"}`, session_id: 'b' }, agent);
      expect((await run(1)).status).toBe(200);
      expect((await run(2)).status).toBe(200);
      const third = run(3);
      const pending = await waitFor(
        'a pending approval',
        async () => {
          const list: any[] = (await d.http('GET', '/v1/approvals')).body.approvals;
          return list.length > 0 ? list : undefined;
        },
        10_000,
        25,
      );
      expect(pending.map((a) => [a.level, a.evaluation.layer])).toEqual([['CONFIRM', 'behaviour']]);
      await d.http('POST', `/v1/approvals/${pending[0].id}`, { decision: 'reject', agent_fault: false });
      expect((await third).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    } finally {
      await d.close();
    }
  });
});

describe('persistent standing approvals survive a restart', () => {
  it('given before the restart, it still covers its shape after it (state/standing-approvals.json, 0600)', async () => {
    const config = { log: { level: 'silent' as const }, sandbox: { mode: 'off' as const, exempt_modules: [] } };
    const d = await startTestDaemon({ keepHome: true, config });
    const workspace = d.workspace;
    let restarted: Awaited<ReturnType<typeof build>> | undefined;
    try {
      const agent = await d.token('agent:executor', 'restart-agent');
      const send = (url: string) =>
        fetch(`${url}/v1/input`, {
          method: 'POST',
          headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: '/hub target=shell.exec {"command":"npm test"}', session_id: 'r1' }),
        });
      const first = send(d.url);
      const pending = await waitFor(
        'a pending approval',
        async () => {
          const list: any[] = (await d.http('GET', '/v1/approvals')).body.approvals;
          return list.length > 0 ? list : undefined;
        },
        10_000,
        25,
      );
      const r = await d.http('POST', `/v1/approvals/${pending[0].id}`, { decision: 'always', scope: 'persistent' });
      const id = r.body.standing_approval.id;
      await first;
      const file = join(d.home, 'state', 'standing-approvals.json');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      await d.close();

      await mkdir(workspace, { recursive: true });
      restarted = await build({
        home: d.home,
        env: {},
        config: { ...config, server: { host: '127.0.0.1', port: 0 }, workspace: { roots: [workspace] } },
      });
      const { url } = await restarted.listen();
      const admin = (await readFile(restarted.tokenFile, 'utf8')).trim();
      const list = await (
        await fetch(`${url}/v1/standing-approvals`, { headers: { authorization: `Bearer ${admin}` } })
      ).json();
      expect(list.standing_approvals.map((a: any) => [a.id, a.scope])).toEqual([[id, 'persistent']]);
      // covered at once, in another session too: nothing is held
      const again = await fetch(`${url}/v1/input`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: '/hub target=shell.exec {"command":"npm test"}', session_id: 'r2' }),
      });
      expect(again.status).toBe(200);
    } finally {
      await restarted?.close();
      await rm(d.home, { recursive: true, force: true });
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type EventsClient, runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

// Each test stands alone (run one with -t, or in any order): approvals are found by the file a test
// wrote, audit entries are counted from a mark taken at the test's start, the policy test starts
// from a reset policy, and agents that are refused are each test's own (the denial breaker).

describe('the firewall end to end over HTTP and WS (admin policy, approvals, adaptation, direct dispatch)', () => {
  let d: TestDaemon;
  let agent: string;
  let ws: EventsClient;
  let outside: string;
  let victim: string;
  /** Holds the two workspace roots (outside FINGER_HOME): `workspace` (writable) and `outside` (not). */
  let roots: string;

  beforeAll(async () => {
    roots = await realpath(await mkdtemp(join(tmpdir(), 'finger-fw-roots-')));
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        workspace: { roots: [join(roots, 'workspace'), join(roots, 'outside')] },
      },
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        await mkdir(join(roots, 'workspace', 'victim'), { recursive: true });
        await mkdir(join(roots, 'outside'), { recursive: true });
        const policy = {
          version: 1,
          rules: [
            {
              id: 'no-rm-rf',
              tool: 'shell.exec',
              match: { command: 'rm -rf *' },
              level: 'DENY',
              reason: 'recursive forced deletes are never run by an agent',
              examples: {
                match: [{ tool: 'shell.exec', args: { command: "sh -c 'rm -fr /tmp/x'" } }],
                not_match: [{ tool: 'shell.exec', args: { command: 'ls -la' } }],
              },
            },
          ],
          writable_paths: [join(roots, 'workspace')],
        };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy, null, 2));
      },
    });
    outside = join(roots, 'outside');
    victim = join(roots, 'workspace', 'victim');
    agent = await d.token('agent:executor', 'exec-1');
    ws = await d.events();
    await ws.subscribe({ types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED', 'POLICY_CHANGED'] });
  });
  afterAll(async () => {
    await ws?.close();
    await d?.close();
    if (roots) await rm(roots, { recursive: true, force: true });
  });

  const requested = (): any[] =>
    ws.messages.filter((m) => m.type === 'event' && m.event.type === 'APPROVAL_REQUESTED').map((m) => m.event);
  /** Waits for the APPROVAL_REQUESTED of the held call that writes `path` and returns it. */
  const requestFor = async (path: string): Promise<any> => {
    const of = () => requested().find((e) => e.data.approval?.args?.path === path);
    await ws.waitFor(() => of() !== undefined, `APPROVAL_REQUESTED for ${path}`);
    return of();
  };
  const auditOf = async (query: string): Promise<any[]> =>
    (await d.http('GET', `/v1/audit${query}${query.includes('?') ? '&' : '?'}limit=10000`)).body.entries;
  /** The audit entries of `query` recorded since `mark` (a count taken earlier with the same query). */
  const auditSince = async (query: string, mark: number): Promise<any[]> => (await auditOf(query)).slice(mark);

  it("(a) the admin DENY on `rm -rf *` refuses the agent's `sh -c 'rm -fr …'`: 403, nothing ran", async () => {
    const mark = (await auditOf('?type=tool.call')).length;
    const r = await d.http(
      'POST',
      '/v1/tools/shell.exec/run',
      { args: { command: `sh -c 'rm -fr ${victim}'` } },
      agent,
    );
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('E_DENIED_BY_POLICY');
    expect((await stat(victim)).isDirectory()).toBe(true);
    const calls = (await auditSince('?type=tool.call', mark)).filter((e) => e.tool === 'shell.exec');
    expect(calls.map((e) => [e.actor, e.decision, e.verdict.layer])).toEqual([
      [{ kind: 'agent', id: 'exec-1' }, 'deny', 'permission'],
    ]);
    expect(calls[0].verdict.matched_rules.map((m: any) => `${m.source}:${m.id}`)).toContain('admin:no-rm-rf');

    // policy check over HTTP names the same layer and rule, for another spelling, and runs nothing
    const check = await d.http('POST', '/v1/policy/check', {
      tool: 'shell.exec',
      args: { command: `bash -lc "/bin/rm --recursive --force ${victim}"` },
    });
    expect(check.status).toBe(200);
    expect([check.body.level, check.body.action, check.body.layer]).toEqual(['DENY', 'deny', 'permission']);
    expect(check.body.matched_rules.map((m: any) => `${m.source}:${m.id}`)).toContain('admin:no-rm-rf');
    expect((await stat(victim)).isDirectory()).toBe(true);
  });

  it('(b) a write outside writable_paths is held at APPROVE with a diff; approving edited args re-evaluates and runs', async () => {
    const file = join(outside, 'a.txt');
    await writeFile(file, 'old line\n');
    const own = await d.token('agent:executor', 'exec-b');
    const call = d.http('POST', '/v1/tools/fs.write/run', { args: { path: file, content: 'new line\n' } }, own);
    const ev = await requestFor(file);
    expect(ev.target).toBe('fs.write');
    expect(ev.data.level).toBe('APPROVE');
    const approval = ev.data.approval;
    expect(approval.evaluation.layer).toBe('path_sandbox');
    expect(approval.evaluation.preview.kind).toBe('diff');
    expect(approval.evaluation.preview.text).toContain('-old line');
    expect(approval.evaluation.preview.text).toContain('+new line');
    expect(await readFile(file, 'utf8')).toBe('old line\n'); // nothing ran while held

    const other = join(outside, 'b.txt');
    const answer = await d.http('POST', `/v1/approvals/${approval.id}`, {
      decision: 'approve',
      args: { path: other, content: 'edited\n' },
    });
    expect(answer.status).toBe(200);
    expect([answer.body.approved, answer.body.edited]).toEqual([true, true]);
    expect(answer.body.evaluation.level).toBe('APPROVE'); // re-evaluated: still outside, the person approved it
    const done = await call;
    expect(done.status).toBe(200);
    expect(await readFile(other, 'utf8')).toBe('edited\n');
    expect(await readFile(file, 'utf8')).toBe('old line\n');
  });

  it('(c) three rejections escalate writes to that directory (not every fs.write) in the UserPolicy (audited); policy reset reverts it', async () => {
    expect((await d.http('POST', '/v1/policy/reset')).status).toBe(200);
    const mark = (await auditOf('?type=policy.changed')).length;
    // an agent of its own: the denial breaker counts another test's denial of exec-1 with these rejections
    const own = await d.token('agent:executor', 'exec-c');
    for (let i = 0; i < 3; i++) {
      const call = d.http(
        'POST',
        '/v1/tools/fs.write/run',
        { args: { path: join(outside, `r${i}.txt`), content: 'x' } },
        own,
      );
      const ev = await requestFor(join(outside, `r${i}.txt`));
      const r = await d.http('POST', `/v1/approvals/${ev.data.id}`, { decision: 'reject', reason: `no ${i}` });
      expect(r.status).toBe(200);
      const res = await call;
      expect([res.status, res.body.error.code]).toEqual([403, 'E_REJECTED_BY_HUMAN']);
    }
    const policy = await waitFor('the adaptation to escalate fs.write', async () => {
      const p = await d.http('GET', '/v1/policy');
      return p.body.user.rules.length > 0 ? p.body : undefined;
    });
    // the rejected shape: writes to that directory, not every call of fs.write
    const [rule] = policy.user.rules;
    expect(policy.user.rules).toEqual([
      expect.objectContaining({ tool: 'fs.write', level: 'APPROVE', match: { path: outside } }),
    ]);
    expect(rule.id).toMatch(/^adaptation:fs\.write@[0-9a-f]{12}$/);
    expect((await d.http('GET', '/v1/policy/effective')).body.escalated_tools).toEqual([
      rule.id.slice('adaptation:'.length),
    ]);
    const changes = await auditSince('?type=policy.changed', mark);
    expect(changes.map((e) => [e.actor, e.details.change, e.details.rule?.id])).toEqual([
      [{ kind: 'system', id: 'adaptation' }, 'add_rule', rule.id],
    ]);
    const check = (path: string) =>
      d.http('POST', '/v1/policy/check', { tool: 'fs.write', args: { path, content: 'x' }, principal_kind: 'agent' });
    expect((await check(join(victim, 'w.txt'))).body.level).not.toBe('APPROVE');

    const reset = await d.http('POST', '/v1/policy/reset');
    expect(reset.status).toBe(200);
    expect(reset.body.user.rules).toEqual([]);
    expect((await d.http('GET', '/v1/policy')).body.user.rules).toEqual([]);
    const after = await auditSince('?type=policy.changed', mark);
    expect(after.map((e) => [e.actor, e.details.change])).toEqual([
      [{ kind: 'system', id: 'adaptation' }, 'add_rule'],
      [{ kind: 'human', id: 'admin' }, 'reset'],
    ]);
    // only admins change the policy
    const viewer = await d.token('viewer');
    expect((await d.http('POST', '/v1/policy/reset', undefined, viewer)).status).toBe(403);
    expect((await d.http('PUT', '/v1/policy', { version: 1, rules: [] }, viewer)).status).toBe(403);
    expect((await d.http('GET', '/v1/policy', undefined, viewer)).status).toBe(200);
  });

  it("(d) a human's direct /hub dispatch of the same write needs no approval but is audited", async () => {
    const before = requested().length;
    const mark = (await auditOf('?type=tool.call')).length;
    const file = join(outside, 'direct.txt');
    const r = await d.http('POST', '/v1/input', {
      text: `/hub target=fs.write ${JSON.stringify({ path: file, content: 'by hand\n' })}`,
    });
    expect(r.status).toBe(200);
    expect(await readFile(file, 'utf8')).toBe('by hand\n');
    expect(requested().length).toBe(before);
    const calls = (await auditSince('?type=tool.call', mark)).filter(
      (e) => e.tool === 'fs.write' && e.actor.kind === 'human',
    );
    expect(calls.map((e) => [e.actor, e.decision, e.verdict.level, e.verdict.waived])).toEqual([
      [{ kind: 'human', id: 'admin' }, 'allow', 'AUTO', 'APPROVE'],
    ]);
  });

  it('PUT /v1/policy sets a validated UserPolicy (audited); an invalid one is refused and changes nothing', async () => {
    const doc = { version: 1, rules: [{ id: 'no-web', tool: 'web.*', level: 'CONFIRM' }] };
    const put = await d.http('PUT', '/v1/policy', doc);
    expect(put.status).toBe(200);
    expect(put.body.user.rules).toEqual(doc.rules);
    const bad = await d.http('PUT', '/v1/policy', { version: 1, rules: [{ tool: 'x', level: 'MAYBE' }] });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'E_INVALID_ARGS']);
    expect((await d.http('GET', '/v1/policy')).body.user.rules).toEqual(doc.rules);
    const changes = await auditOf('?type=policy.changed');
    expect(changes.at(-1).details.change).toBe('set');
    expect((await d.http('POST', '/v1/policy/reset')).status).toBe(200);
  });

  it('myfinger policy set / show / reset / check (built CLI) against the daemon', async () => {
    const env = { FINGER_HOME: d.home };
    const file = join(d.home, 'user-policy.json');
    await writeFile(
      file,
      JSON.stringify({ version: 1, rules: [{ id: 'web-confirm', tool: 'web.*', level: 'CONFIRM' }] }),
    );
    const set = await runCli(['policy', 'set', '-f', file], env);
    expect([set.code, set.stderr]).toEqual([0, '']);
    expect(set.stdout).toContain('user policy set: 1 rule');
    const show = JSON.parse((await runCli(['policy', 'show', '--json'], env)).stdout);
    expect(show.user.rules.map((r: any) => r.id)).toEqual(['web-confirm']);
    expect(show.admin.rules.map((r: any) => r.id)).toEqual(['no-rm-rf']);
    const check = await runCli(
      ['policy', 'check', 'shell.exec', JSON.stringify({ command: 'timeout 5 rm -r -f /' })],
      env,
    );
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('shell.exec: DENY (deny), decided by layer permission');
    expect(check.stdout).toContain('admin:no-rm-rf');
    expect(check.stdout).toContain('tool metadata: the daemon');
    const reset = await runCli(['policy', 'reset'], env);
    expect(reset.code).toBe(0);
    expect((await d.http('GET', '/v1/policy')).body.user.rules).toEqual([]);
  });
});

describe('a broken admin policy refuses the start', () => {
  it('a rule whose example fails: E_INVALID_ARGS naming the rule', async () => {
    const err = await startTestDaemon({
      config: { log: { level: 'silent' } },
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        const policy = {
          version: 1,
          rules: [
            {
              id: 'bad-example',
              tool: 'shell.exec',
              match: { command: 'rm -rf *' },
              level: 'DENY',
              examples: { match: [{ tool: 'shell.exec', args: { command: 'ls' } }] },
            },
          ],
        };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
      },
    }).then(
      async (d) => {
        await d.close();
        return undefined;
      },
      (e: unknown) => e as { code?: string; message: string },
    );
    expect(err?.code).toBe('E_INVALID_ARGS');
    expect(err?.message).toContain('bad-example');
  });
});

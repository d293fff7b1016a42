// The OS boundary of AI-initiated processes, through the real daemon: a shell command run for an
// agent, a stdio module and an MCP server each start detached descendants (`setsid -f`, `nohup`, a
// double fork); the timeout, a cancel and the kill switch leave none alive. A script written by one
// call and run by a later one (a program the firewall cannot see inside) finds no token and cannot
// unmount or remount what hides it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { banner, build } from '@finger/daemon';
import { pidsWith, sandboxForTests, startTestDaemon, tempDir, type TestDaemon, waitUntil } from '@finger/testkit';

const GRANDCHILD_MODULE = fileURLToPath(new URL('../fixtures/modules/grandchild/', import.meta.url));
const GRANDCHILD_MCP = fileURLToPath(new URL('../fixtures/mcp/grandchild-server.mjs', import.meta.url));

let seq = 0;
/** A `sleep` argument no other process has: `300.<pid><n>`. */
const marker = () => `300.${process.pid}${++seq}${Date.now() % 1000}`;

/** Waits (bounded) until every marker has a live process: the descendants really started. */
function started(markers: string[], what: string): Promise<void> {
  return waitUntil(`${what} to start`, () => markers.every((m) => pidsWith(m).length > 0), 15_000, 25);
}

/** Leftovers after a failed assertion are killed so they do not outlive the test run. */
function reap(markers: string[]): void {
  for (const m of markers) for (const p of pidsWith(m)) process.kill(p, 'SIGKILL');
}

const alive = (markers: string[]) => markers.filter((m) => pidsWith(m).length > 0);

/** A command that leaves three kinds of detached descendants behind, then waits. */
const detaching = (a: string, b: string, c: string) =>
  `setsid -f sleep ${a}; nohup sleep ${b} >/dev/null 2>&1 & (sh -c "sleep ${c} &" &); sleep 600`;

describe.skipIf(!sandboxForTests())('sandbox: children die with their call, the token stays hidden', () => {
  let d: TestDaemon;
  let agent: string;
  let stopApprover = false;
  let approver: Promise<void>;

  beforeAll(async () => {
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        safety: { halt_grace_ms: 200 },
        sandbox: { mode: 'required' },
        modules: { paths: [GRANDCHILD_MODULE] },
        mcp: { servers: [{ name: 'gc', transport: 'stdio', command: [process.execPath, GRANDCHILD_MCP] }] },
      },
    });
    agent = await d.token('agent:executor', 'sandbox-agent');
    // a person approves whatever the agent's calls are held for: the boundary under test is the OS one
    approver = (async () => {
      while (!stopApprover) {
        const list = await d.http<{ approvals: { id: string }[] }>('GET', '/v1/approvals');
        for (const a of list.body.approvals ?? [])
          await d.http('POST', `/v1/approvals/${a.id}`, { decision: 'approve' });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
  });
  afterAll(async () => {
    stopApprover = true;
    await approver;
    await d?.close();
  });

  const asAgent = (args: Record<string, unknown>) =>
    d.http<any>('POST', '/v1/tools/shell.exec/run', { args, timeout_ms: 120_000 }, agent);

  it('the daemon reports an active sandbox in /v1/health', async () => {
    const h = await d.http<any>('GET', '/v1/health');
    expect(h.body.sandbox).toMatchObject({ mode: 'required', available: true, active: true });
  });

  it('timeout_ms: setsid -f, nohup and double-forked sleeps are gone when E_TIMEOUT answers', async () => {
    const ms = [marker(), marker(), marker()];
    const call = asAgent({ command: detaching(ms[0]!, ms[1]!, ms[2]!), timeout_ms: 3000 });
    try {
      await started(ms, 'the detached sleeps');
      const r = await call;
      expect([r.status, r.body.error?.code]).toEqual([504, 'E_TIMEOUT']);
      expect(alive(ms)).toEqual([]);
    } finally {
      reap(ms);
    }
  });

  it('a script written by one call and run by a later one finds no token and cannot unmount what hides it', async () => {
    const token = `${d.home}/token`;
    expect(readFileSync(token, 'utf8').length).toBeGreaterThan(0); // outside the sandbox it is there
    const script = [
      `p=$(echo ${Buffer.from(token).toString('base64')} | base64 -d)`,
      'cat "$p" 2>/dev/null; echo "cat=$?"',
      'ls -A "$(dirname "$p")" | grep -c . ; ',
      'umount "$(dirname "$p")" 2>/dev/null; echo "umount=$?"',
      'mount -o remount,rw / 2>/dev/null; echo "remount=$?"',
      'cat "$p" 2>/dev/null; echo "again=$?"',
    ].join('\n');
    const write = await asAgent({ argv: ['sh', '-c', 'cat > peek.sh', 'peek'], stdin: script });
    expect([write.status, write.body.result?.exit_code]).toEqual([200, 0]);
    const r = await asAgent({ argv: ['sh', 'peek.sh'] });
    expect(r.status).toBe(200);
    const out = r.body.result.stdout as string;
    expect(out).not.toContain(readFileSync(token, 'utf8').trim());
    expect(out).toMatch(/^cat=1\n0\numount=[1-9]\d*\nremount=[1-9]\d*\nagain=1\n$/);
  });

  it('stdio module: a grandchild that left the group is gone once a cancelled call is killed at its module', async () => {
    const m = marker();
    const call = d.http<any>('POST', '/v1/tools/grandchild.spawn/run', { args: { marker: m }, timeout_ms: 1500 });
    try {
      await started([m], 'the module grandchild');
      const r = await call;
      expect([r.status, r.body.error?.code]).toEqual([504, 'E_TIMEOUT']);
      // the hub cancelled the call; the module ignores cancels, so its sandbox is killed after the grace
      await waitUntil('the module grandchild to be killed', () => alive([m]).length === 0, 15_000, 25);
      expect(alive([m])).toEqual([]);
    } finally {
      reap([m]);
    }
  });

  it('halt answers only once no descendant of a shell call, a stdio module or an MCP server is alive', async () => {
    const sh = [marker(), marker(), marker()];
    const mod = marker();
    const mcp = marker();
    const calls = [
      asAgent({ command: detaching(sh[0]!, sh[1]!, sh[2]!) }),
      d.http<any>('POST', '/v1/tools/grandchild.spawn/run', { args: { marker: mod }, timeout_ms: 120_000 }),
      d.http<any>('POST', '/v1/tools/mcp.gc.spawn/run', { args: { marker: mcp }, timeout_ms: 120_000 }),
    ];
    const all = [...sh, mod, mcp];
    try {
      await started(all, 'every descendant');
      const halt = await d.http<any>('POST', '/v1/halt', { reason: 'sandbox e2e' });
      expect(halt.status).toBe(200);
      expect(alive(all)).toEqual([]);
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.body.error?.code)).toEqual(['E_HALTED', 'E_HALTED', 'E_HALTED']);
    } finally {
      reap(all);
      await d.http('POST', '/v1/unlock', {});
    }
  });
});

describe('sandbox: where none can run', () => {
  // a PATH without bubblewrap: what a host without it looks like to the daemon
  const env = { PATH: '/nonexistent-finger-bin' };

  it('mode required refuses the daemon start with E_NO_SANDBOX naming why', async () => {
    const home = await tempDir('finger-nosb-');
    try {
      const e: unknown = await build({
        home: home.path,
        env,
        config: { log: { level: 'silent' }, sandbox: { mode: 'required' } },
      }).then(
        async (app) => {
          await app.close();
          return 'started';
        },
        (err: unknown) => err,
      );
      expect(e).toMatchObject({
        code: 'E_NO_SANDBOX',
        details: { reason: 'bubblewrap ("bwrap") not found on PATH: install the bubblewrap package' },
      });
    } finally {
      await home.remove();
    }
  });

  it('mode auto starts, says so loudly, and reports the state in /v1/health', async () => {
    await using d = await startTestDaemon({ env, config: { log: { level: 'silent' } } });
    const h = await d.http<any>('GET', '/v1/health');
    expect(h.body.sandbox).toEqual({
      mode: 'auto',
      available: false,
      active: false,
      reason: 'bubblewrap ("bwrap") not found on PATH: install the bubblewrap package',
      profiles: {
        'workspace-write': {
          available: false,
          reason: 'bubblewrap ("bwrap") not found on PATH: install the bubblewrap package',
        },
      },
    });
    expect(banner(d.app, d.url)).toContain(
      'WARNING no sandbox: bubblewrap ("bwrap") not found on PATH: install the bubblewrap package; agents can read finger\'s files',
    );
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { connectEvents, runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

/** testkit's waitFor with this file's argument order. */
const until = <T>(fn: () => Promise<T | undefined> | T | undefined, what: string, ms = 10_000): Promise<T> =>
  waitFor(what, async () => fn(), ms, 20);

const SH1 = `300.${process.pid}1`;
const SH2 = `300.${process.pid}2`;

/** The host pid of the (non-zombie) process whose argv holds `marker`, if any. */
function hostPidOf(marker: string): number | undefined {
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(marker)) return Number(p);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * A stdio module of concurrency 1: `block` writes its pid and never answers (ignores cancel);
 * `record` appends its call id to calls.log — so a queued call that ever starts leaves a line.
 */
const QUEUE_MODULE = `
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const send = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.type === 'ping') return send({ type: 'pong', id: m.id });
  if (m.type !== 'call') return;
  if (m.tool === 'block') return writeFileSync('block.pid', String(process.pid));
  appendFileSync('calls.log', m.id + '\\n');
  send({ type: 'result', id: m.id, result: { ok: true } });
});
`;

async function prepareQueueModule(home: string): Promise<void> {
  const dir = join(home, 'qmod');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'main.mjs'), QUEUE_MODULE);
  const manifest = {
    id: 'qmod',
    name: 'queue module',
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'stdio', command: [process.execPath, 'main.mjs'], cwd: '.' },
    tools: [
      { name: 'block', description: 'never answers', input_schema: { type: 'object' }, timeout_ms: 600_000 },
      { name: 'record', description: 'records the call', input_schema: { type: 'object' }, timeout_ms: 600_000 },
    ],
    concurrency: 1,
    lease: { ttl_ms: 600_000 },
  };
  await writeFile(join(dir, 'module.json'), JSON.stringify(manifest));
}

describe('kill switch end to end: halt, lockout across a restart, unlock (real children)', () => {
  // The two tests stand alone: each has a daemon of its own (the restart test halts its own first).
  let d: TestDaemon;
  let first: TestDaemon | undefined;
  let restarted: FingerApp | undefined;
  let operator: string;
  const config = {
    log: { level: 'silent' as const },
    safety: { halt_grace_ms: 400 },
    modules: { paths: ['qmod'] },
  };

  beforeAll(async () => {
    d = await startTestDaemon({ keepHome: true, config, prepareHome: prepareQueueModule });
    operator = await d.token('operator', 'op-1');
  });
  afterAll(async () => {
    await restarted?.close();
    for (const x of [d, first]) {
      await x?.close();
      if (x) await rm(x.home, { recursive: true, force: true });
      if (x) await rm(x.workspace, { recursive: true, force: true });
    }
  });

  it('halt: 5 calls in flight + 100 queued → children gone, no queued call starts, every caller gets E_HALTED', async () => {
    const ws = await d.events();
    await ws.subscribe({ types: ['HALTED'] });
    const ws2 = d.workspace;
    const run = (tool: string, args: unknown) =>
      d.http<{ error?: { code: string } }>('POST', `/v1/tools/${tool}/run`, { args, timeout_ms: 600_000 });
    const inflight = [
      run('pyworker.sleep', { ms: 300_000 }),
      run('pyworker.ignore_cancel_sleep', { ms: 300_000 }),
      run('shell.exec', { command: `echo $$ > ${ws2}/sh1.pid; exec sleep ${SH1}` }),
      run('shell.exec', { command: `echo $$ > ${ws2}/sh2.pid; exec sleep ${SH2}` }),
      run('qmod.block', {}),
    ];
    const blockPid = await until(
      () => readFile(join(d.home, 'qmod', 'block.pid'), 'utf8').then(Number, () => undefined),
      'qmod.block to start',
    );
    const queued = Array.from({ length: 100 }, (_, i) => run('qmod.record', { i }));
    // by the command line: inside the sandbox $$ is a pid of its own PID namespace
    const sh1 = await until(() => hostPidOf(SH1), 'sh1');
    const sh2 = await until(() => hostPidOf(SH2), 'sh2');
    const modules = await until(async () => {
      const m = (await d.http<{ modules: { id: string; inflight: number; queued: number }[] }>('GET', '/v1/modules'))
        .body.modules;
      const q = m.find((x) => x.id === 'qmod');
      const py = m.find((x) => x.id === 'pyworker');
      return q?.queued === 100 && py?.inflight === 2 ? m : undefined;
    }, '100 queued calls and 2 pyworker calls in flight');
    expect(modules.find((x) => x.id === 'shell')?.inflight).toBe(2);
    const pyPid = (d.app.hub.registry.runtimeOf('pyworker') as unknown as { stats(): { pid: number } }).stats().pid;
    // the module's own pid file names its pid inside the sandbox: the runtime knows the host's
    const qPid = (d.app.hub.registry.runtimeOf('qmod') as unknown as { stats(): { pid: number } }).stats().pid;
    expect(blockPid).toBeGreaterThan(0);
    const pids = [pyPid, qPid, sh1, sh2];
    expect(pids.every(alive)).toBe(true);

    const cli = await runCli(['halt', '--reason', 'e2e'], { FINGER_HOME: d.home, FINGER_TOKEN: operator });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('halted (graceful)');
    await until(() => (pids.some(alive) ? undefined : true), 'every child gone', 2000);

    const answers = await Promise.all([...inflight, ...queued]);
    expect(answers.map((a) => `${a.status} ${a.body.error?.code}`)).toEqual(Array<string>(105).fill('423 E_HALTED'));
    // nothing left that could still start: no call queued or running at qmod
    await until(async () => {
      const m = (await d.http<{ modules: { id: string; inflight: number; queued: number }[] }>('GET', '/v1/modules'))
        .body.modules;
      const q = m.find((x) => x.id === 'qmod');
      return q?.queued === 0 && q.inflight === 0 ? true : undefined;
    }, 'qmod idle');
    expect(await readFile(join(d.home, 'qmod', 'calls.log'), 'utf8').catch(() => '')).toBe('');

    await ws.waitFor((m) => m.some((x) => x.type === 'event' && x.event.type === 'HALTED'), 'HALTED');
    const audit = (await d.http<{ entries: any[] }>('GET', '/v1/audit?type=halt')).body.entries;
    expect(audit.at(-1)).toMatchObject({ type: 'halt', actor: { kind: 'human', id: 'op-1' } });
    const refused = await run('pyworker.echo', {});
    expect([refused.status, refused.body.error?.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    const input = await d.http<{ error?: { code: string } }>('POST', '/v1/messages', { target: 'echo', payload: {} });
    expect([input.status, input.body.error?.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    const text = await d.http<{ error?: { code: string } }>('POST', '/v1/input', { text: '/hub echo {}' });
    expect([text.status, text.body.error?.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    const task = await d.http<{ error?: { code: string } }>('POST', '/v1/tasks', {
      text: 'do something',
      workspace: ws2,
    });
    expect([task.status, task.body.error?.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    // reads, health, audit and approvals still work
    for (const path of ['/v1/modules', '/v1/health', '/v1/audit', '/v1/approvals', '/v1/tasks'])
      expect([path, (await d.http('GET', path)).status]).toEqual([path, 200]);
    await ws.close();
  });

  it('after a restart on the same home: still E_SAFETY_LOCKOUT; operator unlock E_FORBIDDEN; admin unlock works', async () => {
    const d = (first = await startTestDaemon({ keepHome: true, config, prepareHome: prepareQueueModule }));
    const operator = await d.token('operator', 'op-1');
    expect((await d.http('POST', '/v1/halt', { reason: 'e2e' }, operator)).status).toBe(200);
    await d.close();
    restarted = await build({
      home: d.home,
      env: {},
      config: { ...config, server: { host: '127.0.0.1', port: 0 }, workspace: { roots: [d.workspace] } },
    });
    const { url } = await restarted.listen();
    const http = async (method: string, path: string, body: unknown, token: string) => {
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const echo = () => http('POST', '/v1/tools/pyworker.echo/run', { args: { x: 1 } }, d.adminToken);
    expect(await echo()).toMatchObject({ status: 423, body: { error: { code: 'E_SAFETY_LOCKOUT' } } });
    const health = await http('GET', '/v1/health', undefined, d.adminToken);
    expect(health.body.safety).toMatchObject({
      state: 'locked',
      locked: true,
      lockout: { cause: 'halt', by: 'human:op-1' },
    });
    const status = await runCli(['daemon', 'status'], { FINGER_HOME: d.home, FINGER_TOKEN: d.adminToken });
    expect(status.stdout).toMatch(/safety\s+SAFETY_LOCKOUT \(halt by human:op-1/);
    // the first line already says it takes no work
    expect(status.stdout.split('\n')[0]).toBe('finger daemon ok — locked, refusing work');

    const ws = await connectEvents(url, d.adminToken);
    await ws.subscribe({ types: ['UNLOCKED', 'HALTED'] });
    const denied = await runCli(['unlock'], { FINGER_HOME: d.home, FINGER_TOKEN: operator });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('E_FORBIDDEN');
    expect((await http('POST', '/v1/unlock', {}, operator)).body.error.code).toBe('E_FORBIDDEN');
    const ok = await runCli(['unlock'], { FINGER_HOME: d.home, FINGER_TOKEN: d.adminToken });
    expect(ok.stdout).toContain('unlocked the system');
    await ws.waitFor((m) => m.some((x) => x.type === 'event' && x.event.type === 'UNLOCKED'), 'UNLOCKED');
    const unlockEvent = ws.messages.find((x) => x.type === 'event' && x.event.type === 'UNLOCKED');
    expect(unlockEvent?.event.data.by).toMatch(/^human:/);
    const audit = (await http('GET', '/v1/audit?type=unlock', undefined, d.adminToken)).body.entries;
    expect(audit.at(-1)).toMatchObject({ type: 'unlock', actor: { kind: 'human' } });
    expect(await echo()).toMatchObject({ status: 200, body: { result: { x: 1 } } });

    // the WebSocket kill switch: viewer refused, operator halts
    const viewer = (await http('POST', '/v1/tokens', { name: 'v-1', role: 'viewer' }, d.adminToken)).body.token;
    const vws = await connectEvents(url, viewer);
    vws.send({ op: 'halt' });
    await vws.waitFor((m) => m.some((x) => x.type === 'error'), 'error frame');
    expect(vws.messages.find((x) => x.type === 'error')?.error.code).toBe('E_FORBIDDEN');
    await vws.close();
    const ows = await connectEvents(url, operator);
    ows.send({ op: 'halt' });
    await ows.waitFor((m) => m.some((x) => x.type === 'halted'), 'halted');
    await ows.close();
    expect(await echo()).toMatchObject({ status: 423, body: { error: { code: 'E_SAFETY_LOCKOUT' } } });
    await ws.waitFor((m) => m.some((x) => x.type === 'event' && x.event.type === 'HALTED'), 'HALTED over ws');
    await ws.close();
  });
});

describe('breakers through the real daemon (agent tokens)', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' } } });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('error cascade: the 8th error of the last 10 operations locks the agent, not the 7th', async () => {
    const agent = await d.token('agent:executor', 'cascade-bot');
    const run = (tool: string, args: unknown) => d.http<any>('POST', `/v1/tools/${tool}/run`, { args }, agent);
    for (let i = 0; i < 7; i++) {
      const r = await run('pyworker.fail', { code: 'E_MODULE_ERROR', message: `m${i}` });
      expect(r.body.error.code).toBe('E_MODULE_ERROR');
    }
    expect((await run('pyworker.echo', { still: 'open' })).body.result).toEqual({ still: 'open' });
    expect((await run('pyworker.fail', { code: 'E_MODULE_ERROR', message: 'm7' })).body.error.code).toBe(
      'E_MODULE_ERROR',
    );
    const locked = await run('pyworker.echo', {});
    expect([locked.status, locked.body.error.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    const health = await d.http<any>('GET', '/v1/health');
    expect(health.body.safety.agents_locked).toContain('cascade-bot');
    expect(health.body.safety.breakers.cascade_bot ?? health.body.safety.breakers['cascade-bot']).toMatchObject({
      status: 'error_paused',
    });
    const trips = (await d.http<any>('GET', '/v1/audit?type=breaker.tripped')).body.entries;
    expect(trips.at(-1)).toMatchObject({
      actor: { kind: 'agent', id: 'cascade-bot' },
      details: { breaker: 'error_cascade' },
    });
    // another agent is not affected; an admin unlocks this one
    const other = await d.token('agent:executor', 'other-bot');
    expect((await d.http<any>('POST', '/v1/tools/pyworker.echo/run', { args: {} }, other)).status).toBe(200);
    expect((await d.http<any>('POST', '/v1/unlock', { agent_id: 'cascade-bot' })).body.unlocked).toBe(true);
    expect((await run('pyworker.echo', { again: 1 })).body.result).toEqual({ again: 1 });
  });

  it('denial breaker: the 3rd consecutive denial stops the agent with a summary, not the 2nd', async () => {
    const agent = await d.token('agent:reviewer', 'denied-bot');
    const call = () => d.http<any>('POST', '/v1/tools/shell.exec/run', { args: { command: 'true' } }, agent);
    expect((await call()).body.error.code).toBe('E_FORBIDDEN');
    expect((await call()).body.error.code).toBe('E_FORBIDDEN');
    expect((await d.http<any>('GET', '/v1/health')).body.safety.agents_locked).not.toContain('denied-bot');
    expect((await call()).body.error.code).toBe('E_FORBIDDEN');
    const fourth = await call();
    expect([fourth.status, fourth.body.error.code]).toEqual([423, 'E_SAFETY_LOCKOUT']);
    const health = await d.http<any>('GET', '/v1/health');
    expect(health.body.safety.agents.find((a: any) => a.agent_id === 'denied-bot')).toMatchObject({
      breaker: 'denial',
      reason: '3 denials: shell.exec (E_FORBIDDEN) ×3',
    });
    const status = await runCli(['daemon', 'status'], { FINGER_HOME: d.home, FINGER_TOKEN: d.adminToken });
    expect(status.stdout).toContain('agent denied-bot locked (denial): 3 denials: shell.exec (E_FORBIDDEN) ×3');
  });
});

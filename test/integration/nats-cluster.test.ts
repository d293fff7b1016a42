import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { connectNats, NatsTransport, serveKeyOf, WireAuth } from '@finger/hub/nats';
import type { Envelope, FingerEvent } from '@finger/protocol';
import {
  MYFINGER_BIN,
  natsUrlForTests,
  requestEnvelope,
  runCli,
  startTestDaemon,
  testClusterName,
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

const url = await natsUrlForTests();
const FIXTURES = fileURLToPath(new URL('../fixtures/modules/', import.meta.url));
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const PYWORKER = fileURLToPath(new URL('../../modules/pyworker/module.json', import.meta.url));
const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const KEY = 'nats-cluster-test-key-0123456789';
const cluster = testClusterName('cl');
const natsConfig = { url: url!, cluster_key: KEY, heartbeat_ms: 200, unhealthy_after_ms: 800 };

/** A `myfinger module serve` child process. */
interface Replica {
  child: ChildProcess;
  node: string;
  stopped: Promise<number | null>;
}

async function serveReplica(manifest = PROBE, id = 'remote-probe'): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [MYFINGER_BIN, 'module', 'serve', manifest, '--nats', url!, '--cluster', cluster, '--heartbeat-ms', '200'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FINGER_SERVE_KEY: serveKeyOf(KEY, id) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stopped = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const node = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`module serve did not start: ${out} ${err}`)), 15_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = new RegExp(`serving ${id} on cluster \\S+ as (\\S+)`).exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    void stopped.then((code) => reject(new Error(`module serve exited ${code}: ${out} ${err}`)));
  });
  return { child, node, stopped };
}

/** testkit's waitFor for a condition (`false` is "not yet"), bounded. */
const until = <T>(fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> =>
  waitFor('the cluster condition', async () => (await fn()) || undefined, ms);

type ModuleRow = { id: string; location?: string; nodes?: { node: string; healthy: boolean }[] };
const nodesOf = async (d: TestDaemon, id: string) => {
  const list = (await d.http<{ modules: ModuleRow[] }>('GET', '/v1/modules')).body.modules;
  return (
    list
      .find((m) => m.id === id)
      ?.nodes?.filter((n) => n.healthy)
      .map((n) => n.node) ?? []
  );
};

/** A person's direct `/hub` dispatch (the firewall does not hold it for approval). */
const call = (d: TestDaemon, payload: unknown, timeout_ms = 3000) =>
  d.http('POST', '/v1/input', {
    text: `/hub target=remote-probe.where timeout=${timeout_ms} ${JSON.stringify(payload)}`,
  });

describe.skipIf(!url)('two daemons and module serve processes on one NATS', () => {
  let a: TestDaemon;
  let b: TestDaemon;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    const config = { nats: natsConfig, cluster, modules: { builtin: false, paths: [`${FIXTURES}/whoami`] } };
    a = await startTestDaemon({ config });
    b = await startTestDaemon({ config: { ...config, modules: { builtin: false, paths: [] } } });
    replicas.push(await serveReplica());
  });
  afterAll(async () => {
    for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
    await a?.close();
    await b?.close();
  });

  it('a /hub call sent to daemon A reaches the module served by another process', async () => {
    await until(async () => (await nodesOf(a, 'remote-probe')).includes(replicas[0]!.node));
    const r = await a.http('POST', '/v1/input', { text: '/hub target=remote-probe.where {"n":1}' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'succeeded', target: 'remote-probe.where', result: { echo: { n: 1 } } });
    expect(r.body.result.pid).toBe(replicas[0]!.child.pid);
    // daemon B sees it too, and module list says where it runs
    await until(async () => (await nodesOf(b, 'remote-probe')).length > 0);
    const cli = await runCli(['module', 'list'], { FINGER_HOME: a.home });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(new RegExp(`remote-probe\\s+1\\.0\\.0\\s+nats\\s+${replicas[0]!.node}`));
    expect(cli.stdout).toMatch(/whoami\s+1\.0\.0\s+inprocess\s+local/);
  });

  it('shares 1,000 calls between two replicas', async () => {
    replicas.push(await serveReplica());
    await until(async () => (await nodesOf(a, 'remote-probe')).length === 2);
    const byPid = new Map<number, number>();
    for (let batch = 0; batch < 20; batch++) {
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => call(batch % 2 ? a : b, { i })));
      for (const r of rs) {
        expect(r.status).toBe(200);
        byPid.set(r.body.result.pid, (byPid.get(r.body.result.pid) ?? 0) + 1);
      }
    }
    expect([...byPid.keys()].sort()).toEqual([replicas[0]!.child.pid, replicas[1]!.child.pid].sort());
    expect([...byPid.values()].reduce((x, y) => x + y)).toBe(1000);
    for (const n of byPid.values()) expect(n).toBeGreaterThan(0);
  });

  it('loses no call when a replica is killed mid-run: each completes or fails with a clear code', async () => {
    const victim = replicas[1]!;
    let done = 0;
    const outcomes: string[] = [];
    const run = async (i: number) => {
      const r = await call(a, { i }, 2000);
      done++;
      outcomes.push(r.status === 200 ? 'ok' : (r.body.error?.code ?? `status ${r.status}`));
    };
    const all = Promise.all(Array.from({ length: 300 }, (_, i) => run(i)));
    await until(() => done >= 60);
    victim.child.kill('SIGKILL');
    await all;
    expect(outcomes).toHaveLength(300);
    const codes = new Set(outcomes);
    for (const c of codes) expect(['ok', 'E_TIMEOUT', 'E_NO_TARGET', 'E_MODULE_UNHEALTHY']).toContain(c);
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThan(60);
    // the survivor takes every later call
    await until(async () => (await nodesOf(a, 'remote-probe')).length === 1);
    const after = await call(a, { after: true });
    expect(after.status).toBe(200);
    expect(after.body.result.pid).toBe(replicas[0]!.child.pid);
  });

  it('drops unauthenticated envelopes with a DEGRADED event and refuses requests from serve processes', async () => {
    const seen: FingerEvent[] = [];
    const stop = a.app.events.subscribe({ types: ['DEGRADED'] }, (e) => seen.push(e));
    const nc = await connectNats({ url: url! });
    const envelope = (): Envelope =>
      requestEnvelope(
        'whoami.whoami',
        {},
        {
          deadline: Date.now() + 1000,
          source: { kind: 'human', id: 'admin', roles: ['admin'] },
        },
      );

    try {
      const forger = new NatsTransport({
        connection: nc,
        cluster,
        auth: new WireAuth({ role: 'daemon', node: 'forger', cluster_key: 'wrong-key-wrong-key-wrong' }),
      });
      await expect(forger.request(envelope())).rejects.toMatchObject({ code: 'E_TIMEOUT' });
      const serve = new NatsTransport({
        connection: nc,
        cluster,
        auth: new WireAuth({ role: 'serve', node: 'impostor', serve_key: serveKeyOf(KEY, 'remote-probe') }),
      });
      const reply = await serve.request(envelope());
      expect(reply.error).toMatchObject({ code: 'E_FORBIDDEN' });
      expect(reply.payload).toBeNull();
      await until(() => seen.some((e) => e.data.reason === 'bad signature'));
      expect(seen.map((e) => e.data)).toContainEqual(
        expect.objectContaining({
          component: 'nats',
          kind: 'envelope_dropped',
          reason: 'request originated by a module serve process',
          node: 'impostor',
          role: 'serve',
        }),
      );
      await forger.close();
      await serve.close();
    } finally {
      stop();
      await nc.drain();
    }
  });

  it('shows the events of every daemon to a WebSocket subscriber on any daemon, once', async () => {
    const ws = await a.events();
    try {
      await ws.subscribe({ types: ['DEGRADED'] });
      const sent = b.app.events.emit('DEGRADED', {}, { component: 'test', from: 'b' });
      // a second event from B, bridged after the first on the same subject: once it is here, a
      // duplicate of the first would be too (no fixed sleep to wait for one)
      const after = b.app.events.emit('DEGRADED', {}, { component: 'test', from: 'b', marker: true });
      await ws.waitFor((m) => m.some((x) => x.type === 'event' && x.event.id === after.id), 'the later bridged event');
      const copies = ws.messages.filter((x) => x.type === 'event' && x.event.id === sent.id);
      expect(copies).toHaveLength(1);
      // as emitted on B, naming B as its origin
      expect(copies[0]!.event).toEqual({ ...JSON.parse(JSON.stringify(sent)), origin: b.app.cluster!.status().node });
    } finally {
      await ws.close();
    }
  });

  it('answering an approval this daemon does not hold says where held calls are answered', async () => {
    const res = await a.http<{ error: { code: string; message: string; details: { node: string } } }>(
      'POST',
      '/v1/approvals/01HELDELSEWHERE0000000000',
      { decision: 'approve' },
    );
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('E_NOT_FOUND');
    expect(res.body.error.details.node).toBe(a.app.cluster!.status().node);
    expect(res.body.error.message).toMatch(
      /^no pending approval 01HELDELSEWHERE0000000000 on this daemon \(node daemon-[^)]+\): a held call is answered on the daemon that holds it/,
    );
  });

  it('serves a stdio module (Python) too, with cancels reaching it past the deadline', async () => {
    const py = await serveReplica(PYWORKER, 'pyworker');
    replicas.push(py);
    await until(async () => (await nodesOf(a, 'pyworker')).includes(py.node));
    const echo = await a.http('POST', '/v1/input', { text: '/hub target=pyworker.echo {"from":"a"}' });
    expect(echo.status).toBe(200);
    expect(echo.body.result).toEqual({ from: 'a' });
    const slow = await a.http('POST', '/v1/input', { text: '/hub target=pyworker.sleep timeout=300 {"ms":20000}' });
    expect(slow.body.error.code).toBe('E_TIMEOUT');
    // the worker took the cancel and is free again
    const again = await a.http('POST', '/v1/input', { text: '/hub target=pyworker.echo {"n":2}' });
    expect(again.body.result).toEqual({ n: 2 });
    py.child.kill('SIGTERM');
    expect(await py.stopped).toBe(0);
  });

  it('serves an MCP server too: the tools it lists reach the daemons, and calls to them answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'finger-serve-mcp-'));
    try {
      const manifest = join(dir, 'module.json');
      writeFileSync(
        manifest,
        JSON.stringify({
          id: 'mcp.every',
          name: 'server-everything',
          version: '1.0.0',
          kind: 'tool',
          runtime: { type: 'mcp', transport: 'stdio', command: [process.execPath, EVERYTHING, 'stdio'] },
          tools: [],
        }),
      );
      const mcp = await serveReplica(manifest, 'mcp.every');
      replicas.push(mcp);
      await until(async () => (await nodesOf(a, 'mcp.every')).includes(mcp.node));
      // the daemon knows the tools the server listed at the host (the manifest names none)
      const tools = await b.http<{ tools: { id: string }[] }>('GET', '/v1/tools');
      expect(tools.body.tools.map((t) => t.id)).toEqual(
        expect.arrayContaining(['mcp.every.echo', 'mcp.every.get-sum']),
      );
      const echo = await b.http('POST', '/v1/input', { text: '/hub target=mcp.every.echo {"message":"hi"}' });
      expect(echo.status).toBe(200);
      expect(echo.body.result).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] });
      mcp.child.kill('SIGTERM');
      expect(await mcp.stopped).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('module serve drains and exits 0 on SIGTERM; the module disappears from the cluster', async () => {
    const r = replicas[0]!;
    r.child.kill('SIGTERM');
    expect(await r.stopped).toBe(0);
    await until(async () => {
      const list = (await a.http<{ modules: ModuleRow[] }>('GET', '/v1/modules')).body.modules;
      return !list.some((m) => m.id === 'remote-probe');
    });
    const gone = await call(a, {});
    expect(gone.body.error.code).toBe('E_NO_TARGET');
  });
});

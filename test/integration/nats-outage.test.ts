import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FingerEvent } from '@finger/protocol';
import {
  binaryForTests,
  firstBytes,
  freePort,
  natsServerBinary,
  natsUrlForTests,
  startTestDaemon,
  testClusterName,
  type TestDaemon,
  waitUntil,
} from '@finger/testkit';

// The system nats-server on 4222 is shared: this test stops and restarts a private one.
const bin = binaryForTests(natsServerBinary(), 'NATS outage tests', 'no nats-server binary (set NATS_SERVER_BIN)');
// still honour the shared skip/require rule for NATS itself
const shared = bin === undefined ? undefined : await natsUrlForTests();

const FIXTURES = fileURLToPath(new URL('../fixtures/modules/', import.meta.url));
const KEY = 'nats-outage-test-key-0123456789';

let server: ChildProcess | undefined;
let port = 0;

async function startServer(): Promise<void> {
  server = spawn(bin!, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  await answersInfo(port);
}

/** Until the nats-server on `at` answers with its INFO line. */
function answersInfo(at: number): Promise<void> {
  return waitUntil(
    `the private nats-server on port ${at} to answer INFO`,
    async () => (await firstBytes(`nats://127.0.0.1:${at}`, 300))?.startsWith('INFO ') === true,
    10_000,
    50,
  );
}

async function stopServer(): Promise<void> {
  const s = server;
  server = undefined;
  if (s === undefined || s.exitCode !== null) return;
  const exited = new Promise((r) => s.once('exit', r));
  s.kill('SIGKILL');
  await exited;
}

const until = (what: string, fn: () => Promise<boolean>, ms: number): Promise<void> => waitUntil(what, fn, ms, 50);

describe.skipIf(bin === undefined || shared === undefined)('NATS outage: stop and restart nats-server', () => {
  let a: TestDaemon;
  let b: TestDaemon;
  const degraded: FingerEvent[] = [];

  beforeAll(async () => {
    port = await freePort();
    await startServer();
    const cluster = testClusterName('out');
    const nats = { url: `nats://127.0.0.1:${port}`, cluster_key: KEY, heartbeat_ms: 200, unhealthy_after_ms: 800 };
    a = await startTestDaemon({
      config: { nats, cluster, modules: { builtin: false, paths: [`${FIXTURES}/whoami`] } },
    });
    b = await startTestDaemon({
      config: { nats, cluster, modules: { builtin: false, paths: [`${FIXTURES}/remote-probe`] } },
    });
    a.app.events.subscribe({ types: ['DEGRADED'] }, (e) => degraded.push(e));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await stopServer();
  });

  const remote = () =>
    a.http('POST', '/v1/input', { text: '/hub target=remote-probe.where timeout=1500 {}' }) as Promise<{
      status: number;
      body: any;
    }>;

  it('fails remote calls fast while NATS is down, keeps local modules working, recovers within 5 s', async () => {
    await until('a remote call to succeed', async () => (await remote()).status === 200, 8000);
    await stopServer();
    // while down: every remote call errs with a clear code (never hangs), health says degraded
    await until(
      'health to say NATS is disconnected',
      async () => (await a.http('GET', '/v1/health')).body.nats?.connected === false,
      5000,
    );
    const health = await a.http('GET', '/v1/health');
    expect(health.body).toMatchObject({ status: 'degraded', nats: { connected: false } });
    for (let i = 0; i < 5; i++) {
      const r = await remote();
      expect(r.status).not.toBe(200);
      expect(['E_NO_TARGET', 'E_MODULE_UNHEALTHY', 'E_TIMEOUT']).toContain(r.body.error.code);
    }
    const local = await a.http('POST', '/v1/input', { text: '/hub target=whoami {}' });
    expect(local.status).toBe(200);
    expect(degraded.map((e) => e.data)).toContainEqual(
      expect.objectContaining({ component: 'nats', degraded: true, reason: 'NATS disconnected' }),
    );
    // back: success again within 5 s of the server's return
    await startServer();
    await until('a remote call to succeed again', async () => (await remote()).status === 200, 5000);
    expect((await a.http('GET', '/v1/health')).body.nats.connected).toBe(true);
    expect(degraded.map((e) => e.data)).toContainEqual(
      expect.objectContaining({ component: 'nats', degraded: false, reason: 'NATS reconnected' }),
    );
  });

  it('starts in-process when NATS is unreachable, says so, and joins once it is back', async () => {
    await stopServer();
    const c = await startTestDaemon({
      config: {
        nats: { url: `nats://127.0.0.1:${port}`, cluster_key: KEY },
        cluster: testClusterName('late'),
        modules: { builtin: false, paths: [`${FIXTURES}/whoami`] },
      },
    });
    try {
      const h = await c.http('GET', '/v1/health');
      expect(h.body).toMatchObject({ status: 'degraded', nats: { connected: false } });
      expect((await c.http('POST', '/v1/input', { text: '/hub target=whoami {}' })).status).toBe(200);
      await startServer();
      await until(
        'health to say NATS is connected',
        async () => (await c.http('GET', '/v1/health')).body.nats?.connected === true,
        8000,
      );
    } finally {
      await c.close();
    }
  });

  it('authenticates to NATS with a token from config; a wrong token leaves the daemon degraded', async () => {
    const authPort = await freePort();
    const authed = spawn(bin!, ['-a', '127.0.0.1', '-p', String(authPort), '--auth', 'nats-secret-token'], {
      stdio: 'ignore',
    });
    try {
      await answersInfo(authPort);
      const config = (token: string) => ({
        nats: { url: `nats://127.0.0.1:${authPort}`, cluster_key: KEY, token },
        cluster: testClusterName('auth'),
        modules: { builtin: false },
      });
      const good = await startTestDaemon({ config: config('nats-secret-token') });
      const bad = await startTestDaemon({ config: config('wrong-token') });
      try {
        expect((await good.http('GET', '/v1/health')).body.nats.connected).toBe(true);
        const h = (await bad.http('GET', '/v1/health')).body;
        expect(h).toMatchObject({ status: 'degraded', nats: { connected: false } });
        expect(h.nats.last_error).toMatch(/authorization/i);
      } finally {
        await good.close();
        await bad.close();
      }
    } finally {
      authed.kill('SIGKILL');
    }
  });

  it('refuses to start with nats.url but no cluster key (E_INVALID_ARGS)', async () => {
    await expect(
      startTestDaemon({ config: { nats: { url: `nats://127.0.0.1:${port}` }, modules: { builtin: false } } }),
    ).rejects.toMatchObject({ code: 'E_INVALID_ARGS' });
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { nkeys } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import {
  firstBytes,
  freePort,
  MYFINGER_BIN,
  natsServerBinary,
  runCli,
  startTestDaemon,
  tempDir,
  testClusterName,
  type TestDaemon,
} from '@finger/testkit';

// A private nats-server with users and permissions (the shared one on 4222 has no auth): the
// least-privilege permissions docs/operations.md gives for a `module serve` host are enough.
const bin = natsServerBinary();
if (bin === undefined && process.env.FINGER_REQUIRE_SERVICES === '1') {
  throw new Error('FINGER_REQUIRE_SERVICES=1 but no nats-server binary was found (set NATS_SERVER_BIN)');
}
if (bin === undefined)
  console.warn('\n!! SKIPPED: NATS permission tests — no nats-server binary (set NATS_SERVER_BIN)\n');

const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'nats-permissions-test-key-0123456789';
const DAEMON_PASS = 'daemon-pass-0123456789';
const PASS = 'restricted-pass-0123456789';
const cluster = testClusterName('perm');
let url = '';

/** Spawns `myfinger module serve` of the probe module with `args` and `env`; resolves how it ended. */
function serve(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    [MYFINGER_BIN, 'module', 'serve', PROBE, '--cluster', cluster, '--heartbeat-ms', '200', ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FINGER_SERVE_KEY: serveKeyOf(KEY), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += String(d)));
  child.stderr!.on('data', (d) => (out.stderr += String(d)));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out, exited };
}

const daemonConfig = (user: string, pass: string) => ({
  nats: { url, cluster_key: KEY, user, pass, heartbeat_ms: 200, unhealthy_after_ms: 800 },
  cluster,
  modules: { builtin: false, paths: [] },
});

const hasModule = async (d: TestDaemon, id: string) =>
  (await d.http<{ modules: { id: string }[] }>('GET', '/v1/modules')).body.modules.some((m) => m.id === id);

async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(bin === undefined)('NATS users and permissions', () => {
  let dir: string;
  let server: ChildProcess | undefined;
  let daemon: TestDaemon | undefined;
  let seedFile: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-nats-perm-'));
    const host = nkeys.createUser();
    seedFile = join(dir, 'serve.nk');
    writeFileSync(seedFile, new TextDecoder().decode(host.getSeed()), { mode: 0o600 });
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    const c = `finger.${cluster}`;
    const conf = join(dir, 'nats.conf');
    writeFileSync(
      conf,
      `listen: "127.0.0.1:${port}"
authorization {
  users = [
    { user: "daemon", password: "${DAEMON_PASS}", permissions: {
        publish: { allow: ["${c}.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.>", "_INBOX.>"] } } }
    { nkey: "${host.getPublicKey()}", permissions: {
        publish: { allow: ["${c}.registry.>", "${c}.events.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.call.remote-probe", "${c}.cancel", "${c}.registry.*"] } } }
    { user: "no-cancel", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.registry.>", "${c}.events.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.call.remote-probe", "${c}.registry.*"] } } }
    { user: "no-reply", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.registry.>", "${c}.events.>"] }
        subscribe: { allow: ["${c}.call.remote-probe", "${c}.cancel", "${c}.registry.*"] } } }
    { user: "no-registry", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.call.>", "${c}.cancel", "${c}.events.>", "_INBOX.>"] } } }
    { user: "no-inbox", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.>"] } } }
  ]
}
`,
    );
    server = spawn(bin!, ['-c', conf], { stdio: 'ignore' });
    await until(async () => (await firstBytes(url, 300))?.startsWith('INFO '), 5000);
    daemon = await startTestDaemon({ config: daemonConfig('daemon', DAEMON_PASS) });
  });

  afterAll(async () => {
    for (const ch of children) if (ch.exitCode === null) ch.kill('SIGKILL');
    await daemon?.close();
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves calls from a host allowed only its module's subjects (nkey seed), to a password-authenticated daemon", async () => {
    expect((await daemon!.http('GET', '/v1/health')).body.nats.connected).toBe(true);
    const host = serve(['--nats', url, '--nkey-seed', seedFile], {});
    children.push(host.child);
    await until(() => /serving remote-probe on cluster/.test(host.out.stdout) || host.child.exitCode !== null);
    expect(host.out.stderr).toBe('');
    await until(() => hasModule(daemon!, 'remote-probe'));
    for (let i = 0; i < 3; i++) {
      const r = await daemon!.http('POST', '/v1/input', {
        text: `/hub target=remote-probe.where timeout=3000 {"n":${i}}`,
      });
      expect(r.body).toMatchObject({ status: 'succeeded', result: { echo: { n: i }, pid: host.child.pid } });
    }
    // the server refused nothing the host did (a permissions violation reaches the host as an error)
    expect(host.out.stderr).toBe('');
    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(0);
  });

  it('takes the password from FINGER_NATS_PASS; a wrong one ends module serve with exit 1 (E_STORE_UNAVAILABLE)', async () => {
    const bad = serve(['--nats', url], { FINGER_NATS_USER: 'daemon', FINGER_NATS_PASS: 'wrong-password' });
    children.push(bad.child);
    expect(await bad.exited).toBe(1);
    expect(bad.out.stderr).toMatch(/E_STORE_UNAVAILABLE/);
    expect(bad.out.stderr).toMatch(/authorization/i);
    // the right one from the environment connects (the daemon user may serve any module)
    const good = serve(['--nats', url], { FINGER_NATS_USER: 'daemon', FINGER_NATS_PASS: DAEMON_PASS });
    children.push(good.child);
    await until(() => /serving remote-probe on cluster/.test(good.out.stdout) || good.child.exitCode !== null);
    expect(good.child.exitCode).toBeNull();
    good.child.kill('SIGTERM');
    expect(await good.exited).toBe(0);
  });

  it('refuses to serve when NATS will not deliver its cancels: exit 4, E_FORBIDDEN naming the subject', async () => {
    const host = serve(['--nats', url, '--user', 'no-cancel'], { FINGER_NATS_PASS: PASS });
    children.push(host.child);
    expect(await host.exited).toBe(4);
    expect(host.out.stderr).toMatch(
      new RegExp(`^error E_FORBIDDEN: NATS refused the subscription to "finger\\.${cluster}\\.cancel": `, 'm'),
    );
    expect(host.out.stdout).toBe('');
  });

  it('says on stderr that NATS refused its replies (the call then ends at its deadline)', async () => {
    const host = serve(['--nats', url, '--user', 'no-reply'], { FINGER_NATS_PASS: PASS });
    children.push(host.child);
    await until(() => /serving remote-probe on cluster/.test(host.out.stdout) || host.child.exitCode !== null);
    await until(() => hasModule(daemon!, 'remote-probe'));
    const r = await daemon!.http('POST', '/v1/input', { text: '/hub target=remote-probe.where timeout=800 {"n":1}' });
    expect(r.body).toMatchObject({ error: { code: 'E_TIMEOUT' } });
    await until(() => /error: NATS refused to publish to "_INBOX\./.test(host.out.stderr));
    host.child.kill('SIGTERM');
    await host.exited;
  });

  it('fails a call at once with E_FORBIDDEN when the daemon may not receive replies on its inbox', async () => {
    const host = serve(['--nats', url, '--nkey-seed', seedFile], {});
    children.push(host.child);
    const d = await startTestDaemon({ config: daemonConfig('no-inbox', PASS) });
    try {
      await until(() => hasModule(d, 'remote-probe'));
      // without the refusal this call would wait out its 20 s deadline
      const r = await d.http('POST', '/v1/input', { text: '/hub target=remote-probe.where timeout=20000 {"n":2}' });
      expect(r.body).toMatchObject({ error: { code: 'E_FORBIDDEN' } });
      expect(r.body.error.message).toMatch(/^NATS refused the subscription to "_INBOX\./);
    } finally {
      await d.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  });

  it('keeps a daemon whose NATS user may not hear the registry out of the cluster, degraded with the reason', async () => {
    const d = await startTestDaemon({ config: daemonConfig('no-registry', PASS) });
    try {
      const h = (await d.http('GET', '/v1/health')).body;
      expect(h).toMatchObject({ status: 'degraded', nats: { connected: false } });
      expect(h.nats.last_error).toBe(
        `NATS refused the subscription to "finger.${cluster}.registry.*": ` +
          `'Permissions Violation for Subscription to "finger.${cluster}.registry.*"'`,
      );
    } finally {
      await d.close();
    }
  });

  it('myfinger doctor connects with the credentials and names what NATS refuses a daemon', async () => {
    const doctor = async (user: string, pass: string) => {
      await using home = await tempDir('finger-doctor-perm-');
      mkdirSync(join(home.path, 'config'));
      writeFileSync(join(home.path, 'config', 'config.json'), JSON.stringify(daemonConfig(user, pass)));
      const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
      const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
      return { code: r.code, nats: checks.find((c) => c.name === 'nats')! };
    };
    const good = await doctor('daemon', DAEMON_PASS);
    expect(good.nats).toMatchObject({ status: 'ok' });
    expect(good.nats.detail).toMatch(/; credentials and permissions ok$/);
    const wrong = await doctor('daemon', 'not-the-password');
    expect(wrong.nats.status).toBe('fail');
    expect(wrong.nats.detail).toMatch(/cannot connect to NATS at .*Authorization Violation/);
    const restricted = await doctor('no-registry', PASS);
    expect(restricted.code).toBe(1);
    expect(restricted.nats.status).toBe('fail');
    expect(restricted.nats.detail).toMatch(
      new RegExp(`the daemon's NATS user is refused subscription to "finger\\.${cluster}\\.registry\\.\\*"$`),
    );
    const noReply = await doctor('no-reply', PASS);
    expect(noReply.nats.detail).toMatch(/refused subscription to "finger\.[^"]+\.events\.>", .*publish to "_INBOX\./);
  });
});

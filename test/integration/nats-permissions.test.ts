import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { nkeys } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  binaryForTests,
  type CliChild,
  natsServerBinary,
  type NatsServerChild,
  runCli,
  startConfiguredNats,
  startTestDaemon,
  tempDir,
  testClusterName,
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

import { callProbe, serveProbe, untilListed, untilServing } from './remote-probe-helpers.js';

// A private nats-server with users and permissions (the shared one on 4222 has no auth): the
// least-privilege permissions docs/operations.md gives for a `module serve` host are enough.
const bin = binaryForTests(natsServerBinary(), 'NATS permission tests', 'no nats-server binary (set NATS_SERVER_BIN)');

const KEY = 'nats-permissions-test-key-0123456789';
const DAEMON_PASS = 'daemon-pass-0123456789';
const PASS = 'restricted-pass-0123456789';
const cluster = testClusterName('perm');
let url = '';

const serve = (args: string[], env: Record<string, string>) => serveProbe(cluster, KEY, args, env);

const daemonConfig = (user: string, pass: string) => ({
  nats: { url, cluster_key: KEY, user, pass, heartbeat_ms: 200, unhealthy_after_ms: 800 },
  cluster,
  modules: { builtin: false, paths: [] },
});

describe.skipIf(bin === undefined)('NATS users and permissions', () => {
  let dir: string;
  let server: NatsServerChild | undefined;
  let daemon: TestDaemon | undefined;
  let seedFile: string;
  const children: CliChild[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-nats-perm-'));
    const host = nkeys.createUser();
    seedFile = join(dir, 'serve.nk');
    writeFileSync(seedFile, new TextDecoder().decode(host.getSeed()), { mode: 0o600 });
    const c = `finger.${cluster}`;
    server = await startConfiguredNats(
      bin!,
      `authorization {
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
    { user: "no-call", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.registry.>", "${c}.events.>", "${c}.cancel", "_INBOX.>"] }
        subscribe: { allow: ["${c}.>", "_INBOX.>"] } } }
    { user: "no-events", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.registry.>", "${c}.call.>", "${c}.cancel", "_INBOX.>"] }
        subscribe: { allow: ["${c}.>", "_INBOX.>"] } } }
    { user: "no-inbox", password: "${PASS}", permissions: {
        publish: { allow: ["${c}.>", "_INBOX.>"] }
        subscribe: { allow: ["${c}.>"] } } }
  ]
}
`,
    );
    url = server.url;
    daemon = await startTestDaemon({ config: daemonConfig('daemon', DAEMON_PASS) });
  });

  afterAll(async () => {
    for (const ch of children) ch.kill('SIGKILL');
    await daemon?.close();
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves calls from a host allowed only its module's subjects (nkey seed), to a password-authenticated daemon", async () => {
    expect((await daemon!.http('GET', '/v1/health')).body.nats.connected).toBe(true);
    const host = serve(['--nats', url, '--nkey-seed', seedFile], {});
    children.push(host);
    await untilServing(host);
    expect(host.err()).toBe('');
    await untilListed(daemon!);
    for (let i = 0; i < 3; i++) {
      expect(await callProbe(daemon!, i)).toMatchObject({
        status: 'succeeded',
        result: { echo: { n: i }, pid: host.pid },
      });
    }
    // the server refused nothing the host did (a permissions violation reaches the host as an error)
    expect(host.err()).toBe('');
    host.kill('SIGTERM');
    expect((await host.done).code).toBe(0);
  });

  it('takes the password from FINGER_NATS_PASS; a wrong one ends module serve with exit 1 (E_STORE_UNAVAILABLE)', async () => {
    const bad = serve(['--nats', url], { FINGER_NATS_USER: 'daemon', FINGER_NATS_PASS: 'wrong-password' });
    children.push(bad);
    expect((await bad.done).code).toBe(1);
    expect(bad.err()).toMatch(/E_STORE_UNAVAILABLE/);
    expect(bad.err()).toMatch(/authorization/i);
    // the right one from the environment connects (the daemon user may serve any module)
    const good = serve(['--nats', url], { FINGER_NATS_USER: 'daemon', FINGER_NATS_PASS: DAEMON_PASS });
    children.push(good);
    await untilServing(good);
    expect(good.running()).toBe(true);
    good.kill('SIGTERM');
    expect((await good.done).code).toBe(0);
  });

  it('refuses to serve when NATS will not deliver its cancels: exit 4, E_FORBIDDEN naming the subject', async () => {
    const host = serve(['--nats', url, '--user', 'no-cancel'], { FINGER_NATS_PASS: PASS });
    children.push(host);
    expect((await host.done).code).toBe(4);
    expect(host.err()).toMatch(
      new RegExp(`^error E_FORBIDDEN: NATS refused the subscription to "finger\\.${cluster}\\.cancel": `, 'm'),
    );
    expect(host.out()).toBe('');
  });

  it('says on stderr that NATS refused its replies (the call then ends at its deadline)', async () => {
    const host = serve(['--nats', url, '--user', 'no-reply'], { FINGER_NATS_PASS: PASS });
    children.push(host);
    await untilServing(host);
    await untilListed(daemon!);
    expect(await callProbe(daemon!, 1, 800)).toMatchObject({ error: { code: 'E_TIMEOUT' } });
    await waitFor('the refusal on stderr', async () =>
      /error: NATS refused to publish to "_INBOX\./.test(host.err()) ? true : undefined,
    );
    host.kill('SIGTERM');
    await host.done;
  });

  /**
   * A call of the probe (served by a least-privilege host) from a daemon logged in as `user`: the
   * response body. Its 20 s deadline is what a refusal the daemon did not act on would wait out.
   */
  const callAs = async (user: string, n: number) => {
    const host = serve(['--nats', url, '--nkey-seed', seedFile], {});
    children.push(host);
    const d = await startTestDaemon({ config: daemonConfig(user, PASS) });
    try {
      await untilListed(d);
      return await callProbe(d, n, 20_000);
    } finally {
      await d.close();
      host.kill('SIGTERM');
      await host.done;
    }
  };

  it('fails a call at once with E_FORBIDDEN when the daemon may not receive replies on its inbox', async () => {
    const body = await callAs('no-inbox', 2);
    expect(body).toMatchObject({ error: { code: 'E_FORBIDDEN' } });
    expect(body.error.message).toMatch(/^NATS refused the subscription to "_INBOX\./);
  });

  it('fails a call at once with E_FORBIDDEN when the daemon may not publish calls to the module', async () => {
    expect(await callAs('no-call', 4)).toMatchObject({
      error: {
        code: 'E_FORBIDDEN',
        message: `NATS refused to publish the call to "finger.${cluster}.call.remote-probe"`,
      },
    });
  });

  it('counts what NATS refuses a running daemon in /v1/health, degraded while it keeps happening', async () => {
    const d = await startTestDaemon({ config: daemonConfig('no-events', PASS) });
    try {
      // every event of this daemon goes out to the cluster (its start emits some): the server refuses them
      await d.http('POST', '/v1/input', { text: '/hub target=nobody.here {}' });
      const h = await waitFor('a refusal in /v1/health', async () => {
        const body = (await d.http('GET', '/v1/health')).body;
        return body.nats.refused > 0 ? body : undefined;
      });
      expect(h.status).toBe('degraded');
      expect(h.nats.connected).toBe(true);
      expect(h.nats.last_refused).toMatch(new RegExp(`^publish to "finger\\.${cluster}\\.events\\.[A-Z_]+"$`));
      expect(Date.parse(h.nats.last_refused_at)).toBeGreaterThan(Date.now() - 60_000);
      // doctor's daemon check says so too
      const r = await runCli(['doctor', '--json'], { FINGER_HOME: d.home });
      const daemonCheck = (
        JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }
      ).checks.find((c) => c.name === 'daemon')!;
      expect(daemonCheck.status).toBe('warn');
      expect(daemonCheck.detail).toMatch(
        /: degraded: NATS refused a permission: publish to "finger\.[^"]+" \(version .*, NATS connected; NATS refused it \d+× \(last: publish to "finger\./,
      );
    } finally {
      await d.close();
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

  it('closes a daemon promptly while it is retrying to join (a refused subscription never drains)', async () => {
    // the first retry comes 250 ms after the refused join, about when the daemon is ready: closes
    // spread over that time land while a retry is connecting or subscribing. The eight daemons
    // start together (each closed its own delay after it is ready), not one after another.
    const closeAfter = async (delay: number): Promise<string> => {
      const d = await startTestDaemon({ config: daemonConfig('no-registry', PASS) });
      await new Promise((r) => setTimeout(r, delay));
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<string>((r) => (timer = setTimeout(() => r(`close hung (delay ${delay} ms)`), 15_000)));
      try {
        return await Promise.race([d.close().then(() => `closed (delay ${delay} ms)`), hung]);
      } finally {
        clearTimeout(timer);
      }
    };
    const delays = [0, 50, 100, 150, 200, 250, 300, 350];
    expect(await Promise.all(delays.map(closeAfter))).toEqual(delays.map((delay) => `closed (delay ${delay} ms)`));
  }, 150_000);

  it('myfinger doctor connects with the credentials and names what NATS refuses a daemon', async () => {
    const doctor = async (user: string, pass: string) => {
      await using home = await tempDir('finger-doctor-perm-');
      mkdirSync(join(home.path, 'config'));
      writeFileSync(join(home.path, 'config', 'config.json'), JSON.stringify(daemonConfig(user, pass)));
      const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
      const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
      return { code: r.code, nats: checks.find((c) => c.name === 'nats')! };
    };
    // four independent homes and users: the CLI children run together
    const [good, wrong, restricted, noReply] = await Promise.all([
      doctor('daemon', DAEMON_PASS),
      doctor('daemon', 'not-the-password'),
      doctor('no-registry', PASS),
      doctor('no-reply', PASS),
    ]);
    expect(good.nats).toMatchObject({ status: 'ok' });
    expect(good.nats.detail).toMatch(/; credentials and permissions ok$/);
    expect(wrong.nats.status).toBe('fail');
    expect(wrong.nats.detail).toMatch(/cannot connect to NATS at .*Authorization Violation/);
    expect(restricted.code).toBe(1);
    expect(restricted.nats.status).toBe('fail');
    expect(restricted.nats.detail).toMatch(
      new RegExp(`the daemon's NATS user is refused subscription to "finger\\.${cluster}\\.registry\\.\\*"$`),
    );
    expect(noReply.nats.detail).toMatch(/refused subscription to "finger\.[^"]+\.events\.>", .*publish to "_INBOX\./);
    // what a daemon publishes besides calls: probed with signed messages the nodes do nothing with
    const running = await startTestDaemon({ config: daemonConfig('daemon', DAEMON_PASS) });
    try {
      const noEvents = await doctor('no-events', PASS);
      expect(noEvents.nats.detail).toMatch(
        new RegExp(`the daemon's NATS user is refused publish to "finger\\.${cluster}\\.events\\.DEGRADED"$`),
      );
      expect((await doctor('daemon', DAEMON_PASS)).nats.status).toBe('ok');
      const h = (await running.http('GET', '/v1/health')).body;
      expect(h.nats).toMatchObject({ connected: true, dropped: 0, refused: 0 });
    } finally {
      await running.close();
    }
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { probeSandbox } from '@finger/hub';
import { freePort, natsUrlForTests, runCli, startTestDaemon, tempDir, testClusterName } from '@finger/testkit';

const url = await natsUrlForTests();
const KEY = 'doctor-test-cluster-key-01234567';

interface Report {
  ok: boolean;
  checks: { name: string; status: string; detail: string }[];
}
/** doctor's sandbox line: ok where bubblewrap runs, a warning where it cannot (see sandbox.test.ts). */
const SANDBOX_STATUS = probeSandbox({ env: process.env }).available ? 'ok' : 'warn';
const statuses = (r: Report) => Object.fromEntries(r.checks.map((c) => [c.name, c.status]));

describe.skipIf(!url)('myfinger doctor', () => {
  it('reports config, a running clustered daemon and NATS as ok (exit 0)', async () => {
    const cluster = testClusterName('doc');
    const config = { nats: { url: url!, cluster_key: KEY }, cluster, modules: { builtin: false } };
    const d = await startTestDaemon({
      config,
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        await writeFile(join(home, 'config', 'config.json'), JSON.stringify(config));
      },
    });
    try {
      const r = await runCli(['doctor', '--json'], { FINGER_HOME: d.home });
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout) as Report;
      expect(statuses(report)).toEqual({
        config: 'ok',
        daemon: 'ok',
        nats: 'ok',
        redis: 'warn',
        llm: 'skip',
        sandbox: SANDBOX_STATUS,
        limits: 'ok',
        events: 'ok',
        hooks: 'skip',
      });
      // a cluster without Redis: said, not failed
      expect(report.checks.find((c) => c.name === 'redis')!.detail).toMatch(
        /^redis\.url not set: with NATS alone each daemon keeps its own lockouts, .* a halt or unlock reaches the others only as an event/,
      );
      expect(report.checks.find((c) => c.name === 'daemon')!.detail).toContain('NATS connected');
      // daemon status says where the daemon's cluster is
      expect((await runCli(['daemon', 'status'], { FINGER_HOME: d.home })).stdout).toMatch(
        new RegExp(
          `\\n  nats {5}connected — cluster ${cluster} on nats://\\S+, node daemon-\\S+, 0 remote module\\(s\\)\\n`,
        ),
      );
      // run from a shell whose FINGER_* say otherwise: doctor checked another cluster than the daemon's, and says so
      const other = JSON.parse(
        (await runCli(['doctor', '--json'], { FINGER_HOME: d.home, FINGER_CLUSTER: 'elsewhere' })).stdout,
      ) as Report;
      expect(other.checks.filter((c) => c.name === 'config').map((c) => [c.status, c.detail])).toEqual([
        ['ok', expect.stringContaining('(cluster elsewhere)')],
        [
          'warn',
          `the running daemon uses cluster ${cluster} (this config: elsewhere): run doctor with the daemon's environment (FINGER_HOME, FINGER_NATS_URL, FINGER_CLUSTER) to check what it uses`,
        ],
      ]);
    } finally {
      await d.close();
    }
  });

  it('fails (exit 1) when NATS and the daemon are unreachable, naming each', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    const port = await freePort();
    await writeFile(
      join(home.path, 'config', 'config.json'),
      JSON.stringify({ nats: { url: `nats://127.0.0.1:${port}` }, server: { port: await freePort() } }),
    );
    const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.ok).toBe(false);
    expect(statuses(report)).toMatchObject({ config: 'ok', daemon: 'fail', nats: 'fail' });
  });

  it('fails on an invalid config with the key path', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    await writeFile(join(home.path, 'config', 'config.json'), JSON.stringify({ nats: { url: 'http://nope' } }));
    const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.checks[0]).toMatchObject({ name: 'config', status: 'fail' });
    expect(report.checks[0]!.detail).toContain('$.nats.url');
  });

  it('fails the NATS check when nats.url has no cluster key (the daemon would refuse to start)', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    await writeFile(join(home.path, 'config', 'config.json'), JSON.stringify({ nats: { url: url! } }));
    const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(1);
    const nats = (JSON.parse(r.stdout) as Report).checks.find((c) => c.name === 'nats')!;
    expect(nats.status).toBe('fail');
    expect(nats.detail).toMatch(/; nats\.url is set but no cluster key: set nats\.cluster_key, /);
    // the key from the environment is enough
    const withKey = await runCli(['doctor', '--json'], {
      FINGER_HOME: home.path,
      FINGER_URL: 'http://127.0.0.1:1',
      FINGER_CLUSTER_KEY: KEY,
    });
    expect((JSON.parse(withKey.stdout) as Report).checks.find((c) => c.name === 'nats')!.status).toBe('ok');
  });
});

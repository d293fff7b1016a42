import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  binaryForTests,
  type CliChild,
  natsServerBinary,
  type NatsServerChild,
  runCli,
  startConfiguredNats,
  testClusterName,
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

import { callProbe, serveProbe, startClusterDaemon, untilListed, untilServing } from './remote-probe-helpers.js';

// A module a daemon imported from the cluster: `module unregister` is refused with E_CONFLICT
// (it would be imported again while a node announces it) and the module keeps answering; should
// the import be unregistered all the same (the hub's API), it is imported again instead of
// staying missing on that daemon until a restart.
const bin = binaryForTests(
  natsServerBinary(),
  'NATS remote unregister tests',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

const KEY = 'nats-remote-unregister-key-0123456789';
const cluster = testClusterName('unreg');

describe.skipIf(bin === undefined)('unregistering an imported remote module', () => {
  let server: NatsServerChild | undefined;
  let daemon: TestDaemon | undefined;
  let host: CliChild | undefined;

  beforeAll(async () => {
    server = await startConfiguredNats(bin!, '');
    daemon = await startClusterDaemon({ url: server.url, cluster, clusterKey: KEY });
    host = serveProbe(cluster, KEY, ['--nats', server.url]);
    await untilServing(host);
    expect(host.running()).toBe(true);
    await untilListed(daemon);
  });
  afterAll(async () => {
    host?.kill('SIGKILL');
    await daemon?.close();
    server?.stop();
  });

  it('is refused with E_CONFLICT naming the serving node, and the module keeps answering', async () => {
    const d = daemon!;
    const del = await d.http<{ error: { code: string; message: string; details: { nodes: string[] } } }>(
      'DELETE',
      '/v1/modules/remote-probe',
    );
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('E_CONFLICT');
    expect(del.body.error.details.nodes).toEqual([expect.stringMatching(/^serve-remote-probe-/)]);
    expect(del.body.error.message).toMatch(/is imported from the cluster \(served by serve-remote-probe-/);
    const cli = await runCli(['--json', 'module', 'unregister', 'remote-probe'], { FINGER_HOME: d.home });
    expect(cli.code).not.toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ error: { code: 'E_CONFLICT' } });
    expect(await callProbe(d, 8)).toMatchObject({ status: 'succeeded', result: { echo: { n: 8 } } });
  });

  it('an import unregistered through the hub is imported again while its node announces it', async () => {
    const d = daemon!;
    await d.app.hub.registry.unregister('remote-probe');
    await untilListed(d);
    const list = (await d.http<{ modules: { id: string; location: string }[] }>('GET', '/v1/modules')).body.modules;
    expect(list.find((m) => m.id === 'remote-probe')?.location).toBe('remote');
    await waitFor('a call of the re-imported module', async () =>
      (await callProbe(d, 7)).status === 'succeeded' ? true : undefined,
    );
  });
});

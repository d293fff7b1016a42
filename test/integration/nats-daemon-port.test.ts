// A daemon joins its cluster only once it listens: one whose port is taken fails the start with
// E_CONFLICT and never puts a message on the cluster's subjects (no hello, no heartbeat announcing
// modules it will not serve).
import { createServer, type Server } from 'node:net';

import { connect, type NatsConnection, type Subscription } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { natsUrlForTests, tempDir, testClusterName, waitFor } from '@finger/testkit';

const url = await natsUrlForTests();
const KEY = 'daemon-port-test-cluster-key-0123456789';

describe.skipIf(!url)('a daemon joins the cluster once it listens', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
  });

  /** Every message on the cluster's subjects, counted from now on. */
  async function watchCluster(cluster: string): Promise<{ nc: NatsConnection; sub: Subscription; subjects: string[] }> {
    const nc = await connect({ servers: url! });
    cleanup.push(() => nc.close());
    const subjects: string[] = [];
    const sub = nc.subscribe(`finger.${cluster}.>`, { callback: (_e, m) => subjects.push(m.subject) });
    await nc.flush();
    return { nc, sub, subjects };
  }

  async function daemonOn(cluster: string, port: number): Promise<FingerApp> {
    const home = await tempDir('finger-port-');
    cleanup.push(() => home.remove());
    const app = await build({
      home: home.path,
      env: {},
      config: {
        server: { host: '127.0.0.1', port },
        nats: { url: url!, cluster_key: KEY, heartbeat_ms: 200 },
        cluster,
        log: { level: 'silent' },
      },
    });
    cleanup.push(() => app.close());
    return app;
  }

  it('a taken port: E_CONFLICT, and nothing was said on the cluster', async () => {
    const cluster = testClusterName('port');
    const watch = await watchCluster(cluster);
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => busy.close(r)));
    const port = (busy.address() as { port: number }).port;

    const app = await daemonOn(cluster, port);
    const err = await app.listen().then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err?.code).toBe('E_CONFLICT');
    expect(err?.message).toContain(`port ${port} is already in use`);
    await app.close();
    await watch.nc.flush();
    expect(watch.subjects).toEqual([]);
    expect(app.cluster?.status().connected).toBe(false);
  });

  it('a free port: the daemon joins and announces itself (so the check above can fail)', async () => {
    const cluster = testClusterName('portok');
    const watch = await watchCluster(cluster);
    const app = await daemonOn(cluster, 0);
    await app.listen();
    expect(app.cluster?.status().connected).toBe(true);
    await waitFor('the daemon’s first message on the cluster', async () =>
      watch.subjects.length > 0 ? true : undefined,
    );
    expect(watch.subjects.some((s) => s.startsWith(`finger.${cluster}.registry.`))).toBe(true);
  });
});

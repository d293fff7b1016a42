// A daemon with both NATS and Redis goes by one name: the node id it has on the cluster's
// subjects (and in /v1/health) is the one its entries carry in the Redis audit stream.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { natsUrlForTests, redisUrlForTests, type TempDir, tempDir, testClusterName } from '@finger/testkit';

const natsUrl = await natsUrlForTests();
const redisUrl = await redisUrlForTests();

describe.skipIf(!natsUrl || !redisUrl)('a daemon’s one node id on NATS and in the audit stream', () => {
  let app: FingerApp | undefined;
  let home: TempDir | undefined;
  const raw = redisUrl ? new Redis(redisUrl) : undefined;
  const cluster = testClusterName('nodeid');
  afterAll(async () => {
    await app?.close();
    await home?.remove();
    const keys = (await raw?.keys(`finger:${cluster}:*`)) ?? [];
    if (keys.length > 0) await raw!.del(...keys);
    raw?.disconnect();
  });

  it('names its audit entries in the stream by its NATS node id', async () => {
    home = await tempDir('finger-nodeid-');
    app = await build({
      home: home.path,
      env: {},
      config: {
        server: { host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
        modules: { builtin: false },
        nats: { url: natsUrl!, cluster_key: 'node-id-test-cluster-key-0123456789' },
        redis: { url: redisUrl! },
        cluster,
      },
    });
    await app.listen();
    const node = app.cluster!.status().node;
    expect(node).toMatch(/^daemon-/);
    await app.audit.append({ type: 'token.changed', actor: { kind: 'human', id: 'test' }, details: {} });
    await app.redis!.mirror.drain();
    const rows = await raw!.xrange(`finger:${cluster}:audit`, '-', '+');
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map(([, f]) => f[1]))).toEqual(new Set([node]));
  });
});

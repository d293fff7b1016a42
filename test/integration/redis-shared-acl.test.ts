// A Redis user whose ACL allows the cluster's keys but not its pub/sub channels: the daemon could
// store a halt but tell no other daemon of it, so it refuses to start, naming the channel, rather
// than run on a cluster state it cannot share. A user allowed the channels starts as usual.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build } from '@finger/daemon';
import { binaryForTests, redisServerBinary, RedisServerChild, tempDir, testClusterName } from '@finger/testkit';

const bin = binaryForTests(redisServerBinary(), 'the Redis ACL tests', 'no redis-server binary (set REDIS_SERVER_BIN)');

const PASSWORD = 'redis-acl-admin-0123456789';

describe.skipIf(bin === undefined)('a Redis user restricted by ACL (own redis-server)', () => {
  let server: RedisServerChild | undefined;
  const cluster = testClusterName('racl');

  beforeAll(async () => {
    server = await RedisServerChild.start(['--requirepass', PASSWORD]);
    const admin = new Redis({ port: server!.port, password: PASSWORD });
    try {
      await admin.call('ACL', 'SETUSER', 'keys-only', 'on', '>pw1', `~finger:${cluster}:*`, 'resetchannels', '+@all');
      await admin.call(
        'ACL',
        'SETUSER',
        'cluster',
        'on',
        '>pw2',
        `~finger:${cluster}:*`,
        `&finger:${cluster}:*`,
        '+@all',
      );
    } finally {
      admin.disconnect();
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  const start = async (auth: string) => {
    await using home = await tempDir('finger-redis-acl-');
    const app = await build({
      home: home.path,
      env: {},
      config: {
        server: { host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
        modules: { builtin: false, paths: [] },
        redis: { url: `redis://${auth}@127.0.0.1:${server!.port}` },
        cluster,
      },
    });
    const health = await app.redis!.health();
    await app.close();
    return health;
  };

  it('refuses to start with E_STORE_UNAVAILABLE when the user may not use the cluster channels', async () => {
    const e = await start('keys-only:pw1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toMatchObject({
      code: 'E_STORE_UNAVAILABLE',
      message: expect.stringContaining(`may not use the channel "finger:${cluster}:safety:changes"`),
    });
  });

  it('starts with a user allowed the cluster keys and channels', async () => {
    expect(await start('cluster:pw2')).toMatchObject({ connected: true, prefix: `finger:${cluster}:` });
  });
});

// `myfinger doctor` checks what the Redis user's ACL lets a daemon do with the cluster's keys,
// scripts and channel — a user that may log in but not use the channel (or run scripts) would
// make a daemon that refuses to start or cannot share a halt, and doctor said "ok".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { binaryForTests, redisServerBinary, RedisServerChild, runCli, tempDir, testClusterName } from '@finger/testkit';

const bin = binaryForTests(
  redisServerBinary(),
  'the Redis doctor ACL tests',
  'no redis-server binary (set REDIS_SERVER_BIN)',
);
const PASSWORD = 'redis-doctor-admin-0123456789';

describe.skipIf(bin === undefined)('myfinger doctor and a Redis user restricted by ACL (own redis-server)', () => {
  let server: RedisServerChild | undefined;
  const cluster = testClusterName('dacl');
  const keys = `~finger:${cluster}:*`;
  const channels = `&finger:${cluster}:*`;

  beforeAll(async () => {
    server = await RedisServerChild.start(['--requirepass', PASSWORD]);
    const admin = new Redis({ port: server!.port, password: PASSWORD });
    try {
      await admin.call('ACL', 'SETUSER', 'full', 'on', '>pw', keys, channels, '+@all');
      await admin.call('ACL', 'SETUSER', 'nochan', 'on', '>pw', keys, 'resetchannels', '+@all');
      await admin.call('ACL', 'SETUSER', 'noscript', 'on', '>pw', keys, channels, '+@all', '-@scripting');
      await admin.call('ACL', 'SETUSER', 'otherkeys', 'on', '>pw', '~other:*', channels, '+@all');
    } finally {
      admin.disconnect();
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  const doctor = async (user: string) => {
    await using home = await tempDir('finger-doctor-acl-');
    mkdirSync(join(home.path, 'config'));
    const url = `redis://${user}:pw@127.0.0.1:${server!.port}`;
    writeFileSync(join(home.path, 'config', 'config.json'), JSON.stringify({ redis: { url }, cluster }));
    const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
    const report = JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] };
    return report.checks.find((c) => c.name === 'redis')!;
  };

  it('passes a user with the cluster’s keys, channels and commands', async () => {
    expect(await doctor('full')).toMatchObject({ status: 'ok' });
  });

  it('fails a user refused the channel, naming it', async () => {
    const c = await doctor('nochan');
    expect(c.status).toBe('fail');
    expect(c.detail).toContain(`publish on finger:${cluster}:safety:changes (PUBLISH): NOPERM`);
    expect(c.detail).toContain(`the channels &finger:${cluster}:*`);
  });

  it('fails a user refused scripts, and one refused the keys', async () => {
    const noscript = await doctor('noscript');
    expect(noscript.status).toBe('fail');
    expect(noscript.detail).toContain('run scripts (EVAL): NOPERM');
    const other = await doctor('otherkeys');
    expect(other.status).toBe('fail');
    expect(other.detail).toContain(`read finger:${cluster}:safety:lockouts (HGETALL): NOPERM`);
    expect(other.detail).toContain(`write finger:${cluster}:doctor:probe (SET): NOPERM`);
  });
});

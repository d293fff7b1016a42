import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  binaryForTests,
  redisServerBinary,
  RedisServerChild,
  runCli,
  startTestDaemon,
  tempDir,
  testClusterName,
} from '@finger/testkit';

// A private redis-server that wants a password (the shared one on 6379 has none): the daemon
// authenticates with the password in redis.url, and `myfinger doctor` checks it without printing it.
const bin = binaryForTests(
  redisServerBinary(),
  'Redis password tests',
  'no redis-server binary (set REDIS_SERVER_BIN)',
);

const PASSWORD = 'redis-secret-0123456789';

describe.skipIf(bin === undefined)('Redis with a password', () => {
  let server: RedisServerChild | undefined;
  const cluster = testClusterName('rauth');
  const urlWith = (auth: string) => `redis://${auth}127.0.0.1:${server!.port}`;

  beforeAll(async () => {
    server = await RedisServerChild.start(['--requirepass', PASSWORD]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the daemon authenticates with the password in redis.url and shares state through it', async () => {
    const d = await startTestDaemon({ config: { redis: { url: urlWith(`:${PASSWORD}@`) }, cluster } });
    try {
      const h = (await d.http('GET', '/v1/health')).body;
      expect(h.redis).toMatchObject({ connected: true, prefix: `finger:${cluster}:` });
      expect(JSON.stringify(h)).not.toContain(PASSWORD);
    } finally {
      await d.close();
    }
  });

  it('myfinger doctor logs in, fails without the password or with a wrong one, and never prints it', async () => {
    const doctor = async (url: string) => {
      await using home = await tempDir('finger-doctor-redis-');
      mkdirSync(join(home.path, 'config'));
      writeFileSync(join(home.path, 'config', 'config.json'), JSON.stringify({ redis: { url }, cluster }));
      const r = await runCli(['doctor', '--json'], { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' });
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      expect(r.stdout).not.toContain('wrong-password');
      const report = JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] };
      return report.checks.find((c) => c.name === 'redis')!;
    };
    const plain = `redis://127.0.0.1:${server!.port}`;
    // three homes of their own: the CLI children run together
    const [good, none, wrong] = await Promise.all([
      doctor(urlWith(`:${PASSWORD}@`)),
      doctor(plain),
      doctor(urlWith(':wrong-password@')),
    ]);
    expect(good).toEqual({
      name: 'redis',
      status: 'ok',
      detail: `${plain}: PONG (authenticated)`,
    });
    expect(none.status).toBe('fail');
    expect(none.detail).toMatch(new RegExp(`^${plain}: NOAUTH .* — the server wants a password`));
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toMatch(new RegExp(`^${plain}: WRONGPASS`));
  });
});

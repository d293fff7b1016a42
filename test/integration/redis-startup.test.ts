// Regressions of a malformed or unusable redis.url: the daemon's start names the URL (without
// credentials) and the cause, a database index the server lacks is refused instead of db 0, the
// background `daemon start` reports the daemon's own code, and `doctor` fails the check (no trace).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '@finger/hub';
import { RedisConnection } from '@finger/hub/redis';
import type { FingerError } from '@finger/protocol';
import {
  binaryForTests,
  redisServerBinary,
  RedisServerChild,
  redisUrlForTests,
  runCli,
  tempDir,
  testClusterName,
  testRedisPrefix,
} from '@finger/testkit';

import { wireRedis } from '../../packages/daemon/src/distributed/redis-wiring.js';

const bin = binaryForTests(redisServerBinary(), 'Redis startup tests', 'no redis-server binary (set REDIS_SERVER_BIN)');
const PASSWORD = 'redis-startup-secret-42';

/** What wireRedis rejected with (code and message), or 'started'. */
async function startError(
  url: string,
  ready_timeout_ms = 5000,
): Promise<{ code: string; message: string } | 'started'> {
  try {
    const w = await wireRedis({
      url,
      cluster: 'c1',
      prefix: testRedisPrefix(),
      logger: silentLogger,
      ready_timeout_ms,
    });
    await w.close();
    return 'started';
  } catch (e) {
    return { code: (e as FingerError).code, message: (e as FingerError).message };
  }
}

/** `myfinger <args> --json` on a fresh FINGER_HOME whose config.json has `redis.url`. */
async function cliWith(url: string, args: string[]) {
  await using home = await tempDir('finger-redis-startup-');
  mkdirSync(join(home.path, 'config'));
  const config = { redis: { url }, cluster: testClusterName('rstart'), server: { port: 0 } };
  writeFileSync(join(home.path, 'config', 'config.json'), JSON.stringify(config));
  const env = { FINGER_HOME: home.path, FINGER_URL: 'http://127.0.0.1:1' };
  const r = await runCli([...args, '--json'], env, 30_000);
  // a daemon that started after all (a failing test) must not outlive its home
  if (args[0] === 'daemon' && r.code === 0) await runCli(['daemon', 'stop'], env);
  return r;
}

describe.skipIf(bin === undefined)('Redis start errors (own password-protected redis-server)', () => {
  let server: RedisServerChild | undefined;
  let shared: string | undefined;
  const at = () => `redis://127.0.0.1:${server!.port}`;

  beforeAll(async () => {
    server = await RedisServerChild.start(['--requirepass', PASSWORD]);
    shared = await redisUrlForTests();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('names the URL without credentials and the cause: wrong password, no password', async () => {
    expect(await startError(`redis://:wrong-password@127.0.0.1:${server!.port}`)).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: `redis is unavailable at ${at()}: WRONGPASS invalid username-password pair or user is disabled. — authentication refused: wrong user name or password`,
    });
    expect(await startError(at())).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: `redis is unavailable at ${at()}: NOAUTH Authentication required. — the server wants a password (none given): redis://:PASSWORD@host:port`,
    });
  });

  it('names a refused connection, and a rediss:// URL against a plain server as a failed TLS handshake', async () => {
    const gone = await RedisServerChild.start();
    const port = gone!.port;
    await gone!.stop();
    const tls = `rediss://127.0.0.1:${server!.port}`;
    // the handshake's 3 s wait and the refused connection run together
    const [refused, handshake] = await Promise.all([
      startError(`redis://127.0.0.1:${port}`, 1000),
      startError(tls, 3000),
    ]);
    expect(refused).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: `redis is unavailable at redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port} — connection refused: nothing listens there`,
    });
    expect(handshake).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: `redis is unavailable at ${tls}: connect ETIMEDOUT — TLS handshake failed: no TLS answer (does that port serve TLS? use redis:// for a plain server)`,
    });
  });

  it('refuses a database index the server does not have instead of using db 0', async () => {
    const url = `${shared ?? at()}/99`;
    const shown = url.replace(/\/\/[^@/]*@/, '//');
    const cause =
      'ERR DB index is out of range — database index 99 is not available on that server (it has fewer databases, see its "databases" setting)';
    expect(await startError(url)).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: `redis is unavailable at ${shown}: ${cause}`,
    });
    // a connection that got no further refuses every command rather than run it on db 0
    const conn = new RedisConnection({ url, cluster: 'c1', prefix: testRedisPrefix() });
    try {
      await expect(conn.open(5000)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
      await expect(conn.run('probe', (c) => c.set(conn.key('x'), '1'))).rejects.toMatchObject({
        code: 'E_STORE_UNAVAILABLE',
        message: `redis is unavailable (probe): ${shown}: ${cause}`,
      });
      expect(conn.available).toBe(false);
    } finally {
      await conn.close();
    }
  });

  it('says "not connected to <url> (last error: …)" at runtime, not the ioredis offline-queue wording', async () => {
    const gone = await RedisServerChild.start();
    const port = gone!.port;
    await gone!.stop();
    const conn = new RedisConnection({
      url: `redis://:pw@127.0.0.1:${port}`,
      cluster: 'c1',
      prefix: testRedisPrefix(),
    });
    try {
      await expect(conn.open(1000)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
      const err = (await conn
        .run('lease.acquire', (c) => c.get(conn.key('x')))
        .catch((e: unknown) => e)) as FingerError;
      expect({ code: err.code, message: err.message }).toEqual({
        code: 'E_STORE_UNAVAILABLE',
        message: `redis is unavailable (lease.acquire): not connected to redis://127.0.0.1:${port} (last error: connect ECONNREFUSED 127.0.0.1:${port} — connection refused: nothing listens there)`,
      });
    } finally {
      await conn.close();
    }
  });

  it('rejects a malformed URL with E_INVALID_ARGS before connecting anywhere', () => {
    let err: FingerError | undefined;
    try {
      new RedisConnection({ url: 'redis://127.0.0.1:notaport', cluster: 'c1' });
    } catch (e) {
      err = e as FingerError;
    }
    expect(err?.code).toBe('E_INVALID_ARGS');
  });

  it('myfinger daemon start (background) reports the daemon E_STORE_UNAVAILABLE, not E_INTERNAL', async () => {
    const r = await cliWith(`redis://:wrong-password@127.0.0.1:${server!.port}`, ['daemon', 'start']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).not.toContain('wrong-password');
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        code: 'E_STORE_UNAVAILABLE',
        message: `redis is unavailable at ${at()}: WRONGPASS invalid username-password pair or user is disabled. — authentication refused: wrong user name or password`,
      },
    });
  });

  it('myfinger daemon start and doctor reject redis://127.0.0.1:notaport as an invalid config (no trace)', async () => {
    const message =
      'invalid configuration: config.json: $.redis.url is not a valid Redis URL: the port "notaport" is not a number from 1 to 65535; expected redis://[user:pass@]host[:port][/db] (or rediss:// for TLS)';
    const start = await cliWith('redis://127.0.0.1:notaport', ['daemon', 'start']);
    expect(JSON.parse(start.stdout)).toEqual({ error: { code: 'E_INVALID_ARGS', message } });
    const doctor = await cliWith('redis://127.0.0.1:notaport', ['doctor']);
    expect(doctor.stderr).not.toMatch(/\n\s+at /);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string }[] }).checks;
    expect(checks.filter((c) => c.name === 'config' || c.name === 'redis')).toEqual([
      { name: 'config', status: 'fail', detail: message },
      { name: 'redis', status: 'skip', detail: 'no valid config' },
    ]);
  });

  it('myfinger doctor fails the redis check for a database index the server does not have', async () => {
    const url = `${at()}/99`;
    const doctor = await cliWith(`redis://:${PASSWORD}@127.0.0.1:${server!.port}/99`, ['doctor']);
    expect(doctor.code).toBe(1);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string }[] }).checks;
    expect(checks.find((c) => c.name === 'redis')).toEqual({
      name: 'redis',
      status: 'fail',
      detail: `${url}: ERR DB index is out of range — database index 99 is not available on that server (it has fewer databases, see its "databases" setting)`,
    });
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';

import { build, type FingerApp } from '@finger/daemon';
import { RedisConnection } from '@finger/hub/redis';
import { type TempDir, tempDir, testClusterName, testRedisPrefix, waitUntil } from '@finger/testkit';

/** A connection under a fresh random key prefix, and a cleanup that deletes every key under it. */
export function redisForTest(url: string, prefix = testRedisPrefix()) {
  const conns: RedisConnection[] = [];
  return {
    prefix,
    /** Another connection (another "daemon") sharing the prefix. */
    connect(extra: { command_timeout_ms?: number } = {}): RedisConnection {
      const c = new RedisConnection({ url, cluster: 'test', prefix, ...extra });
      conns.push(c);
      return c;
    },
    async cleanup(): Promise<void> {
      await Promise.all(conns.map((c) => c.close()));
      const raw = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await raw.connect();
        let cursor = '0';
        do {
          const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          if (keys.length > 0) await raw.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } catch {
        // the server of an outage test may be gone already: nothing left to clean
      } finally {
        raw.disconnect();
      }
    },
  };
}

/** Polls `fn` until it returns true, for at most `ms` (throws naming `what`). */
export function until(fn: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  return waitUntil(what, fn, ms, 20);
}

/** A daemon of {@link startRedisDaemons}: where it listens, its admin token and its home. */
export interface RedisTestDaemon {
  url: string;
  token: string;
  home: string;
}

/** An answer of {@link httpCall}: status, headers and the JSON body. */
export interface HttpReply<B = Record<string, any>> {
  status: number;
  headers: Headers;
  body: B;
}

const COUNTER = fileURLToPath(new URL('../fixtures/modules/counter/module.json', import.meta.url));

/**
 * `n` daemons built with `redis.url` and one fresh cluster name (silent logs, no built-in
 * modules, the counter fixture), listening on loopback; `close()` stops them and removes their homes.
 */
export async function startRedisDaemons(n: number, redisUrl: string, name: string) {
  const homes: TempDir[] = [];
  const apps: FingerApp[] = [];
  const daemons: RedisTestDaemon[] = [];
  const cluster = testClusterName(name);
  for (let i = 0; i < n; i++) {
    const home = await tempDir(`finger-${name}-${i}-`);
    homes.push(home);
    const app = await build({
      home: home.path,
      env: {},
      config: {
        server: { host: '127.0.0.1', port: 0 },
        // FINGER_TEST_LOG=debug shows the daemons' logs when a test needs looking into
        log: { level: (process.env.FINGER_TEST_LOG as 'debug' | undefined) ?? 'silent' },
        modules: { builtin: false, paths: [COUNTER] },
        redis: { url: redisUrl },
        cluster,
      },
    });
    apps.push(app);
    const { url } = await app.listen();
    daemons.push({ url, token: (await readFile(join(home.path, 'token'), 'utf8')).trim(), home: home.path });
  }
  return {
    cluster,
    daemons,
    apps,
    async close(): Promise<void> {
      for (const a of apps) await a.close();
      for (const h of homes) await h.remove();
    },
  };
}

/** A JSON request to daemon `d` with its admin token. */
export async function httpCall<B = Record<string, any>>(
  d: { url: string; token: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpReply<B>> {
  let res: Response;
  try {
    res = await fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      // bounded: a request that hangs fails its test with its own name, not the suite's timeout
      signal: AbortSignal.timeout(15_000),
    });
  } catch (e) {
    throw new Error(`${method} ${d.url}${path}: ${(e as Error).message}`);
  }
  return { status: res.status, headers: res.headers, body: (await res.json()) as B };
}

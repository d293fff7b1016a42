import { Redis } from 'ioredis';

import { RedisConnection } from '@finger/hub/redis';
import { testRedisPrefix } from '@finger/testkit';

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
export async function until(fn: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

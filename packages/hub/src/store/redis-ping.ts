import { Redis } from 'ioredis';

import { parseRedisUrl, type RedisUrlParts } from '../redis-url.js';
import { redisTarget } from './redis-client.js';

/**
 * Runs `use` on a one-shot connection to `url` (credentials, database `db` and `rediss://` TLS as
 * the URL gives them): no retries, no offline queue, every command bounded by `timeout_ms`; then
 * closes it. A failure rejects with the first error the connection reported (ioredis reports a
 * refused AUTH as an 'error' event, then a closed connection) or the command's own.
 */
export async function withOneShotRedis<T>(
  url: string,
  timeout_ms: number,
  use: (c: Redis, parts: RedisUrlParts) => Promise<T>,
  db?: number,
): Promise<T> {
  const parts = parseRedisUrl(url);
  const c = new Redis({
    ...redisTarget(parts),
    ...(db !== undefined ? { db } : {}),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeout_ms,
    commandTimeout: timeout_ms,
    retryStrategy: () => null,
    // the ready check runs INFO, which a server wanting a password refuses with NOAUTH: the
    // commands say that too
    enableReadyCheck: false,
  });
  let first: Error | undefined;
  c.on('error', (e: Error) => {
    first ??= e;
  });
  try {
    await c.connect();
    return await use(c, parts);
  } catch (e) {
    throw first ?? e;
  } finally {
    c.disconnect();
  }
}

/**
 * Connects to `url` once, sends PING and closes: resolves with the reply (`PONG`), rejects with
 * the server's or the socket's error (`WRONGPASS …`, `NOAUTH …`, `connect ECONNREFUSED …`, `ERR DB
 * index is out of range` for a database the server does not have; {@link redisCause} says what
 * it means), or E_INVALID_ARGS for a malformed URL. For `myfinger doctor`, which must say what is
 * wrong rather than wait.
 */
export function pingRedis(url: string, timeout_ms = 2000): Promise<string> {
  // database 0 first, the URL's selected after PING: its refusal is then an answer rather than an 'error' event
  return withOneShotRedis(
    url,
    timeout_ms,
    async (c, parts) => {
      const pong = await c.ping();
      if (parts.db !== 0) await c.select(parts.db);
      return pong;
    },
    0,
  );
}

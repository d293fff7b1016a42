import { Redis } from 'ioredis';

import { parseRedisUrl } from '../redis-url.js';
import { redisTarget } from './redis-client.js';

/**
 * Connects to `url` once (credentials, database and `rediss://` TLS as the URL gives them), sends
 * PING and closes: resolves with the reply (`PONG`), rejects with the server's or the socket's
 * error (`WRONGPASS …`, `NOAUTH …`, `connect ECONNREFUSED …`, `ERR DB index is out of range` for a
 * database the server does not have; {@link redisCause} says what it means), or E_INVALID_ARGS for
 * a malformed URL. No retries and no offline queue: for `myfinger doctor`, which must say what is
 * wrong rather than wait.
 */
export async function pingRedis(url: string, timeout_ms = 2000): Promise<string> {
  const parts = parseRedisUrl(url);
  const c = new Redis({
    ...redisTarget(parts),
    // selected below, where its refusal is an answer rather than an 'error' event
    db: 0,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeout_ms,
    commandTimeout: timeout_ms,
    retryStrategy: () => null,
    // the ready check runs INFO, which a server wanting a password refuses with NOAUTH: PING says that too
    enableReadyCheck: false,
  });
  // ioredis reports a refused AUTH as an 'error' event and then a closed connection: the first
  // error says what went wrong
  let first: Error | undefined;
  c.on('error', (e: Error) => {
    first ??= e;
  });
  try {
    await c.connect();
    const pong = await c.ping();
    if (parts.db !== 0) await c.select(parts.db);
    return pong;
  } catch (e) {
    throw first ?? e;
  } finally {
    c.disconnect();
  }
}

import { Redis } from 'ioredis';

/**
 * Connects to `url` once (credentials, database and `rediss://` TLS as the URL gives them), sends
 * PING and closes: resolves with the reply (`PONG`), rejects with the server's or the socket's
 * error (`WRONGPASS …`, `NOAUTH …`, `connect ECONNREFUSED …`). No retries and no offline queue:
 * for `myfinger doctor`, which must say what is wrong rather than wait.
 */
export async function pingRedis(url: string, timeout_ms = 2000): Promise<string> {
  const c = new Redis(url, {
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
    return await c.ping();
  } catch (e) {
    throw first ?? e;
  } finally {
    c.disconnect();
  }
}

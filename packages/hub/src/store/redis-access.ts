import { Redis } from 'ioredis';

import { parseRedisUrl } from '../redis-url.js';
import { redisTarget } from './redis-client.js';

/** A refusal by the server's ACL (`NOPERM …`). */
const NOPERM = /^NOPERM/;

/**
 * What a daemon of the cluster under key prefix `prefix` (`finger:<cluster>:`) does with Redis,
 * one command of each kind, tried as the URL's user: read and write its keys, run its scripts,
 * publish on its channel. Returns what the server's ACL refused (`"run EVAL (NOPERM …)"`), empty
 * when nothing was. The probes touch one key of their own (`<prefix>doctor:probe`, set with a 2 s
 * expiry and deleted) and publish a non-JSON message every daemon ignores. Rejects as
 * {@link pingRedis} does when the server cannot be reached or refuses the login.
 */
export async function redisAccessRefusals(url: string, prefix: string, timeout_ms = 2000): Promise<string[]> {
  const parts = parseRedisUrl(url);
  const c = new Redis({
    ...redisTarget(parts),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeout_ms,
    commandTimeout: timeout_ms,
    retryStrategy: () => null,
    enableReadyCheck: false,
  });
  let first: Error | undefined;
  c.on('error', (e: Error) => {
    first ??= e;
  });
  const probe = `${prefix}doctor:probe`;
  const probes: [string, () => Promise<unknown>][] = [
    [`read ${prefix}safety:lockouts (HGETALL)`, () => c.hgetall(`${prefix}safety:lockouts`)],
    [`write ${probe} (SET)`, () => c.set(probe, '0', 'PX', 2000)],
    [`count on ${probe} (INCRBYFLOAT)`, () => c.incrbyfloat(probe, 0)],
    ['run scripts (EVAL)', () => c.eval('return 1', 1, probe)],
    [`publish on ${prefix}safety:changes (PUBLISH)`, () => c.publish(`${prefix}safety:changes`, 'probe')],
    [`delete ${probe} (DEL)`, () => c.del(probe)],
  ];
  try {
    await c.connect();
    const refused: string[] = [];
    for (const [what, run] of probes) {
      try {
        await run();
      } catch (e) {
        if (!NOPERM.test((e as Error).message)) throw e;
        refused.push(`${what}: ${(e as Error).message}`);
      }
    }
    return refused;
  } catch (e) {
    throw first ?? e;
  } finally {
    c.disconnect();
  }
}

import { withOneShotRedis } from './redis-ping.js';

/** A refusal by the server's ACL (`NOPERM …`). */
const NOPERM = /^NOPERM/;

/**
 * What a daemon of the cluster under key prefix `prefix` (`finger:<cluster>:`) does with Redis,
 * one command of each kind, tried as the URL's user: read and write its keys, run its scripts,
 * publish on its channel. Returns what the server's ACL refused (`"run scripts (EVAL): NOPERM …"`),
 * empty when nothing was. The probes touch one key of their own (`<prefix>doctor:probe`, set with
 * a 2 s expiry and deleted) and publish a non-JSON message every daemon ignores. Rejects as
 * {@link pingRedis} does when the server cannot be reached or refuses the login.
 */
export function redisAccessRefusals(url: string, prefix: string, timeout_ms = 2000): Promise<string[]> {
  const probe = `${prefix}doctor:probe`;
  return withOneShotRedis(url, timeout_ms, async (c) => {
    const probes: [string, () => Promise<unknown>][] = [
      [`read ${prefix}safety:lockouts (HGETALL)`, () => c.hgetall(`${prefix}safety:lockouts`)],
      [`write ${probe} (SET)`, () => c.set(probe, '0', 'PX', 2000)],
      [`count on ${probe} (INCRBYFLOAT)`, () => c.incrbyfloat(probe, 0)],
      ['run scripts (EVAL)', () => c.eval('return 1', 1, probe)],
      [`publish on ${prefix}safety:changes (PUBLISH)`, () => c.publish(`${prefix}safety:changes`, 'probe')],
      [`delete ${probe} (DEL)`, () => c.del(probe)],
    ];
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
  });
}

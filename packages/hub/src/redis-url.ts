// The one parser of `redis.url`: config validation, the daemon's Redis connection and
// `myfinger doctor` read it the same way. Pure (no ioredis), so the root entry may export it.

import { FingerError } from '@finger/protocol';

/** A `redis://` / `rediss://` URL taken apart (credentials decoded). */
export interface RedisUrlParts {
  /** True for `rediss://`. */
  tls: boolean;
  /** Host name or IP address (an IPv6 address without its brackets). */
  host: string;
  /** 6379 unless the URL gives one. */
  port: number;
  /** Database index from the path `/N`; 0 when absent. */
  db: number;
  username?: string;
  password?: string;
}

/** What a valid URL looks like, for messages. */
export const REDIS_URL_FORM = 'redis://[user:pass@]host[:port][/db] (or rediss:// for TLS)';

const URL_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?(\[[^\]/?#]*\]|[^:/?#]*)(?::([^/?#]*))?([^?#]*)(.*)$/;

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new Error(`the ${what} is not valid percent-encoding`);
  }
}

function parts(url: string): RedisUrlParts {
  const m = URL_RE.exec(url);
  if (m === null) throw new Error('it is not a URL');
  const [, scheme = '', auth, rawHost = '', rawPort, path = '', rest = ''] = m;
  if (scheme !== 'redis' && scheme !== 'rediss') throw new Error(`the scheme "${scheme}" is not redis or rediss`);
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  if (host === '' || /\s/.test(host)) throw new Error('it names no host');
  let port = 6379;
  if (rawPort !== undefined) {
    port = /^\d{1,5}$/.test(rawPort) ? Number(rawPort) : NaN;
    if (!(port >= 1 && port <= 65535))
      throw new Error(`the port ${JSON.stringify(rawPort)} is not a number from 1 to 65535`);
  }
  let db = 0;
  if (path !== '' && path !== '/') {
    if (!/^\/\d{1,9}$/.test(path))
      throw new Error(`the path ${JSON.stringify(path)} is not a database index /N (a non-negative integer)`);
    db = Number(path.slice(1));
  }
  if (rest !== '') throw new Error('it has a query or fragment (nothing may follow the database index)');
  const out: RedisUrlParts = { tls: scheme === 'rediss', host, port, db };
  if (auth !== undefined && auth !== '') {
    const colon = auth.indexOf(':');
    const user = colon === -1 ? auth : auth.slice(0, colon);
    if (user !== '') out.username = decode(user, 'user name');
    if (colon !== -1) out.password = decode(auth.slice(colon + 1), 'password');
  }
  return out;
}

/**
 * Why `url` is not a usable Redis URL (`the port "x" is not a number from 1 to 65535`), or
 * undefined when it is one. Never repeats the URL (it may hold a password).
 */
export function redisUrlProblem(url: string): string | undefined {
  try {
    parts(url);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Takes a Redis URL apart: scheme `redis://` or `rediss://`, a host, a port 1–65535 (default
 * 6379), an optional database index `/N`, nothing after it. Throws E_INVALID_ARGS saying what is
 * wrong (the message never holds the password).
 */
export function parseRedisUrl(url: string): RedisUrlParts {
  try {
    return parts(url);
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `invalid Redis URL: ${(e as Error).message}; expected ${REDIS_URL_FORM}`, {
      problem: (e as Error).message,
    });
  }
}

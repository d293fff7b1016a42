// What a Redis connection error means, in words a user acts on. One place for `myfinger doctor`,
// the daemon's start and the stores' E_STORE_UNAVAILABLE messages.

import type { RedisUrlParts } from '../redis-url.js';

/** The server's refusal of the URL's database index (`ERR DB index is out of range`). */
export const DB_REFUSED = /DB index is out of range/i;

const TLS_CODES =
  /^(ERR_SSL_|ERR_TLS_|EPROTO$|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_)/;

/**
 * The error's own message followed by what it means: `WRONGPASS … — authentication refused: wrong
 * user name or password`, `NOAUTH … — the server wants a password (none given): …`,
 * `connect ECONNREFUSED … — connection refused: nothing listens there`, `… — TLS handshake failed …`,
 * `ERR DB index is out of range — database index 99 is not available on that server …`.
 * `url` (the parsed `redis.url`) sharpens the TLS and database hints.
 */
export function redisCause(e: unknown, url?: RedisUrlParts): string {
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | undefined)?.code;
  const hint = ((): string => {
    if (/^NOAUTH/.test(message)) return 'the server wants a password (none given): redis://:PASSWORD@host:port';
    if (/^WRONGPASS|invalid password/i.test(message)) return 'authentication refused: wrong user name or password';
    if (DB_REFUSED.test(message))
      return `database index ${url?.db ?? '?'} is not available on that server (it has fewer databases, see its "databases" setting)`;
    if (typeof code === 'string' && TLS_CODES.test(code)) return 'TLS handshake failed';
    if (code === 'ECONNREFUSED') return 'connection refused: nothing listens there';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
    if (url?.tls && (code === 'ETIMEDOUT' || code === 'ECONNRESET'))
      return 'TLS handshake failed: no TLS answer (does that port serve TLS? use redis:// for a plain server)';
    if (code === 'ETIMEDOUT') return 'no answer';
    return '';
  })();
  return hint === '' ? message : `${message} — ${hint}`;
}

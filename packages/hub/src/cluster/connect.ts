import { readFileSync } from 'node:fs';

import { connect, credsAuthenticator, type NatsConnection, nkeyAuthenticator, nkeys } from 'nats';

import { FingerError } from '@finger/protocol';

import { withoutCredentials } from '../url-credentials.js';

/** How to reach and authenticate to NATS (daemon config `nats`, `module serve` flags). */
export interface NatsConnectOptions {
  url: string;
  /** Connection name shown by the server (`finger-daemon-<node>`). */
  name?: string;
  token?: string;
  user?: string;
  pass?: string;
  /** A `.creds` file (JWT + nkey seed). */
  creds_file?: string;
  /** A file holding an nkey seed (`SU…`). */
  nkey_seed_file?: string;
  tls?: { ca_file?: string; cert_file?: string; key_file?: string };
  /** Give up on the first connect after this many ms. Default 2000. */
  timeout_ms?: number;
  /** Wait between reconnect attempts (ms, jittered). Default 250. */
  reconnect_wait_ms?: number;
}

const read = (file: string) => readFileSync(file, 'utf8');

/**
 * Connects to NATS with `noAsyncTraces: true` (no Error captured per request), endless
 * reconnects with a short jittered backoff, and the credentials given. Rejects with
 * E_STORE_UNAVAILABLE when the server cannot be reached or refuses the credentials, and with
 * E_INVALID_ARGS when a credentials file cannot be read.
 */
export async function connectNats(o: NatsConnectOptions): Promise<NatsConnection> {
  let authenticator;
  try {
    if (o.creds_file) authenticator = credsAuthenticator(new TextEncoder().encode(read(o.creds_file)));
    else if (o.nkey_seed_file) {
      const seed = new TextEncoder().encode(read(o.nkey_seed_file).trim());
      try {
        nkeys.fromSeed(seed); // checked now: nats.js would fail each connect with "invalid encoded key"
      } catch (e) {
        throw new Error(`${o.nkey_seed_file} does not hold an nkey seed (SU…): ${(e as Error).message}`);
      }
      authenticator = nkeyAuthenticator(seed);
    }
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `cannot read NATS credentials: ${(e as Error).message}`);
  }
  let tls;
  try {
    // a tls:// URL asks for TLS: nats.js ignores the scheme and, without a `tls` option, talks
    // plaintext to a server that does not offer TLS (or to anyone who strips the offer)
    if (o.tls || wantsTls(o.url)) {
      tls = {
        ...(o.tls?.ca_file ? { ca: read(o.tls.ca_file) } : {}),
        ...(o.tls?.cert_file ? { cert: read(o.tls.cert_file) } : {}),
        ...(o.tls?.key_file ? { key: read(o.tls.key_file) } : {}),
      };
    }
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `cannot read NATS TLS files: ${(e as Error).message}`);
  }
  try {
    return await connect({
      // nats.js writes its outbound buffer to the socket once it holds 32 KB (else after the
      // microtask wave): 100 signed calls in flight are ~45 KB, so the default cut them into two
      // writes. 128 KB (a hidden nats.js option; ignored if it goes away) halves the writes: +12–25%
      // calls/s at 100 in flight here. A bound, not a buffer: it is flushed at that size.
      ...({ pendingLimit: 128 * 1024 } as object),
      servers: o.url.split(',').map((s) => s.trim()),
      ...(o.name ? { name: o.name } : {}),
      ...(o.token ? { token: o.token } : {}),
      ...(o.user ? { user: o.user, pass: o.pass ?? '' } : {}),
      ...(authenticator ? { authenticator } : {}),
      ...(tls ? { tls } : {}),
      noAsyncTraces: true,
      timeout: o.timeout_ms ?? 2000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: o.reconnect_wait_ms ?? 250,
      reconnectJitter: 100,
      pingInterval: 10_000,
      maxPingOut: 2,
    });
  } catch (e) {
    // a `user:password@` in the URL stays out of the message (it reaches logs, /v1/health, doctor)
    const url = withoutCredentials(o.url);
    const why = causeOf(e, o);
    throw new FingerError(
      'E_STORE_UNAVAILABLE',
      `cannot connect to NATS at ${url}: ${(e as Error).message}${why ? ` — ${why}` : ''}`,
      { url },
    );
  }
}

/** Whether one of the comma-separated server URLs asks for TLS (`tls://`). */
function wantsTls(url: string): boolean {
  return url.split(',').some((s) => /^\s*tls:\/\//i.test(s));
}

/** The credentials a connection offers, in words (never the secrets), or undefined for none. */
function credentialsGiven(o: NatsConnectOptions): string | undefined {
  if (o.creds_file) return `the .creds file ${o.creds_file}`;
  if (o.nkey_seed_file) return `the nkey seed in ${o.nkey_seed_file}`;
  if (o.user) return `user "${o.user}" and a password`;
  if (o.token) return 'a token';
  if (/^\s*[a-z]+:\/\/[^/@,]*@/i.test(o.url)) return 'the credentials in the URL';
  return undefined;
}

/**
 * What a failed first connection means, in words, for the error (nats.js's own messages —
 * `'Authorization Violation'`, `TIMEOUT`, `tls` — do not say): undefined when the message says it.
 */
function causeOf(e: unknown, o: NatsConnectOptions): string | undefined {
  const { code, message } = e as { code?: unknown; message?: unknown };
  const given = credentialsGiven(o);
  switch (code) {
    case 'AUTHORIZATION_VIOLATION':
    case 'AUTHENTICATION_EXPIRED':
    case 'ACCOUNT_EXPIRED':
      return given === undefined
        ? 'the server wants credentials and none were given (a token, a user and password, an nkey seed file or a .creds file)'
        : `the server refused the credentials given (${given})`;
    case 'BAD_CREDS':
      return `${given ?? 'the .creds file'} does not hold a user JWT and nkey seed`;
    case 'SERVER_OPT_NA':
      return message === 'tls'
        ? 'TLS was asked for (a tls:// URL or TLS files) but the server does not offer TLS'
        : undefined;
    case 'TIMEOUT':
      return `the server did not complete the connection within ${o.timeout_ms ?? 2000} ms${
        (o.tls !== undefined || wantsTls(o.url)) && !o.tls?.cert_file
          ? ' (a server that requires a client certificate drops a connection without one: give a certificate and key)'
          : ''
      }`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return "the server's TLS certificate is not signed by a trusted CA: give the CA certificate that signed it";
    case 'CERT_HAS_EXPIRED':
      return "the server's TLS certificate has expired";
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return "the server's TLS certificate does not name the host in the URL";
    default:
      return undefined;
  }
}

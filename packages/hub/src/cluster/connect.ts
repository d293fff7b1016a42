import { readFileSync } from 'node:fs';

import { connect, credsAuthenticator, type NatsConnection, nkeyAuthenticator } from 'nats';

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
    else if (o.nkey_seed_file)
      authenticator = nkeyAuthenticator(new TextEncoder().encode(read(o.nkey_seed_file).trim()));
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `cannot read NATS credentials: ${(e as Error).message}`);
  }
  let tls;
  try {
    if (o.tls) {
      tls = {
        ...(o.tls.ca_file ? { ca: read(o.tls.ca_file) } : {}),
        ...(o.tls.cert_file ? { cert: read(o.tls.cert_file) } : {}),
        ...(o.tls.key_file ? { key: read(o.tls.key_file) } : {}),
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
    throw new FingerError('E_STORE_UNAVAILABLE', `cannot connect to NATS at ${url}: ${(e as Error).message}`, {
      url,
    });
  }
}

import { resolve } from 'node:path';

import type { NatsConnectOptions } from '@finger/hub/nats';

import type { DaemonConfig } from './config.js';

/**
 * How the daemon connects to NATS, from its `nats` config: the URL, the credentials and the TLS
 * files, file paths resolved under FINGER_HOME when relative (`myfinger doctor` connects the same
 * way to check them).
 */
export function natsConnectOptions(nats: DaemonConfig['nats'], home: string, name?: string): NatsConnectOptions {
  const { tls, ...creds } = nats;
  return {
    url: nats.url ?? '',
    ...(name !== undefined ? { name } : {}),
    ...(creds.token ? { token: creds.token } : {}),
    ...(creds.user ? { user: creds.user, pass: creds.pass ?? '' } : {}),
    ...(creds.creds_file ? { creds_file: resolve(home, creds.creds_file) } : {}),
    ...(creds.nkey_seed_file ? { nkey_seed_file: resolve(home, creds.nkey_seed_file) } : {}),
    ...(tls
      ? {
          tls: {
            ...(tls.ca_file ? { ca_file: resolve(home, tls.ca_file) } : {}),
            ...(tls.cert_file ? { cert_file: resolve(home, tls.cert_file) } : {}),
            ...(tls.key_file ? { key_file: resolve(home, tls.key_file) } : {}),
          },
        }
      : {}),
  };
}

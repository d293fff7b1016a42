import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { nkeys } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  binaryForTests,
  type CliChild,
  natsServerBinary,
  type NatsServerChild,
  startConfiguredNats,
  testClusterName,
  type TestDaemon,
} from '@finger/testkit';

import { callProbe, serveProbe, startClusterDaemon, untilListed, untilServing } from './remote-probe-helpers.js';

// nats-server in operator (decentralized JWT) mode: an operator, an account and its users made
// here with nkeys, the JWTs signed as the NATS JWT v2 format says, the account preloaded into a
// MEMORY resolver. The daemon's `nats.creds_file` and `module serve --creds` log in with them.
const bin = binaryForTests(natsServerBinary(), 'NATS creds-file tests', 'no nats-server binary (set NATS_SERVER_BIN)');

const KEY = 'nats-creds-test-key-0123456789abcdef';
const cluster = testClusterName('creds');

type KeyPair = ReturnType<typeof nkeys.createUser>;

/** RFC 4648 base32 without padding (the `jti` of a NATS JWT). */
function base32(buf: Uint8Array): string {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let v = 0;
  let out = '';
  for (const b of buf) {
    v = ((v << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += A[(v >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + A[(v << (5 - bits)) & 31] : out;
}

/** A NATS JWT (v2) of `nats` claims about `subject`, signed by `issuer`. */
function jwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const claims = { jti: '', iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats };
  claims.jti = base32(createHash('sha512-256').update(JSON.stringify(claims)).digest());
  const head = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = issuer.sign(new TextEncoder().encode(`${head}.${body}`));
  return `${head}.${body}.${Buffer.from(sig).toString('base64url')}`;
}

/** A `.creds` file's text: the user's JWT and nkey seed. */
function creds(account: KeyPair, name: string): string {
  const user = nkeys.createUser();
  const limits = { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: 'user', version: 2 };
  const token = jwt(account, user.getPublicKey(), name, limits);
  const seed = new TextDecoder().decode(user.getSeed());
  return (
    `-----BEGIN NATS USER JWT-----\n${token}\n------END NATS USER JWT------\n\n` +
    `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`
  );
}

describe.skipIf(bin === undefined)('NATS decentralized auth: .creds files', () => {
  let dir: string;
  let url: string;
  let server: NatsServerChild | undefined;
  const children: CliChild[] = [];
  const daemons: TestDaemon[] = [];

  /** A daemon logging in with `credsName` of the test's files (copied to its home's config/). */
  const daemon = (credsName: string) =>
    startClusterDaemon({
      url,
      cluster,
      clusterKey: KEY,
      nats: { creds_file: `config/${credsName}` },
      files: [join(dir, credsName)],
    }).then((d) => {
      daemons.push(d);
      return d;
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-nats-creds-'));
    const operator = nkeys.createOperator();
    const account = nkeys.createAccount();
    const limits = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
    const accountJwt = jwt(operator, account.getPublicKey(), 'finger', {
      limits,
      default_permissions: { pub: {}, sub: {} },
      type: 'account',
      version: 2,
    });
    writeFileSync(join(dir, 'daemon.creds'), creds(account, 'daemon'), { mode: 0o600 });
    writeFileSync(join(dir, 'serve.creds'), creds(account, 'serve'), { mode: 0o600 });
    // a user of an account the server does not know
    writeFileSync(join(dir, 'stranger.creds'), creds(nkeys.createAccount(), 'stranger'), { mode: 0o600 });
    const operatorJwt = jwt(operator, operator.getPublicKey(), 'op', { type: 'operator', version: 2 });
    server = await startConfiguredNats(
      bin!,
      `operator: "${operatorJwt}"
resolver: MEMORY
resolver_preload: {
  ${account.getPublicKey()}: "${accountJwt}"
}
`,
    );
    url = server.url;
  });

  afterAll(async () => {
    for (const ch of children) ch.kill('SIGKILL');
    for (const d of daemons) await d.close();
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a daemon (creds file relative to FINGER_HOME) and a serve host (--creds) log in, and a call goes through', async () => {
    const d = await daemon('daemon.creds');
    expect((await d.http('GET', '/v1/health')).body.nats).toMatchObject({ connected: true });
    const host = serveProbe(cluster, KEY, ['--nats', url, '--creds', join(dir, 'serve.creds')]);
    children.push(host);
    await untilServing(host);
    await untilListed(d);
    expect(await callProbe(d, 3)).toMatchObject({ status: 'succeeded', result: { echo: { n: 3 }, pid: host.pid } });
  });

  it('leaves a daemon whose user belongs to an unknown account degraded, with the server saying why', async () => {
    const d = await daemon('stranger.creds');
    const h = (await d.http('GET', '/v1/health')).body;
    expect(h).toMatchObject({ status: 'degraded', nats: { connected: false } });
    expect(h.nats.last_error).toMatch(
      /^cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation/i,
    );
  });
});

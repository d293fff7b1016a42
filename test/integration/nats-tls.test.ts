import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

// A private nats-server that requires TLS with client certificates (mutual TLS), its CA and
// certificates made here with openssl: the daemon's `nats.tls` config and `module serve --tls-*`.
let opensslPath: string | undefined = 'openssl';
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  opensslPath = undefined;
}
const bin = binaryForTests(natsServerBinary(), 'NATS TLS tests', 'no nats-server binary (set NATS_SERVER_BIN)');
const openssl = bin === undefined ? undefined : binaryForTests(opensslPath, 'NATS TLS tests', 'no openssl on the PATH');

const KEY = 'nats-tls-test-key-0123456789abcdef';
const cluster = testClusterName('tls');

/** A CA, a server certificate for 127.0.0.1 and a client certificate, in `dir`. */
function makeCertificates(dir: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=finger test CA');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  for (const [name, cn, ext] of [
    ['server', '127.0.0.1', ['-extfile', 'server.ext']],
    ['client', 'finger-node', []],
  ] as const) {
    ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      ...ext,
    );
  }
}

describe.skipIf(openssl === undefined)('NATS over TLS with client certificates', () => {
  let dir: string;
  let url: string;
  let server: NatsServerChild | undefined;
  const children: CliChild[] = [];
  const daemons: TestDaemon[] = [];

  /** A daemon whose home has the certificates in config/ and `tls` naming the given ones. */
  const daemon = (tls: Record<string, string>) =>
    startClusterDaemon({
      url,
      cluster,
      clusterKey: KEY,
      nats: { tls },
      files: ['ca.pem', 'client.pem', 'client.key'].map((f) => join(dir, f)),
    }).then((d) => {
      daemons.push(d);
      return d;
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-nats-tls-'));
    makeCertificates(dir);
    server = await startConfiguredNats(
      bin!,
      `tls {
  cert_file: "${join(dir, 'server.pem')}"
  key_file: "${join(dir, 'server.key')}"
  ca_file: "${join(dir, 'ca.pem')}"
  verify: true
  timeout: 2
}
`,
    );
    url = `tls://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    for (const ch of children) ch.kill('SIGKILL');
    for (const d of daemons) await d.close();
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects a daemon (certificate files relative to FINGER_HOME) and a serve host, and a call goes through', async () => {
    const d = await daemon({ ca_file: 'config/ca.pem', cert_file: 'config/client.pem', key_file: 'config/client.key' });
    expect((await d.http('GET', '/v1/health')).body.nats).toMatchObject({ connected: true });
    const args = [
      '--tls-ca',
      join(dir, 'ca.pem'),
      '--tls-cert',
      join(dir, 'client.pem'),
      '--tls-key',
      join(dir, 'client.key'),
    ];
    const host = serveProbe(cluster, KEY, ['--nats', url, ...args]);
    children.push(host);
    await untilServing(host);
    await untilListed(d);
    expect(await callProbe(d, 7)).toMatchObject({ status: 'succeeded', result: { echo: { n: 7 }, pid: host.pid } });
  });

  it('leaves a daemon without a client certificate, or without the CA, degraded and out of the cluster', async () => {
    const variants: Record<string, string>[] = [
      { ca_file: 'config/ca.pem' },
      { cert_file: 'config/client.pem', key_file: 'config/client.key' },
    ];
    for (const tls of variants) {
      const d = await daemon(tls);
      const h = (await d.http('GET', '/v1/health')).body;
      expect(h).toMatchObject({ status: 'degraded', nats: { connected: false } });
      expect(typeof h.nats.last_error).toBe('string');
    }
  });

  it('module serve refuses --tls-cert without --tls-key (E_INVALID_ARGS, exit 2)', async () => {
    const run = await serveProbe(cluster, KEY, ['--nats', url, '--tls-cert', join(dir, 'client.pem')]).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error E_INVALID_ARGS: --tls-cert and --tls-key go together/);
  });
});

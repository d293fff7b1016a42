import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import {
  firstBytes,
  freePort,
  MYFINGER_BIN,
  natsServerBinary,
  startTestDaemon,
  testClusterName,
  type TestDaemon,
} from '@finger/testkit';

// A private nats-server that requires TLS with client certificates (mutual TLS), its CA and
// certificates made here with openssl: the daemon's `nats.tls` config and `module serve --tls-*`.
const bin = natsServerBinary();
let openssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  openssl = false;
}
const missing = bin === undefined ? 'no nats-server binary (set NATS_SERVER_BIN)' : !openssl ? 'no openssl' : '';
if (missing && process.env.FINGER_REQUIRE_SERVICES === '1') {
  throw new Error(`FINGER_REQUIRE_SERVICES=1 but the NATS TLS tests cannot run: ${missing}`);
}
if (missing) console.warn(`\n!! SKIPPED: NATS TLS tests — ${missing}\n`);

const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'nats-tls-test-key-0123456789abcdef';
const cluster = testClusterName('tls');

async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

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

describe.skipIf(missing !== '')('NATS over TLS with client certificates', () => {
  let dir: string;
  let url: string;
  let server: ChildProcess | undefined;
  const children: ChildProcess[] = [];
  const daemons: TestDaemon[] = [];

  /** A daemon whose home has the certificates in config/ and `tls` naming the given ones. */
  const daemon = (tls: Record<string, string>) =>
    startTestDaemon({
      config: {
        nats: { url, cluster_key: KEY, tls, heartbeat_ms: 200, unhealthy_after_ms: 800 },
        cluster,
        modules: { builtin: false, paths: [] },
      },
      prepareHome: async (home) => {
        mkdirSync(join(home, 'config'), { recursive: true });
        for (const f of ['ca.pem', 'client.pem', 'client.key']) copyFileSync(join(dir, f), join(home, 'config', f));
      },
    }).then((d) => {
      daemons.push(d);
      return d;
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-nats-tls-'));
    makeCertificates(dir);
    const port = await freePort();
    url = `tls://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'nats.conf'),
      `listen: "127.0.0.1:${port}"
tls {
  cert_file: "${join(dir, 'server.pem')}"
  key_file: "${join(dir, 'server.key')}"
  ca_file: "${join(dir, 'ca.pem')}"
  verify: true
  timeout: 2
}
`,
    );
    server = spawn(bin!, ['-c', join(dir, 'nats.conf')], { stdio: 'ignore' });
    // the server greets with INFO (tls_required) before the handshake
    await until(async () => (await firstBytes(`nats://127.0.0.1:${port}`, 300))?.startsWith('INFO '), 5000);
  });

  afterAll(async () => {
    for (const ch of children) if (ch.exitCode === null) ch.kill('SIGKILL');
    for (const d of daemons) await d.close();
    server?.kill('SIGKILL');
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
    const host = spawn(
      process.execPath,
      [MYFINGER_BIN, 'module', 'serve', PROBE, '--nats', url, '--cluster', cluster, '--heartbeat-ms', '200', ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FINGER_SERVE_KEY: serveKeyOf(KEY) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(host);
    let out = '';
    host.stdout!.on('data', (c) => (out += String(c)));
    await until(() => /serving remote-probe/.test(out));
    await until(async () =>
      (await d.http<{ modules: { id: string }[] }>('GET', '/v1/modules')).body.modules.some(
        (m) => m.id === 'remote-probe',
      ),
    );
    const r = await d.http('POST', '/v1/input', { text: '/hub target=remote-probe.where timeout=3000 {"n":7}' });
    expect(r.body).toMatchObject({ status: 'succeeded', result: { echo: { n: 7 }, pid: host.pid } });
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
    const child = spawn(
      process.execPath,
      [MYFINGER_BIN, 'module', 'serve', PROBE, '--nats', url, '--tls-cert', join(dir, 'client.pem')],
      { env: { PATH: process.env.PATH ?? '', FINGER_SERVE_KEY: serveKeyOf(KEY) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (c) => (err += String(c)));
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(2);
    expect(err).toMatch(/^error E_INVALID_ARGS: --tls-cert and --tls-key go together/);
  });
});

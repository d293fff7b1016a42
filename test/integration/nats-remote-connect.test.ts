import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  binaryForTests,
  natsServerBinary,
  type NatsServerChild,
  startConfiguredNats,
  testClusterName,
} from '@finger/testkit';

import { serveProbe, untilServing } from './remote-probe-helpers.js';

// How `module serve` (and every node: connectNats) reaches NATS: a tls:// URL never falls back to
// plaintext, and a refused connection says why in words — no credentials, refused ones, a file
// that is not an nkey seed — instead of nats.js's bare 'Authorization Violation' or `tls`.
const bin = binaryForTests(
  natsServerBinary(),
  'NATS remote connect tests',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

const KEY = 'nats-remote-connect-key-0123456789';
const cluster = testClusterName('conn');

describe.skipIf(bin === undefined)('module serve connecting to NATS', () => {
  let plain: NatsServerChild | undefined;
  let users: NatsServerChild | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'finger-remote-connect-'));
    plain = await startConfiguredNats(bin!, '');
    users = await startConfiguredNats(
      bin!,
      'authorization { users = [ { user: "alice", password: "s3cret-pass" } ] }\n',
    );
  });
  afterAll(() => {
    plain?.stop();
    users?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Runs a serve host with `args` until it exits; a host that connects is stopped once it says it
   * serves (waiting for that line, not a fixed time: a loaded machine starts the CLI slowly).
   */
  async function serve(args: string[], env: Record<string, string> = {}) {
    const host = serveProbe(cluster, KEY, args, env);
    await untilServing(host);
    if (host.running()) host.kill('SIGTERM');
    return host.done;
  }

  it('a tls:// URL refuses a server that does not offer TLS instead of talking plaintext', async () => {
    const r = await serve(['--nats', plain!.url.replace('nats://', 'tls://')]);
    expect(r.stdout).not.toMatch(/serving remote-probe/);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error E_STORE_UNAVAILABLE: cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: /m);
    expect(r.stderr).toMatch(/the server does not offer TLS/);
  });

  it('names missing credentials', async () => {
    const r = await serve(['--nats', users!.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error E_STORE_UNAVAILABLE: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: /m);
    expect(r.stderr).toMatch(/the server wants credentials and none were given/);
  });

  it('names refused credentials, without the secret', async () => {
    const r = await serve(['--nats', users!.url], { FINGER_NATS_USER: 'alice', FINGER_NATS_PASS: 'wrong-pass' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the server refused the credentials given \(user "alice" and a password\)/);
    expect(r.stderr).not.toMatch(/wrong-pass/);
    const ok = await serve(['--nats', users!.url], { FINGER_NATS_USER: 'alice', FINGER_NATS_PASS: 's3cret-pass' });
    expect(ok.stdout).toMatch(/serving remote-probe on cluster/);
    expect(ok.code).toBe(0);
  });

  it('refuses a file that is not an nkey seed as a bad argument (exit 2)', async () => {
    const file = join(dir, 'not-a-seed.nk');
    writeFileSync(file, 'garbage\n');
    const s = await serve(['--nats', users!.url, '--nkey-seed', file]);
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(
      /^error E_INVALID_ARGS: cannot read NATS credentials: .*not-a-seed\.nk does not hold an nkey seed/m,
    );
  });
});

import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import {
  binaryForTests,
  natsServerBinary,
  type NatsServerChild,
  runCli,
  startConfiguredNats,
  tempDir,
  testClusterName,
} from '@finger/testkit';

// A serve host whose module's manifest cannot fit in a heartbeat under the server's max_payload
// would never be announced, so never called: it refuses to start (exit 2, E_INVALID_ARGS naming
// the sizes) instead of saying "serving" and running for nothing.
const bin = binaryForTests(
  natsServerBinary(),
  'NATS serve-too-big test',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

const KEY = 'nats-serve-too-big-key-0123456789';
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/', import.meta.url));

describe.skipIf(bin === undefined)('module serve under a max_payload its manifest does not fit', () => {
  let server: NatsServerChild | undefined;
  beforeAll(async () => {
    server = await startConfiguredNats(bin!, 'max_payload: 4096\n');
  });
  afterAll(() => server?.stop());

  it('refuses to start with E_INVALID_ARGS (exit 2) naming the module, its size and the limit', async () => {
    await using dir = await tempDir('finger-too-big-');
    const manifest = JSON.parse(readFileSync(join(PROBE, 'module.json'), 'utf8')) as {
      tools: { description: string }[];
    };
    for (const t of manifest.tools) t.description = `${t.description} ${'x'.repeat(1200)}`;
    writeFileSync(join(dir.path, 'module.json'), JSON.stringify(manifest));
    copyFileSync(join(PROBE, 'index.mjs'), join(dir.path, 'index.mjs'));
    const env = { FINGER_SERVE_KEY: serveKeyOf(KEY, 'remote-probe') };
    const args = ['--json', 'module', 'serve', dir.path, '--nats', server!.url, '--cluster', testClusterName('big')];
    const r = await runCli(args, env, 30_000);
    expect(r.code).toBe(2);
    const err = JSON.parse(r.stdout) as { error: { code: string; message: string; details: { max_payload: number } } };
    expect(err.error.code).toBe('E_INVALID_ARGS');
    expect(err.error.message).toMatch(
      /^module remote-probe cannot be announced: its manifest \(\d+ bytes\) does not fit/,
    );
    expect(err.error.details.max_payload).toBe(4096);
    // the same module with its own descriptions fits and serves (so the check above can fail)
    const ok = await runCli(
      ['module', 'serve', PROBE, '--nats', server!.url, '--cluster', testClusterName('fit'), '--drain-ms', '0'],
      env,
      3000,
    );
    expect(ok.stdout).toMatch(/serving remote-probe on cluster/);
  });
});

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { natsUrlForTests, tempDir, testClusterName } from '@finger/testkit';

const url = await natsUrlForTests();
const DAEMON = fileURLToPath(new URL('../../packages/daemon/dist/index.js', import.meta.url));
const run = promisify(execFile);

/** Builds the built daemon in a child process and reports whether the `nats` client got loaded. */
async function natsLoaded(config: Record<string, unknown>): Promise<boolean> {
  await using home = await tempDir('finger-lazy-');
  const script = `
    import { createRequire } from 'node:module';
    const { build } = await import(${JSON.stringify(DAEMON)});
    const app = await build({ home: ${JSON.stringify(home.path)}, env: {}, config: ${JSON.stringify(config)} });
    const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/nats/'));
    await app.close();
    process.stderr.write('NATS_LOADED=' + loaded + '\\n');
  `;
  const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
  const m = /NATS_LOADED=(true|false)/.exec(stderr);
  if (!m) throw new Error(`no answer from the child: ${stderr}`);
  return m[1] === 'true';
}

describe('the embedded default never loads the nats client', () => {
  it('a daemon without nats.url does not load nats', async () => {
    expect(await natsLoaded({ server: { port: 0 }, modules: { builtin: false }, log: { level: 'silent' } })).toBe(
      false,
    );
  });

  it.skipIf(!url)('a daemon with nats.url does (so the check above can fail)', async () => {
    const config = {
      server: { port: 0 },
      modules: { builtin: false },
      log: { level: 'silent' },
      nats: { url: url!, cluster_key: 'lazy-load-test-key-0123456789' },
      cluster: testClusterName('lazy'),
    };
    expect(await natsLoaded(config)).toBe(true);
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { DEFAULT_URL, locateDaemon } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'finger-cli-locate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function home(config?: unknown): string {
  const h = mkdtempSync(join(dir, 'home-'));
  if (config !== undefined) {
    mkdirSync(join(h, 'config'), { recursive: true });
    writeFileSync(join(h, 'config', 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  }
  return h;
}

describe('locateDaemon with no daemon.json', () => {
  it('tries where the config says the daemon listens (config, then FINGER_HOST/FINGER_PORT)', async () => {
    const h = home({ server: { port: 7793 } });
    expect((await locateDaemon({ home: h }, {})).url).toBe('http://127.0.0.1:7793');
    expect((await locateDaemon({ home: h }, { FINGER_PORT: '7801', FINGER_HOST: '::1' })).url).toBe(
      'http://[::1]:7801',
    );
    // a daemon listening on every address is reached on loopback
    expect((await locateDaemon({ home: home({ server: { host: '0.0.0.0', port: 7794 } }) }, {})).url).toBe(
      'http://127.0.0.1:7794',
    );
  });

  it('falls back to the default without a port in the config, or with a config it cannot read', async () => {
    expect((await locateDaemon({ home: home() }, {})).url).toBe(DEFAULT_URL);
    expect((await locateDaemon({ home: home('{not json') }, {})).url).toBe(DEFAULT_URL);
    expect((await locateDaemon({ home: home({ server: { port: 0 } }) }, {})).url).toBe(DEFAULT_URL);
    // FINGER_URL and --url still win
    expect((await locateDaemon({ home: home({ server: { port: 7795 } }) }, { FINGER_URL: 'http://h:1' })).url).toBe(
      'http://h:1',
    );
  });
});

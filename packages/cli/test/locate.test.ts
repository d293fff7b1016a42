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

describe('locateDaemon: the admin token file', () => {
  const write = (file: string, text: string) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
  };

  it('reads FINGER_TOKEN, else FINGER_TOKEN_FILE, else daemon.json token_file, else config token_file, else <home>/token', async () => {
    const h = home({ token_file: 'keys/admin-token' });
    const user = mkdtempSync(join(dir, 'user-'));
    write(join(h, 'token'), 'fgr_in_home\n');
    write(join(h, 'keys', 'admin-token'), 'fgr_from_config\n');
    write(join(user, 'secrets', 'tok'), 'fgr_from_env_file\n');
    // config token_file (relative: under FINGER_HOME)
    expect(await locateDaemon({ home: h }, {})).toMatchObject({
      token: 'fgr_from_config',
      tokenFile: join(h, 'keys', 'admin-token'),
    });
    // FINGER_TOKEN_FILE (`~/…`: under HOME) beats the config
    expect(await locateDaemon({ home: h }, { HOME: user, FINGER_TOKEN_FILE: '~/secrets/tok' })).toMatchObject({
      token: 'fgr_from_env_file',
      tokenFile: join(user, 'secrets', 'tok'),
    });
    // FINGER_TOKEN beats every file
    expect((await locateDaemon({ home: h }, { FINGER_TOKEN: 'fgr_env', FINGER_TOKEN_FILE: '/nope' })).token).toBe(
      'fgr_env',
    );
    // a running daemon's daemon.json names the file it wrote
    const running = join(user, 'running-token');
    write(running, 'fgr_running\n');
    writeFileSync(join(h, 'daemon.json'), JSON.stringify({ pid: 1, url: 'http://127.0.0.1:1', token_file: running }));
    expect(await locateDaemon({ home: h }, {})).toMatchObject({ token: 'fgr_running', tokenFile: running });
    // nothing configured: <home>/token
    const plain = home();
    write(join(plain, 'token'), 'fgr_plain\n');
    expect(await locateDaemon({ home: plain }, {})).toMatchObject({
      token: 'fgr_plain',
      tokenFile: join(plain, 'token'),
    });
  });
});

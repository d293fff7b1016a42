import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { pidAlive, startErrorOf } from '../src/commands/daemon.js';
import { runCli } from './helpers.js';

const daemonEntry = fileURLToPath(new URL('./fixtures/fake-daemon-main.mjs', import.meta.url));

let home: string;
const started: number[] = [];

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-daemon-'));
});
afterEach(async () => {
  for (const pid of started.splice(0)) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(home, { recursive: true, force: true });
});

describe('daemon start | status | stop (background, against a stand-in entry script)', () => {
  it('starts, reports running, shows status, stops, then says it is not running', async () => {
    const env = { FINGER_HOME: home };
    const start = await runCli(['daemon', 'start', '--port', '0'], { env, daemonEntry });
    const m = start.stdout.match(
      /^finger daemon started \(pid (\d+)\) at (http:\/\/127\.0\.0\.1:\d+); token in (.+)\n$/,
    );
    expect(start.stderr).toBe('');
    expect(start.code).toBe(0);
    expect(m).not.toBeNull();
    const pid = Number(m![1]);
    const url = m![2]!;
    started.push(pid);
    expect(m![3]).toBe(path.join(home, 'token'));
    expect(JSON.parse(await readFile(path.join(home, 'daemon.json'), 'utf8'))).toMatchObject({ pid, url, home });
    expect(await readFile(path.join(home, 'daemon.log'), 'utf8')).toContain(`fake daemon listening at ${url}`);

    expect(await runCli(['daemon', 'start'], { env, daemonEntry })).toEqual({
      code: 0,
      stdout: `finger daemon is already running (pid ${pid}) at ${url}\n`,
      stderr: '',
    });

    const status = await runCli(['daemon', 'status'], { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `^finger daemon ok\\n  pid      ${pid}\\n  url      ${url}\\n  version  0\\.0\\.0-fake\\n  uptime   \\d+s\\n  modules  0\\n  home     ${home}\\n$`,
      ),
    );
    const statusJson = JSON.parse((await runCli(['daemon', 'status', '--json'], { env })).stdout) as Record<
      string,
      unknown
    >;
    expect(statusJson).toMatchObject({ status: 'ok', pid, url, home, modules: 0 });

    expect(await runCli(['daemon', 'stop'], { env })).toEqual({
      code: 0,
      stdout: `finger daemon stopped (pid ${pid})\n`,
      stderr: '',
    });
    expect(pidAlive(pid)).toBe(false);

    expect(await runCli(['daemon', 'stop'], { env })).toEqual({
      code: 3,
      stdout: '',
      stderr: `error: the finger daemon is not running (no daemon.json in ${home}); nothing to stop\n`,
    });
    expect((await runCli(['daemon', 'status'], { env })).code).toBe(3);
  });

  it('reports a daemon that exits at start with the tail of its log (exit 1)', async () => {
    const r = await runCli(['daemon', 'start', '--port', '0'], {
      env: { FINGER_HOME: home, FAKE_DAEMON_FAIL: '1' },
      daemonEntry,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error E_INTERNAL: the daemon stopped before answering (exit code 3)\n' +
        `  last lines of ${path.join(home, 'daemon.log')}:\n` +
        '    boom: config/config.json is invalid\n',
    );
    expect(existsSync(path.join(home, 'daemon.json'))).toBe(false);
  });

  it('treats a stale daemon.json (pid gone) as not running', async () => {
    await writeFile(
      path.join(home, 'daemon.json'),
      JSON.stringify({ pid: 2 ** 22 + 12345, url: 'http://127.0.0.1:1' }),
    );
    const r = await runCli(['daemon', 'stop', '--home', home], {});
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `error: the finger daemon is not running (pid ${2 ** 22 + 12345} from daemon.json is gone); nothing to stop\n`,
    );
  });

  it('rejects a bad --port as usage (exit 2)', async () => {
    const r = await runCli(['daemon', 'start', '--port', 'eighty'], { env: { FINGER_HOME: home }, daemonEntry });
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error E_USAGE: --port must be an integer 0..65535, got eighty\n',
    });
  });
});

describe('startErrorOf', () => {
  it('finds the code the daemon refused to start with in its log (background start reported E_INTERNAL)', () => {
    const log = [
      '{"level":40,"msg":"something"}',
      'finger daemon: redis is unavailable at redis://127.0.0.1:6391: NOAUTH Authentication required. [E_STORE_UNAVAILABLE]',
    ];
    expect(startErrorOf(log)).toEqual({
      code: 'E_STORE_UNAVAILABLE',
      message: 'redis is unavailable at redis://127.0.0.1:6391: NOAUTH Authentication required.',
    });
    expect(startErrorOf(['boom: config/config.json is invalid'])).toBeUndefined();
  });
});

describe('daemon start --foreground', () => {
  it('calls runDaemon({foreground, home, port, host, env}) of the daemon entry in-process', async () => {
    const r = await runCli(['daemon', 'start', '--foreground', '--port', '0', '--host', '127.0.0.1', '--home', home], {
      daemonEntry,
      env: { FINGER_LLM_PROVIDER: 'offline' },
    });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(await readFile(path.join(home, 'run-opts.json'), 'utf8'))).toEqual({
      foreground: true,
      home,
      port: 0,
      host: '127.0.0.1',
      env: { FINGER_LLM_PROVIDER: 'offline' },
    });
  });
});

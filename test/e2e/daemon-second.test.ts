// Issue 28 item 9: `daemon start` with another port in a FINGER_HOME whose daemon runs said
// "already running" and silently ignored the port. Now it refuses with E_CONFLICT naming the
// running daemon (pid, address, FINGER_HOME) and how to run a second one (its own FINGER_HOME) —
// which works. `myfinger --help` lists FINGER_PORT among the environment variables.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runCli, tempDir } from '@finger/testkit';

async function urlOf(home: string): Promise<{ pid: number; url: string }> {
  return JSON.parse(await readFile(join(home, 'daemon.json'), 'utf8')) as { pid: number; url: string };
}

describe('a second daemon', () => {
  it('another port in the same FINGER_HOME → E_CONFLICT naming the running daemon; another FINGER_HOME runs', async () => {
    await using home = await tempDir('finger-e2e-second-');
    await using home2 = await tempDir('finger-e2e-second-2-');
    const env = { FINGER_HOME: home.path, FINGER_PORT: '0' };
    expect((await runCli(['daemon', 'start'], env, 30_000)).code).toBe(0);
    try {
      const { pid, url } = await urlOf(home.path);
      const port = Number(new URL(url).port);
      const other = port === 65_535 ? port - 1 : port + 1;
      const expected = {
        code: 1,
        stdout: '',
        stderr:
          `error E_CONFLICT: a finger daemon is already running in FINGER_HOME ${home.path} (pid ${pid}) at ${url}; it was not started again on port ${other}\n` +
          '  one FINGER_HOME runs one daemon; to run a second one, give it its own home:\n' +
          `    FINGER_HOME=${home.path}-2 FINGER_PORT=${other} myfinger daemon start\n` +
          '  or stop this one first: myfinger daemon stop\n',
      };
      expect(await runCli(['daemon', 'start', '--port', String(other)], env)).toEqual(expected);
      expect(await runCli(['daemon', 'start'], { ...env, FINGER_PORT: String(other) })).toEqual(expected);
      // the same port, or none: it is the daemon asked for
      expect(await runCli(['daemon', 'start', '--port', String(port)], env)).toEqual({
        code: 0,
        stdout: `finger daemon is already running (pid ${pid}) at ${url}\n`,
        stderr: '',
      });

      const env2 = { FINGER_HOME: home2.path, FINGER_PORT: '0' };
      const second = await runCli(['daemon', 'start'], env2, 30_000);
      expect(second.code).toBe(0);
      const b = await urlOf(home2.path);
      expect(b.url).not.toBe(url);
      expect((await runCli(['daemon', 'stop'], env2, 30_000)).code).toBe(0);
    } finally {
      await runCli(['daemon', 'stop'], env, 30_000);
    }
  });

  it('myfinger --help lists FINGER_PORT among the environment variables', async () => {
    const help = await runCli(['--help'], {});
    expect(help.stdout).toContain(
      'Environment: FINGER_HOME (default ~/.finger; one daemon per home), FINGER_PORT (daemon start:',
    );
  });
});

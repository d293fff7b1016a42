// Issue 28 item 1: a full disk never hangs the daemon. A real daemon process runs with FINGER_HOME
// (and its log, daemon.log, as the CLI starts it) on a 40 MB tmpfs of its own — mounted in a mount
// namespace (`unshare -m` as root, `unshare -rm` in a user namespace otherwise), reached from here
// through /proc/<pid>/root. The test fills the file system under audited calls and checks that:
// - audited calls are refused with 503 E_STORE_UNAVAILABLE (the entry comes before the action);
// - /v1/health keeps answering, `degraded` with `disk full` (it hung > 8 minutes: the logger's
//   unhandled ENOSPC, then pino's flushSync spinning at exit);
// - halt stops everything at once (423 E_SAFETY_LOCKOUT in memory) while its lockout cannot be
//   written; health names the safety state until the retry writes it;
// - after space is freed: health ok by itself, the lockout is in state/safety.json, calls work,
//   the log says how many lines it dropped, and SIGTERM stops it leaving no daemon.json.
// Skipped loudly (the testkit's banner) only where no tmpfs can be mounted either way.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { binaryForTests, tempDir, waitFor } from '@finger/testkit';

const DAEMON_MAIN = fileURLToPath(new URL('../../packages/daemon/dist/main.js', import.meta.url));

/** The `unshare` flags that let this process mount a tmpfs in a namespace of its own, if any. */
function mountWrapper(): string[] | undefined {
  const dir = spawnSync('mktemp', ['-d', '/tmp/finger-fulldisk-probe-XXXXXX'], { encoding: 'utf8' }).stdout.trim();
  try {
    for (const flags of [['-m'], ['-rm']]) {
      const r = spawnSync('unshare', [...flags, 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs "$0"', dir], {
        stdio: 'ignore',
        timeout: 10_000,
      });
      if (r.status === 0) return ['unshare', ...flags];
    }
    return undefined;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

const wrapper = mountWrapper();
const runnable = binaryForTests(
  wrapper?.join(' '),
  'the full-disk test (a daemon on a 40 MB tmpfs)',
  'no tmpfs can be mounted here: neither `unshare -m` (root) nor `unshare -rm` (user namespaces) works',
);

// In the namespace: mount the tmpfs, start the daemon with its log on it (as `myfinger daemon start`
// does), and once it has exited say whether it left daemon.json behind.
const SCRIPT = [
  'set -e',
  'mount -t tmpfs -o size=40m tmpfs "$0"',
  'mkdir -m 700 "$0/home"',
  'set +e',
  'node "$1" >>"$0/home/daemon.log" 2>&1',
  'rc=$?',
  'if [ -e "$0/home/daemon.json" ]; then echo "daemon.json left behind"; fi',
  'exit $rc',
].join('\n');

interface Answer {
  status: number;
  body: any;
}

describe.skipIf(runnable === undefined)('a full disk (real daemon on a small tmpfs)', () => {
  it('stays responsive, refuses audited calls, halts, and recovers by itself when space returns', async () => {
    await using mnt = await tempDir('finger-fulldisk-');
    await using userHome = await tempDir('finger-fulldisk-user-');
    const child = spawn(wrapper![0]!, [...wrapper!.slice(1), 'sh', '-c', SCRIPT, mnt.path, DAEMON_MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: userHome.path,
        FINGER_HOME: `${mnt.path}/home`,
        FINGER_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // the tmpfs as this process sees it: through the namespace's root
    const home = `/proc/${child.pid}/root${mnt.path}/home`;
    let daemonPid: number | undefined;
    try {
      const info = await waitFor(
        'the daemon to listen',
        async () => JSON.parse(readFileSync(`${home}/daemon.json`, 'utf8')) as { pid: number; url: string },
        45_000,
      );
      daemonPid = info.pid;
      const admin = readFileSync(`${home}/token`, 'utf8').trim();
      const http = async (method: string, path: string, body?: unknown, token: string | null = admin) => {
        const r = await fetch(`${info.url}${path}`, {
          method,
          headers: {
            ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          // an answer, or the test fails: the bug was a daemon that answered nothing
          signal: AbortSignal.timeout(10_000),
        });
        return { status: r.status, body: (await r.json()) as any } satisfies Answer;
      };
      const echo = () => http('POST', '/v1/tools/echo.echo/run', { args: { text: 'hello' } });

      expect((await echo()).status).toBe(200);
      expect((await http('GET', '/v1/health', undefined, null)).body).toMatchObject({ status: 'ok' });

      // fill the file system (the write stops at ENOSPC, leaving what fitted)
      const filler = `/proc/${child.pid}/root${mnt.path}/filler`;
      expect(() => writeFileSync(filler, Buffer.alloc(48 * 1024 * 1024))).toThrow(/ENOSPC/);

      // audited calls: refused with the code once the audit entry cannot be written
      const refused = await waitFor('an audited call to be refused', async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => echo()));
        for (const a of answers) expect([200, 503]).toContain(a.status);
        return answers.find((a) => a.status === 503);
      });
      expect(refused.body.error).toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
      expect(refused.body.error.message).toContain('ENOSPC');

      // still answering — many at once, without and with a token
      const healths = await Promise.all(
        Array.from({ length: 30 }, (_, i) => http('GET', '/v1/health', undefined, i % 2 ? admin : null)),
      );
      for (const h of healths) expect(h.status).toBe(200);
      expect((await http('GET', '/v1/health', undefined, null)).body).toMatchObject({
        status: 'degraded',
        reasons: ['disk full'],
      });
      const detailed = (await http('GET', '/v1/health')).body;
      expect(detailed.status).toBe('degraded');
      // full by a store's failed write — the audit log's, or the daemon's own log when it hit the
      // full disk first and the audit log's next write passed (it cut its failed write back,
      // freeing a few blocks) — or, once the probe write passed, by the free space left: each says
      // "disk full" and names why
      expect(detailed.reasons).toEqual([expect.stringMatching(/^disk full: (.*\(ENOSPC\)|\d+ bytes free)/)]);
      expect(detailed.storage).toMatchObject({ full: true });
      const byEnospc = (detailed.storage.failures as { source: string; code: string }[]).some(
        (f) => f.code === 'ENOSPC',
      );
      expect(byEnospc || (detailed.storage.free_bytes as number) < 65_536).toBe(true);

      // halt: everything stops at once; the lockout is kept in memory and its write retried
      const halt = await http('POST', '/v1/halt', { reason: 'disk full drill' });
      expect(halt).toEqual({ status: 200, body: { phase: 'graceful', state: 'locked' } });
      const locked = await echo();
      expect(locked.status).toBe(423);
      expect(locked.body.error.code).toBe('E_SAFETY_LOCKOUT');
      const afterHalt = (await http('GET', '/v1/health')).body;
      expect(afterHalt.safety).toMatchObject({ state: 'locked', locked: true });
      expect(afterHalt.storage.failures).toEqual(
        expect.arrayContaining([expect.objectContaining({ source: 'safety state', code: 'ENOSPC' })]),
      );
      const persisted = () => {
        try {
          return (JSON.parse(readFileSync(`${home}/state/safety.json`, 'utf8')) as { lockouts: any[] }).lockouts;
        } catch {
          return [];
        }
      };
      expect(persisted()).toEqual([]);

      // space returns: nothing to do by hand
      unlinkSync(filler);
      await waitFor('health to be ok again', async () => {
        const h = await http('GET', '/v1/health', undefined, null);
        return h.body.status === 'ok' ? h : undefined;
      });
      const lockouts = await waitFor('the halt lockout to be written', async () => {
        const l = persisted();
        return l.length > 0 ? l : undefined;
      });
      expect(lockouts).toEqual([
        expect.objectContaining({ cause: 'halt', reason: 'disk full drill', by: 'human:admin' }),
      ]);
      expect((await http('GET', '/v1/health')).body.storage).toMatchObject({ full: false, failures: [] });
      expect((await http('POST', '/v1/unlock', {})).status).toBe(200);
      const again = await echo();
      expect(again.status).toBe(200);
      const notice = await waitFor('the log to say how many lines it dropped', async () => {
        const lines = readFileSync(`${home}/daemon.log`, 'utf8').split('\n');
        return lines.find((l) => l.includes('"component":"log"'));
      });
      expect(JSON.parse(notice)).toMatchObject({
        level: 40,
        msg: expect.stringMatching(/^\d+ log line\(s\) dropped: ENOSPC/),
      });
      expect((await http('GET', '/v1/health')).body.storage.log.dropped).toBeGreaterThan(0);

      // a clean stop: exit code 0 and no daemon.json left (checked inside the namespace)
      process.kill(info.pid, 'SIGTERM');
      daemonPid = undefined;
      expect(await exited).toBe(0);
      expect(out).not.toContain('daemon.json left behind');
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- wrapper output ---\n${out}`, { cause: e });
    } finally {
      if (daemonPid !== undefined) {
        try {
          process.kill(daemonPid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, tempDir, type TestDaemon, waitFor } from '@finger/testkit';

describe('myfinger (built CLI as a child process) against a real daemon', () => {
  let d: TestDaemon;
  let env: Record<string, string>;
  beforeAll(async () => {
    d = await startTestDaemon();
    env = { FINGER_HOME: d.home };
  });
  afterAll(async () => {
    await d?.close();
  });

  it('prints the echo of a blocking /hub send', async () => {
    const r = await runCli(['send', '/hub target=echo blocking=true {"text":"hi"}'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'hi' });
  });

  it('prints a request_id for a non-blocking send whose result the API returns, and replays its path', async () => {
    const r = await runCli(['send', '--json', '/hub target=echo blocking=false {"text":"bg"}'], env);
    expect(r.code).toBe(0);
    const { request_id } = JSON.parse(r.stdout) as { request_id: string };
    const rec = await waitFor(
      `request ${request_id} to finish`,
      async () => {
        const body = (await d.http<any>('GET', `/v1/requests/${request_id}`)).body;
        return body.status !== 'running' ? body : undefined;
      },
      10_000,
      25,
    );
    expect(rec).toMatchObject({ request_id, status: 'succeeded', result: { text: 'bg' } });
    await d.app.events.flush();
    const replay = await runCli(['events', 'replay', request_id, '--json'], env);
    expect(replay.code).toBe(0);
    const { events } = JSON.parse(replay.stdout) as { events: { type: string; correlation_id: string }[] };
    expect(new Set(events.map((e) => e.correlation_id)).size).toBe(1);
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'INPUT_RECEIVED',
      'MODE_PARSED',
      'DISPATCH_SENT',
      'DISPATCH_RESULT',
    ]);
  });

  it('exits 2 with a caret under the bad position of /hub syntax', async () => {
    const r = await runCli(['send', '/hub target=echo blocking=nope {}'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('E_BAD_HUB_SYNTAX');
    expect(r.stderr).toContain('^');
  });

  it('exits 4 with a bad token', async () => {
    const r = await runCli(['module', 'list'], { ...env, FINGER_TOKEN: 'fgr_wrong' });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('E_UNAUTHENTICATED');
  });
});

describe('myfinger daemon start / stop (real background process)', () => {
  it('starts the daemon on a fresh home with echo and pyworker, then stops it', async () => {
    await using home = await tempDir('finger-e2e-home-');
    const env = { FINGER_HOME: home.path, FINGER_PORT: '0' };
    const start = await runCli(['daemon', 'start'], env, 30_000);
    expect(start.code).toBe(0);
    expect(start.stdout).toMatch(/finger daemon started \(pid \d+\) at http:\/\/127\.0\.0\.1:\d+; token in /);
    try {
      const info = JSON.parse(await readFile(join(home.path, 'daemon.json'), 'utf8'));
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const list = await runCli(['module', 'list', '--json'], env);
      expect(list.code).toBe(0);
      const ids = (JSON.parse(list.stdout).modules ?? JSON.parse(list.stdout)).map((m: { id: string }) => m.id).sort();
      expect(ids).toEqual(['echo', 'fs', 'pyworker', 'scratchpad', 'shell', 'supervisor', 'web']);
      const send = await runCli(['send', '/hub target=pyworker.echo {"from":"python"}'], env);
      expect(JSON.parse(send.stdout)).toEqual({ from: 'python' });
    } finally {
      const stop = await runCli(['daemon', 'stop'], env, 30_000);
      expect(stop.code).toBe(0);
    }
    const status = await runCli(['daemon', 'status'], env);
    expect(status.code).toBe(3);
  });
});

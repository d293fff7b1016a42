import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { type FakeDaemon, REPLAY_EVENTS, startFakeDaemon } from './fake-daemon.js';
import { Capture, runCli } from './helpers.js';

let fake: FakeDaemon;
beforeAll(async () => {
  fake = await startFakeDaemon();
});
afterAll(async () => {
  await fake.close();
});

/** Runs `events tail …` until `done(stdout, stderr)` holds, then interrupts it. */
async function tailUntil(argv: string[], env: Record<string, string>, done: (out: string, err: string) => boolean) {
  const ac = new AbortController();
  const stdout = new Capture();
  const stderr = new Capture();
  const running = runCli(['events', 'tail', ...argv], {
    env,
    signal: ac.signal,
    stdoutCapture: stdout,
    stderrCapture: stderr,
  });
  await vi.waitFor(() => expect(done(stdout.text, stderr.text)).toBe(true), { timeout: 10_000, interval: 20 });
  ac.abort();
  return running;
}

describe('events tail', () => {
  it('subscribes with the filter, prints one line per event and warns about dropped events', async () => {
    const r = await tailUntil(
      ['--type', 'mode_parsed,DISPATCH_SENT,DISPATCH_RESULT', '--request', 'req-1'],
      { FINGER_HOME: fake.home },
      (out) => out.includes('DISPATCH_RESULT'),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '2026-01-02T03:04:01.000Z MODE_PARSED         echo.echo req-1 mode=hub',
      '2026-01-02T03:04:02.000Z DISPATCH_SENT       echo.echo req-1 direct=true',
      '2026-01-02T03:04:03.000Z DISPATCH_RESULT     echo.echo req-1 ok=true',
      '',
    ]);
    expect(r.stderr.split('\n')).toEqual([
      'subscribed {"types":["MODE_PARSED","DISPATCH_SENT","DISPATCH_RESULT"],"request_id":"req-1"} — Ctrl-C to stop',
      'warning: 5 event(s) dropped: this client read too slowly',
      '',
    ]);
    await vi.waitFor(() => expect(fake.sockets.size).toBe(0));
  });

  it('--json prints one event per line', async () => {
    const r = await tailUntil(
      ['--json'],
      { FINGER_HOME: fake.home },
      (out) => out.split('\n').length > REPLAY_EVENTS.length,
    );
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(REPLAY_EVENTS);
  });

  it('exits 4 when the daemon refuses the token (error, then close 4401)', async () => {
    const r = await runCli(['events', 'tail'], { env: { FINGER_HOME: fake.home, FINGER_TOKEN: 'wrong' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('error E_UNAUTHENTICATED: missing or invalid bearer token\n');
  });

  it('exits 4 when there is no token at all and the daemon times out the auth', async () => {
    const r = await runCli(['events', 'tail', '--url', fake.url, '--home', '/nonexistent-finger-home'], { env: {} });
    expect(r.code).toBe(4);
    expect(r.stderr.split('\n')[0]).toBe('error E_UNAUTHENTICATED: missing or invalid bearer token');
  });

  it('exits 3 when no daemon answers', async () => {
    const r = await runCli(['events', 'tail', '--url', 'http://127.0.0.1:1'], { env: { FINGER_HOME: fake.home } });
    expect(r).toEqual({
      code: 3,
      stdout: '',
      stderr:
        'error: the finger daemon is not running (no answer at http://127.0.0.1:1). Start it with: myfinger daemon start\n',
    });
  });
});

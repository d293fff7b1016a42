// Issue 27 (event volume), as a user meets it: a daemon whose event segments rotate often, the
// built CLI replaying a request whose events now sit in a gzip'd segment, `events tail` and
// `doctor` reading the same files.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, type TestDaemon } from '@finger/testkit';

describe('event files through the daemon and the CLI', () => {
  let d: TestDaemon;
  let env: Record<string, string>;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { events: { max_segment_bytes: 2048, max_segments: 50 } } });
    env = { FINGER_HOME: d.home };
  });
  afterAll(async () => {
    await d?.close();
  });

  it('replays a request from a gzip-packed segment; the files keep the input as its length and digest', async () => {
    const first = await d.http<{ request_id: string }>('POST', '/v1/input', {
      text: '/hub target=echo blocking=true {"text":"the first call"}',
    });
    expect(first.status).toBe(200);
    for (let i = 0; i < 40; i++) {
      const r = await d.http('POST', '/v1/messages', { target: 'echo', payload: { text: `call ${i}` } });
      expect(r.status).toBe(200);
    }
    await d.app.events.flush();
    const files = (await readdir(join(d.home, 'events'))).filter((f) => f.startsWith('events-')).sort();
    expect(files.length).toBeGreaterThan(3);
    expect(files.slice(0, -1).every((f) => f.endsWith('.jsonl.gz'))).toBe(true);
    expect(files.at(-1)).toMatch(/\.jsonl$/);

    const replay = await runCli(['events', 'replay', first.body.request_id, '--json'], env);
    expect(replay.code).toBe(0);
    const { events } = JSON.parse(replay.stdout) as { events: { type: string; data: Record<string, unknown> }[] };
    expect(events.map((e) => e.type)).toEqual(['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT']);
    expect(events[0]!.data).toEqual({ chars: 56, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const text = await runCli(['events', 'replay', first.body.request_id], env);
    expect(text.stdout).toContain('INPUT_RECEIVED');
    expect(text.stdout).toContain('chars=56');

    const doctor = await runCli(['doctor', '--json'], env);
    const line = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks.find(
      (c) => c.name === 'events',
    );
    // the bound is config.json's (this daemon got its config in code); the sizes are the files'
    expect(line?.detail).toMatch(
      new RegExp(`; now [0-9.]+ KiB in ${files.length} files \\(${files.length - 1} gzip’d\\)`),
    );
  });
});

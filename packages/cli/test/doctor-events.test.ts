import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir } from '@finger/testkit';

import { doctorCheck } from './helpers.js';

// Issue 27: the event files' retention bound in bytes is shown by `myfinger doctor`, with what
// FINGER_HOME/events takes now.

const eventsLine = (home: string) => doctorCheck(home, 'events');

describe('doctor events check', () => {
  it('shows the default bound on a home without events', async () => {
    await using home = await tempDir('finger-doctor-');
    expect(await eventsLine(home.path)).toEqual({
      status: 'ok',
      detail:
        'event files keep at most 16 segments of 4 MiB of lines (64 MiB; events.max_segments, max_segment_bytes), ' +
        "closed ones gzip’d (events.compress_closed); now 0 B in 0 files; held calls' arguments and input text are not kept",
    });
  });

  it('shows what config.json sets and what the files take', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    await writeFile(
      join(home.path, 'config', 'config.json'),
      JSON.stringify({ events: { max_segment_bytes: 1024 * 1024, max_segments: 3, compress_closed: false } }),
    );
    const dir = join(home.path, 'events');
    await mkdir(dir);
    await writeFile(join(dir, 'events-0000000001.jsonl.gz'), Buffer.alloc(512 * 1024));
    await writeFile(join(dir, 'events-0000000002.jsonl'), Buffer.alloc(1024 * 1024));
    await writeFile(join(dir, 'notes.txt'), Buffer.alloc(4096));
    expect((await eventsLine(home.path))?.detail).toBe(
      'event files keep at most 3 segments of 1 MiB of lines (3 MiB; events.max_segments, max_segment_bytes), ' +
        "all plain (events.compress_closed false); now 1.5 MiB in 2 files (1 gzip’d); held calls' arguments and input text are not kept",
    );
  });
});

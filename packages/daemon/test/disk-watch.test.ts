// DiskWatch (issue 28 item 1): what /v1/health says about FINGER_HOME's storage — a writer's
// ENOSPC is `full` until the writer writes again or a probe write in FINGER_HOME works; other
// codes are failures but not a full disk; probes are bounded to one per interval.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir } from '@finger/testkit';

import { DiskWatch, type StorageFailure } from '../src/disk-watch.js';

describe('DiskWatch', () => {
  it('nothing failed: not full, no failures, the free bytes of the file system', async () => {
    await using home = await tempDir('finger-diskwatch-');
    const s = await new DiskWatch({
      home: home.path,
      sources: [{ name: 'audit log', failure: () => undefined }],
    }).status();
    expect(s).toEqual({ full: false, failures: [], free_bytes: expect.any(Number) });
    expect(s.free_bytes).toBeGreaterThan(0);
  });

  it('an ENOSPC is full while a probe write fails, and over once one works — before the writer writes again', async () => {
    await using home = await tempDir('finger-diskwatch-');
    let now = 10_000;
    const failure: StorageFailure = { code: 'ENOSPC', message: 'ENOSPC: no space left on device, write', at: 9_000 };
    const w = new DiskWatch({
      home: home.path,
      sources: [{ name: 'audit log', failure: () => failure }],
      probe_interval_ms: 1000,
      now: () => now,
    });
    // no state/ directory: the probe cannot write, the failure stays
    expect(await w.status()).toMatchObject({
      full: true,
      failures: [{ source: 'audit log', code: 'ENOSPC', message: failure.message, at: new Date(9_000).toISOString() }],
    });
    mkdirSync(join(home.path, 'state'));
    // within the interval: no second probe, still full
    now += 500;
    expect((await w.status()).full).toBe(true);
    now += 500;
    expect(await w.status()).toMatchObject({ full: false, failures: [] });
    // the probe file is gone
    expect(readdirSync(join(home.path, 'state'))).toEqual([]);
    // a failure after the probe is current again
    failure.at = now + 1;
    expect((await w.status()).failures).toHaveLength(1);
  });

  it('a failure that is not for want of space is reported, but is not a full disk', async () => {
    await using home = await tempDir('finger-diskwatch-');
    const w = new DiskWatch({
      home: home.path,
      sources: [
        { name: 'safety state', failure: () => ({ code: 'EROFS', message: 'read-only', at: Date.now() + 60_000 }) },
      ],
    });
    expect(await w.status()).toMatchObject({ full: false, failures: [{ source: 'safety state', code: 'EROFS' }] });
  });

  it('less than min_free_bytes free counts as full', async () => {
    await using home = await tempDir('finger-diskwatch-');
    expect(await new DiskWatch({ home: home.path, min_free_bytes: Number.MAX_SAFE_INTEGER }).status()).toMatchObject({
      full: true,
      failures: [],
    });
  });
});

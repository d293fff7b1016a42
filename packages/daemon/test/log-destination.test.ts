// The daemon's log destination (issue 28 item 1): a failed write never throws into the caller and
// never blocks; lost lines are counted and said in the log once it can be written again; the
// buffer is bounded. Writes go to a real file, or through a write function that fails like a full
// disk (ENOSPC after a given number of bytes).
import { closeSync, openSync, readFileSync, write as fsWrite } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir, waitFor } from '@finger/testkit';

import { LogDestination } from '../src/log-destination.js';

type WriteFn = (fd: number, data: Buffer, cb: (err: NodeJS.ErrnoException | null, written: number) => void) => void;

/** A real file write that takes at most `room()` more bytes, then fails with ENOSPC (partial writes included). */
function diskOf(room: () => number): { write: WriteFn; used: () => number } {
  let used = 0;
  return {
    used: () => used,
    write(fd, data, cb) {
      const free = room() - used;
      if (free <= 0) {
        setImmediate(() =>
          cb(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }), 0),
        );
        return;
      }
      const part = data.subarray(0, Math.min(free, data.length));
      fsWrite(fd, part, (err, n) => {
        used += n;
        cb(err, n);
      });
    },
  };
}

const line = (i: number) => `${JSON.stringify({ level: 30, i, msg: `line ${i}` })}\n`;

describe('LogDestination', () => {
  it('writes lines in order to its descriptor and flushes', async () => {
    await using dir = await tempDir('finger-logdest-');
    const file = join(dir.path, 'daemon.log');
    const fd = openSync(file, 'a');
    try {
      const d = new LogDestination({ fd });
      for (let i = 0; i < 500; i++) expect(d.write(line(i))).toBe(true);
      await d.flush();
      expect(readFileSync(file, 'utf8')).toBe(Array.from({ length: 500 }, (_, i) => line(i)).join(''));
      expect(d.stats()).toEqual({ written: 500, dropped: 0, queued: 0 });
    } finally {
      closeSync(fd);
    }
  });

  it('a full disk drops and counts lines without throwing, and the log says so once it can be written again', async () => {
    await using dir = await tempDir('finger-logdest-');
    const file = join(dir.path, 'daemon.log');
    const fd = openSync(file, 'a');
    let room = line(1).length + 10; // bytes: the first line fits, the second is torn
    let now = 1_000;
    const failures: string[] = [];
    let recovered = 0;
    const disk = diskOf(() => room);
    try {
      const d = new LogDestination({
        fd,
        write: disk.write,
        retry_ms: 1000,
        now: () => now,
        onFailure: (f) => failures.push(f.code),
        onRecovered: () => recovered++,
      });
      d.write(line(1));
      d.write(line(2));
      d.write(line(3));
      await waitFor('the write to fail', async () => d.stats().failing);
      await d.flush();
      expect(d.stats()).toMatchObject({ written: 1, dropped: 2, queued: 0, failing: { code: 'ENOSPC', at: 1_000 } });
      expect(failures).toEqual(['ENOSPC']);
      // within the back-off every line is dropped at once, nothing is tried
      for (let i = 4; i < 10; i++) d.write(line(i));
      expect(d.stats()).toMatchObject({ dropped: 8, queued: 0 });
      // after it, one try: still full
      now += 1000;
      d.write(line(10));
      await d.flush();
      expect(d.stats()).toMatchObject({ written: 1, dropped: 9, failing: { code: 'ENOSPC', at: 2_000 } });
      // space returns: the next line after the back-off is written, after a line counting the lost ones
      room = 1 << 20;
      now += 1000;
      d.write(line(11));
      await d.flush();
      expect(recovered).toBe(1);
      expect(d.stats()).toEqual({ written: 2, dropped: 9, queued: 0 });
      const text = readFileSync(file, 'utf8');
      const [first, torn, notice, last, ...rest] = text.split('\n');
      expect(first).toBe(line(1).trim());
      // the torn line ends where the disk stopped; the notice starts a new line
      expect(line(2).startsWith(torn as string)).toBe(true);
      expect(JSON.parse(notice as string)).toMatchObject({
        level: 40,
        component: 'log',
        dropped: 9,
        dropped_total: 9,
        msg: '9 log line(s) dropped: ENOSPC: no space left on device, write',
      });
      expect(last).toBe(line(11).trim());
      expect(rest).toEqual(['']);
      // every byte that reached the file is in the text: nothing rewritten
      expect(disk.used()).toBe(text.length);
    } finally {
      closeSync(fd);
    }
  });

  it('says what it lost once the disk takes data again, even when nothing more is logged', async () => {
    await using dir = await tempDir('finger-logdest-');
    const file = join(dir.path, 'daemon.log');
    const fd = openSync(file, 'a');
    let room = 0;
    const disk = diskOf(() => room);
    try {
      const d = new LogDestination({ fd, write: disk.write, retry_ms: 20 });
      d.write(line(1));
      d.write(line(2));
      await waitFor('the write to fail', async () => d.stats().failing);
      room = 1 << 20;
      const notice = await waitFor('the notice', async () => readFileSync(file, 'utf8').trim() || undefined);
      expect(JSON.parse(notice)).toMatchObject({ component: 'log', dropped: 2 });
      expect(d.stats()).toEqual({ written: 0, dropped: 2, queued: 0 });
    } finally {
      closeSync(fd);
    }
  });

  it('keeps at most max_buffer_bytes waiting; the rest is dropped and counted', async () => {
    await using dir = await tempDir('finger-logdest-');
    const file = join(dir.path, 'daemon.log');
    const fd = openSync(file, 'a');
    try {
      const held: Array<() => void> = [];
      // a disk that answers only when the test lets it: everything after the first line waits in the buffer
      const d = new LogDestination({
        fd,
        max_buffer_bytes: 10 * line(10).length,
        write: (f, data, cb) => held.push(() => fsWrite(f, data, cb)),
      });
      for (let i = 0; i < 30; i++) d.write(line(i));
      // line 0 is being written; lines 1..10 fit the buffer; 11..29 are dropped
      expect(d.stats()).toMatchObject({ dropped: 19, queued: 10 });
      while (held.length > 0 || d.stats().queued > 0) {
        await waitFor('a write to start', async () => (held.length > 0 ? true : undefined));
        held.shift()?.();
        await waitFor('the write to end', async () => (held.length > 0 || d.stats().queued === 0 ? true : undefined));
      }
      await d.flush();
      const [first, notice, ...rest] = readFileSync(file, 'utf8').trim().split('\n');
      expect(first).toBe(line(0).trim());
      // the notice comes with the first write after the drops
      expect(JSON.parse(notice as string)).toMatchObject({
        level: 40,
        component: 'log',
        dropped: 19,
        msg: `19 log line(s) dropped: more than ${10 * line(10).length} bytes waited to be written`,
      });
      expect(rest).toEqual(Array.from({ length: 10 }, (_, i) => line(i + 1).trim()));
      expect(d.stats()).toMatchObject({ written: 11, dropped: 19, queued: 0 });
    } finally {
      closeSync(fd);
    }
  });

  it('flush() gives up after its timeout when a write never ends', async () => {
    const d = new LogDestination({ write: () => undefined });
    d.write(line(1));
    await d.flush(20);
    expect(d.stats()).toMatchObject({ written: 0, queued: 0 });
  });
});

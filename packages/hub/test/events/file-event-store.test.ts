import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { EVENT_TYPES, type FingerEvent, isFingerError, ulid } from '@finger/protocol';

import { LocalEventBus } from '../../src/events/local-event-bus.js';
import type { Logger } from '../../src/logger.js';
import { FileEventStore } from '../../src/store/file-event-store.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'finger-events-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
function ev(over: Partial<FingerEvent> = {}): FingerEvent {
  n++;
  return {
    id: ulid(),
    type: 'TASK_STATE',
    ts: new Date(1_700_000_000_000 + n).toISOString(),
    request_id: `r${n}`,
    correlation_id: '',
    session_id: 's1',
    workflow_id: '',
    target: 'echo.say',
    data: { n },
    ...over,
  };
}

async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.startsWith('events-')).sort();
}

async function readLines(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of await segmentFiles(dir)) {
    const bytes = await readFile(join(dir, f));
    const text = f.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
    out.push(...text.split('\n').filter((l) => l !== ''));
  }
  return out;
}

function countingLogger(): Logger & { errors: unknown[] } {
  const errors: unknown[] = [];
  const logger = {
    errors,
    debug() {},
    info() {},
    warn() {},
    error(obj: unknown) {
      errors.push(obj);
    },
    child: () => logger,
  };
  return logger;
}

describe('FileEventStore', () => {
  it('creates the directory 0700 and persists each event as one valid JSON line', async () => {
    const dir = join(root, 'nested', 'events');
    const store = new FileEventStore({ dir });
    const batch = [ev(), ev({ type: 'HALTED', data: { reason: 'ctrl-c', nested: { a: [1] } } }), ev()];
    await store.append(batch);
    await store.append([ev()]);
    await store.flush();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await segmentFiles(dir)).toEqual(['events-0000000001.jsonl']);
    const parsed = (await readLines(dir)).map((l) => JSON.parse(l) as FingerEvent);
    expect(parsed.slice(0, 3)).toEqual(batch);
    for (const e of parsed) {
      expect(Object.keys(e).sort()).toEqual(
        ['correlation_id', 'data', 'id', 'request_id', 'session_id', 'target', 'ts', 'type', 'workflow_id'].sort(),
      );
      expect(EVENT_TYPES).toContain(e.type);
    }
    expect(store.stats()).toMatchObject({ segments: 1, appended: 4, written: 4, write_failures: 0 });
    await store.close();
  });

  it('rotates past max_segment_bytes and keeps at most max_segments files, newest events intact', async () => {
    const dir = join(root, 'ev');
    const store = new FileEventStore({ dir, max_segment_bytes: 600, max_segments: 3 });
    const all: FingerEvent[] = [];
    for (let i = 0; i < 60; i++) {
      const batch = [ev(), ev()];
      all.push(...batch);
      await store.append(batch);
    }
    await store.flush();
    const files = await segmentFiles(dir);
    expect(files).toHaveLength(3);
    // the closed ones gzip'd, the one being written plain
    expect(files.slice(0, 2).every((f) => /^events-\d{10}\.jsonl\.gz$/.test(f))).toBe(true);
    expect(files[2]).toMatch(/^events-\d{10}\.jsonl$/);
    for (const f of files) {
      const bytes = await readFile(join(dir, f));
      expect((f.endsWith('.gz') ? gunzipSync(bytes) : bytes).length).toBeLessThanOrEqual(600);
    }
    const kept = (await readLines(dir)).map((l) => JSON.parse(l) as FingerEvent);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(all.slice(all.length - kept.length));
    expect(store.stats()).toMatchObject({ segments: 3, packed_segments: 2 });
    await store.close();

    // Reopened without a memory tail: recent() is answered from the segments.
    const again = new FileEventStore({ dir, max_segment_bytes: 600, max_segments: 3 });
    expect(await again.recent({}, 5)).toEqual(all.slice(-5));
    expect(await again.recent({ request_id: all[all.length - 7]!.request_id }, 5)).toEqual([all[all.length - 7]]);
    expect(await again.recent({ types: ['HALTED'] }, 5)).toEqual([]);
    await again.close();
  });

  it('continues the newest segment on reopen and still replays across both runs', async () => {
    const dir = join(root, 'ev');
    const first = new FileEventStore({ dir });
    const a = ev({ request_id: 'req', correlation_id: 'corr' });
    const noise = ev({ request_id: 'x', correlation_id: 'other' });
    const b = ev({ request_id: 'child', correlation_id: 'corr' });
    await first.append([a, noise, b]);
    await first.close();

    const second = new FileEventStore({ dir });
    const c = ev({ request_id: 'req', correlation_id: 'corr', type: 'DISPATCH_RESULT' });
    await second.append([c, ev({ request_id: 'y' })]);
    expect(await second.forRequest('req')).toEqual([a, b, c]);
    expect(await second.forRequest('child')).toEqual([a, b, c]);
    expect(await second.forRequest('x')).toEqual([noise]);
    expect(await second.forRequest('')).toEqual([]);
    expect(await second.recent({ session_id: 's1' }, 3)).toEqual([b, c, expect.objectContaining({ request_id: 'y' })]);
    expect(await segmentFiles(dir)).toEqual(['events-0000000001.jsonl']);
    await second.close();
  });

  it('skips and counts corrupt lines, and starts a fresh line after a torn one', async () => {
    const dir = join(root, 'ev');
    const first = new FileEventStore({ dir });
    const a = ev({ request_id: 'req' });
    await first.append([a]);
    await first.close();
    const seg = join(dir, 'events-0000000001.jsonl');
    await appendFile(seg, 'not json "req"\n{"id":"x","request_id":"req"}\n{"id":"torn","request_id":"req","ty');

    const second = new FileEventStore({ dir });
    const b = ev({ request_id: 'req' });
    await second.append([b]);
    expect(await second.forRequest('req')).toEqual([a, b]);
    expect(second.stats().corrupt_lines).toBe(3);
    expect(await second.recent({}, 10)).toEqual([a, b]);
    const lines = (await readFile(seg, 'utf8')).split('\n');
    expect(JSON.parse(lines[lines.length - 2]!)).toEqual(b);
    await second.close();
  });

  it('survives an unusable directory: logs once, counts failures, answers from memory', async () => {
    const blocker = join(root, 'file');
    await writeFile(blocker, 'not a directory');
    const logger = countingLogger();
    const store = new FileEventStore({ dir: join(blocker, 'events'), logger });
    const a = ev({ request_id: 'req', correlation_id: 'c' });
    const b = ev({ request_id: 'req2', correlation_id: 'c' });
    const err = await store.append([a]).catch((e: unknown) => e);
    expect(isFingerError(err) && err.code).toBe('E_STORE_UNAVAILABLE');
    await expect(store.append([b])).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await store.flush();
    expect(store.stats()).toMatchObject({ appended: 2, written: 0, write_failures: 2, tail: 2 });
    expect(logger.errors).toHaveLength(1);
    expect(await store.forRequest('req')).toEqual([a, b]);
    expect(await store.recent({}, 10)).toEqual([a, b]);
    await store.close();
  });

  it('behind a LocalEventBus: persisted lines equal the strings listeners saw; a bad disk never throws', async () => {
    const dir = join(root, 'ev');
    const bus = new LocalEventBus({ store: new FileEventStore({ dir }) });
    const seen: string[] = [];
    bus.subscribe({}, (_e, json) => seen.push(json));
    const e1 = bus.emit('INPUT_RECEIVED', { request_id: 'r', correlation_id: 'c' }, { text: 'hi\nthere' });
    const e2 = bus.emit('ROUTE_DECIDED', { request_id: 'r', correlation_id: 'c' });
    expect(await bus.replay('r')).toEqual([e1, e2]);
    expect(await readLines(dir)).toEqual(seen);
    await bus.close();

    const blocker = join(root, 'file');
    await writeFile(blocker, '');
    const bad = new LocalEventBus({ store: new FileEventStore({ dir: join(blocker, 'x') }) });
    const e3 = bad.emit('HALTED', { request_id: 'h' });
    await bad.flush();
    expect(bad.stats()).toMatchObject({ emitted: 1, persisted: 0, persist_failures: 1 });
    expect(await bad.replay('h')).toEqual([e3]);
    await bad.close();
  });

  it('stores an event given only as its line: on disk as it came, answered from the tail parsed', async () => {
    const dir = join(root, 'lines');
    const store = new FileEventStore({ dir });
    const e = ev();
    const line = JSON.stringify(e);
    await store.append([undefined], [line]);
    expect(await readLines(dir)).toEqual([line]);
    expect(await store.recent({}, 5)).toEqual([e]);
    expect(await store.forRequest(e.request_id)).toEqual([e]);
    await store.close();
  });

  it('closed segments are gzip-packed: a fraction of their size on disk, every event still replayed and listed', async () => {
    const dir = join(root, 'packed');
    const store = new FileEventStore({ dir, max_segment_bytes: 64 * 1024, max_segments: 100 });
    const all: FingerEvent[] = [];
    for (let i = 0; i < 40; i++) {
      const batch = Array.from({ length: 50 }, (_, k) =>
        ev({ request_id: `req-${i}-${k}`, correlation_id: `corr-${i}`, data: { text: `hello ${i}-${k}` } }),
      );
      all.push(...batch);
      await store.append(batch);
    }
    await store.flush();
    const files = await segmentFiles(dir);
    const packed = files.filter((f) => f.endsWith('.gz'));
    expect(packed.length).toBe(files.length - 1);
    let raw = 0;
    let onDisk = 0;
    for (const f of packed) {
      const bytes = await readFile(join(dir, f));
      onDisk += bytes.length;
      raw += gunzipSync(bytes).length;
    }
    expect(onDisk).toBeLessThan(raw * 0.4);
    expect((await readLines(dir)).map((l) => JSON.parse(l) as FingerEvent)).toEqual(all);
    await store.close();

    const again = new FileEventStore({ dir, max_segment_bytes: 64 * 1024, max_segments: 100 });
    expect(await again.forRequest('req-3-7')).toEqual(all.slice(150, 200));
    expect(await again.recent({ correlation_id: 'corr-1' }, 3)).toEqual(all.slice(97, 100));
    expect(await again.recent({}, all.length)).toEqual(all);
    await again.close();
  });

  it('compress_closed: false keeps every segment plain JSON lines', async () => {
    const dir = join(root, 'plain');
    const store = new FileEventStore({ dir, max_segment_bytes: 600, max_segments: 4, compress_closed: false });
    for (let i = 0; i < 20; i++) await store.append([ev(), ev()]);
    await store.flush();
    const files = await segmentFiles(dir);
    expect(files).toHaveLength(4);
    expect(files.every((f) => /^events-\d{10}\.jsonl$/.test(f))).toBe(true);
    expect(store.stats().packed_segments).toBe(0);
    await store.close();
  });

  it('on open: an unfinished packing is removed, a plain file beside its whole .gz is dropped, closed plain segments are packed', async () => {
    const dir = join(root, 'crash');
    const first = new FileEventStore({ dir, max_segment_bytes: 600, max_segments: 50, compress_closed: false });
    const all: FingerEvent[] = [];
    for (let i = 0; i < 12; i++) {
      const batch = [ev({ correlation_id: 'c' }), ev({ correlation_id: 'c' })];
      all.push(...batch);
      await first.append(batch);
    }
    await first.close();
    const plain = await segmentFiles(dir);
    expect(plain.length).toBeGreaterThanOrEqual(3);
    // segment 1: packed whole, the stop came before its plain file was removed; segment 2: a torn .tmp
    await writeFile(join(dir, `${plain[0]}.gz`), gzipSync(await readFile(join(dir, plain[0]!))));
    await writeFile(join(dir, `${plain[1]}.gz.tmp`), gzipSync('{"id":"half').subarray(0, 12));

    const second = new FileEventStore({ dir, max_segment_bytes: 600, max_segments: 50 });
    expect(await second.recent({}, 1000)).toEqual(all);
    const files = await segmentFiles(dir);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.jsonl'))).toEqual([plain[plain.length - 1]]);
    expect(files.filter((f) => f.endsWith('.gz'))).toHaveLength(plain.length - 1);
    expect(second.stats()).toMatchObject({ corrupt_lines: 0, packed_segments: plain.length - 1 });
    expect(await second.forRequest(all[3]!.request_id)).toEqual(all);
    await second.close();
  });

  it('a torn .gz gives its whole lines; a .gz that is not gzip counts as corrupt and the others are still read', async () => {
    const dir = join(root, 'torn');
    const first = new FileEventStore({ dir, max_segment_bytes: 2000, max_segments: 50 });
    const all: FingerEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const e = ev({ correlation_id: 'c' });
      all.push(e);
      await first.append([e]);
    }
    await first.close();
    const packed = (await segmentFiles(dir)).filter((f) => f.endsWith('.gz'));
    expect(packed.length).toBeGreaterThanOrEqual(2);
    const idsOf = async (f: string) =>
      gunzipSync(await readFile(join(dir, f)))
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as FingerEvent).id);
    const tornIds = await idsOf(packed[0]!);
    const lostIds = await idsOf(packed[1]!);
    // a gzip stream cut short (no trailer, the end of its data gone): what decodes is kept
    const text = gunzipSync(await readFile(join(dir, packed[0]!)));
    await writeFile(join(dir, packed[0]!), gzipSync(text).subarray(0, -30));
    await writeFile(join(dir, packed[1]!), 'plain text, not gzip');

    const second = new FileEventStore({ dir, max_segment_bytes: 2000, max_segments: 50 });
    const got = (await second.forRequest(all[0]!.request_id)).map((e) => e.id);
    const fromTorn = got.filter((id) => tornIds.includes(id));
    expect(fromTorn.length).toBeGreaterThan(0);
    expect(fromTorn.length).toBeLessThan(tornIds.length);
    expect(fromTorn).toEqual(tornIds.slice(0, fromTorn.length));
    expect(got.filter((id) => lostIds.includes(id))).toEqual([]);
    const rest = all.map((e) => e.id).filter((id) => !tornIds.includes(id) && !lostIds.includes(id));
    expect(got).toEqual([...fromTorn, ...rest]);
    // the cut line (if one was cut mid-way) and the unreadable file
    expect(second.stats().corrupt_lines).toBeGreaterThanOrEqual(1);
    await second.close();
  });

  it('stored_line: disk and the tail keep the stored form, subscribers get the event as emitted', async () => {
    const dir = join(root, 'stored');
    const store = new FileEventStore({
      dir,
      stored_line: (e, line) => (e?.type === 'INPUT_RECEIVED' ? JSON.stringify({ ...e, data: { chars: 8 } }) : line),
    });
    const bus = new LocalEventBus({ store });
    const seen: string[] = [];
    bus.subscribe({}, (_e, json) => seen.push(json));
    const e1 = bus.emit('INPUT_RECEIVED', { request_id: 'r', correlation_id: 'c' }, { text: 'secret!!' });
    const e2 = bus.emit('ROUTE_DECIDED', { request_id: 'r', correlation_id: 'c' });
    expect(JSON.parse(seen[0]!)).toEqual(e1);
    expect(await bus.replay('r')).toEqual([{ ...e1, data: { chars: 8 } }, e2]);
    const disk = await readLines(dir);
    expect(disk).toEqual([JSON.stringify({ ...e1, data: { chars: 8 } }), seen[1]]);
    expect(disk.join('\n')).not.toContain('secret');
    await bus.close();
  });

  it('a .gz that decodes past the bound (4 segments, at least 64 MiB) is refused as corrupt, not read into memory', async () => {
    const dir = join(root, 'bomb');
    await mkdir(dir);
    const line = JSON.stringify(ev({ request_id: 'bomb' })) + '\n';
    const lines = line.repeat(Math.ceil((65 * 1024 * 1024) / line.length));
    await writeFile(join(dir, 'events-0000000001.jsonl.gz'), gzipSync(lines));
    const store = new FileEventStore({ dir, max_segment_bytes: 1024 });
    expect(await store.recent({}, 5)).toEqual([]);
    expect(await store.forRequest('bomb')).toEqual([]);
    expect(store.stats().corrupt_lines).toBe(2);
    await store.close();
  });
});

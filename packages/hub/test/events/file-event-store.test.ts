import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    out.push(...(await readFile(join(dir, f), 'utf8')).split('\n').filter((l) => l !== ''));
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
    for (const f of files) {
      expect(f).toMatch(/^events-\d{10}\.jsonl$/);
      expect((await stat(join(dir, f))).size).toBeLessThanOrEqual(600);
    }
    const kept = (await readLines(dir)).map((l) => JSON.parse(l) as FingerEvent);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(all.slice(all.length - kept.length));
    expect(store.stats().segments).toBe(3);
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
});

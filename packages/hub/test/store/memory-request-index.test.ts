// The in-memory request store keeps its records in columns behind its own hash index (open
// addressing, backward-shift deletion, a seeded hash changed when an insert probes too far). These
// tests hold it to a plain model — a Map and a FIFO of finishing order — under colliding hashes,
// evictions, forgets and refusals, so no record is ever lost or answered for another id.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { MemoryRequestStore, NO_ARGS } from '../../src/store/memory-request-store.js';
import { clockAt } from './clock-at.js';

type Op =
  | { kind: 'open'; id: number }
  /** An open with another id hashed last (the store copies the last id it hashed into the row the next open takes). */
  | { kind: 'openAfter'; id: number; hashed: number }
  | { kind: 'settle'; id: number }
  | { kind: 'drop'; id: number }
  | { kind: 'forget'; id: number }
  | { kind: 'expire' };

/** The store with its hash replaced (every id in one of `buckets` homes), to force long runs and wrap-around. */
function colliding(store: MemoryRequestStore, buckets: number): MemoryRequestStore {
  (store as unknown as { hashOf: (s: string) => number }).hashOf = (s) =>
    (s.length * 7919 + (s.charCodeAt(s.length - 1) || 0)) % buckets;
  return store;
}

/**
 * The id of model id `n`: ids that fit a row of the store's id columns (ASCII, Latin-1, exactly as
 * wide as a row) and ids kept as strings (wider, or with a code unit past 255), made fresh each
 * time (a concatenation, as a caller's would be).
 */
function idFor(n: number): string {
  switch (n % 5) {
    case 0:
      return `req-${n}`;
    case 1:
      return `r\u00e9q-\u00fc-${n}`;
    case 2:
      return 'y'.repeat(38) + String(n).padStart(2, '0');
    case 3:
      return `${'x'.repeat(40)}-${n}`;
    default:
      return `\u8bf7\u6c42-${n}`;
  }
}

async function run(ops: Op[], max: number, buckets: number | undefined): Promise<void> {
  const t = { now: 1_000 };
  const store = new MemoryRequestStore(clockAt(t), max, 1_000);
  if (buckets !== undefined) colliding(store, buckets);
  const dones = new Map<string, Promise<unknown>>();
  const model = new Map<string, { running: boolean; result?: number; finished?: number }>();
  const fifo: string[] = [];
  const evict = () => {
    if (model.size <= max) return;
    const target = Math.floor(max * 0.9);
    while (model.size > target && fifo.length > 0) {
      const id = fifo.shift()!;
      if (model.get(id)?.running === false) model.delete(id);
    }
  };
  let n = 0;
  for (const op of ops) {
    if (op.kind === 'expire') {
      // time passes as on a server: the microtask that stamps the outcomes written so far runs
      // before any timer (prune's) does
      await Promise.resolve();
      t.now += 1_000; // every finished record is past its keep
      for (const [id, r] of model) if (!r.running) model.delete(id);
      for (let i = fifo.length - 1; i >= 0; i--) if (!model.has(fifo[i]!)) fifo.splice(i, 1);
      store.prune();
      continue;
    }
    /** Opens `id` as a running call in the store and the model. */
    const openRunning = (id: string): void => {
      const s = store.open(id, id, 'echo.echo', 'human:t', NO_ARGS, t.now);
      const done = Promise.resolve(++n);
      expect(store.attach(s, done)).toBe(true);
      dones.set(id, done);
      model.set(id, { running: true });
      evict();
    };
    const id = idFor(op.id);
    if (op.kind === 'openAfter') {
      if (model.has(id)) continue;
      store.find(idFor(op.hashed));
      openRunning(id);
      continue;
    }
    const slot = store.find(id);
    const m = model.get(id);
    expect(slot >= 0).toBe(m !== undefined);
    if (op.kind === 'open' && slot < 0) {
      openRunning(id);
    } else if (op.kind === 'settle' && slot >= 0 && m!.running) {
      store.settle(slot, dones.get(id)!, true, ++n);
      m!.running = false;
      m!.result = n;
      fifo.push(id);
    } else if (op.kind === 'drop' && slot >= 0) {
      store.drop(slot, dones.get(id)!); // a finished record is not dropped
      if (m!.running) model.delete(id);
    } else if (op.kind === 'forget') {
      void store.forget(id);
      model.delete(id);
    }
  }
  expect(store.size).toBe(model.size);
  for (let n = 0; n < 40; n++) {
    const id = idFor(n);
    const r = store.peek(id);
    const m = model.get(id);
    if (m === undefined) expect(r).toBeUndefined();
    else if (m.running) expect(r).toMatchObject({ request_id: id, status: 'running' });
    else expect(r).toMatchObject({ request_id: id, status: 'succeeded', result: m.result });
  }
}

const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('open' as const), id: fc.nat(39) }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('openAfter' as const), id: fc.nat(39), hashed: fc.nat(39) }),
    },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('settle' as const), id: fc.nat(39) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), id: fc.nat(39) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), id: fc.nat(39) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
  ),
  { maxLength: 300, size: 'medium' },
);

describe('MemoryRequestStore index', () => {
  it('answers like a Map with a FIFO of finished ids: the real hash, colliding hashes, few and many records', async () => {
    for (const [max, buckets] of [
      [10_000, undefined],
      [12, undefined],
      [10_000, 3],
      [12, 1],
      [25, 5],
    ] as const) {
      await fc.assert(
        fc.asyncProperty(ops, (o) => run(o, max, buckets)),
        { seed: 27, numRuns: 300 },
      );
    }
  });

  it('rebuilds its index with a new seed when ids pile up on one hash, and still finds every record', () => {
    const t = { now: 1_000 };
    const store = colliding(new MemoryRequestStore(clockAt(t), 100_000, 60_000), 1);
    const seedOf = () => (store as unknown as { seed: number }).seed;
    const first = seedOf();
    for (let i = 0; i < 3_000; i++) store.open(`c-${i}`, `c-${i}`, 'echo.echo', 'human:t', NO_ARGS, t.now);
    expect(seedOf()).not.toBe(first);
    expect(store.size).toBe(3_000);
    for (let i = 0; i < 3_000; i++) expect(store.find(`c-${i}`)).toBeGreaterThanOrEqual(0);
    expect(store.find('c-3000')).toBe(-1);
  });

  it('never evicts a record for the one that had its slot before (forgotten or expired after finishing)', async () => {
    const t = { now: 1_000 };
    const store = new MemoryRequestStore(clockAt(t), 10, 1_000);
    const finishOne = (id: string) => {
      const slot = store.open(id, id, 'echo.echo', undefined, NO_ARGS, t.now);
      const done = Promise.resolve(id);
      store.attach(slot, done);
      store.settle(slot, done, true, id);
    };
    finishOne('old');
    await store.forget('old'); // its slot is free, its place in the finishing order stays
    const running = store.open('running', 'running', 'echo.echo', undefined, NO_ARGS, t.now);
    expect(store.attach(running, Promise.resolve())).toBe(true);
    finishOne('later');
    await Promise.resolve(); // its outcome's time is stamped (a microtask after it was written)
    t.now += 1_001;
    store.prune(); // 'later' leaves by age
    finishOne('next');
    for (let i = 0; i < 20; i++) finishOne(`f-${i}`); // past max_records: evictions pass the stale places
    expect(store.peek('running')?.status).toBe('running');
    expect(store.peek('next')).toBeUndefined(); // the oldest finished went first
    expect(store.peek('f-19')?.status).toBe('succeeded');
    expect(store.size).toBeLessThanOrEqual(10);
  });

  it('tells apart ids that share a row-wide prefix, a length or their hash, kept in rows or as strings', () => {
    const t = { now: 1_000 };
    const ids = [
      'a'.repeat(39),
      'a'.repeat(40),
      'a'.repeat(41),
      `${'a'.repeat(39)}b`,
      `${'a'.repeat(39)}\u00ff`,
      `${'a'.repeat(39)}\u0100`,
      '',
      '\u00ff',
      '\u0100',
      'req-1',
      'req-10',
    ];
    for (const buckets of [undefined, 1]) {
      const store = new MemoryRequestStore(clockAt(t), 100, 60_000);
      if (buckets !== undefined) colliding(store, buckets);
      for (const id of ids) {
        expect(store.find(id)).toBe(-1);
        store.open(id, id, 'echo.echo', 'human:t', NO_ARGS, t.now);
      }
      for (const id of ids) {
        // a fresh string of the same text (the store keeps no reference to the caller's)
        const again = [...id].join('');
        expect(store.peek(again)?.request_id).toBe(id);
      }
      expect(store.find('a'.repeat(38))).toBe(-1);
      expect(store.find(`${'a'.repeat(39)}c`)).toBe(-1);
      expect(store.size).toBe(ids.length);
    }
  });

  it('never gives a record the code units of another id hashed before it (the row the next open takes holds the last id hashed)', () => {
    const t = { now: 1_000 };
    const store = new MemoryRequestStore(clockAt(t), 100, 60_000);
    const x = store.open('x-1', 'x-1', 'echo.echo', 'human:t', NO_ARGS, t.now);
    const xDone = Promise.resolve();
    store.attach(x, xDone);
    expect(store.find('y-1')).toBe(-1); // hashed: copied into the row the next open takes
    expect(store.find('x-1')).toBe(x); // hashed last, into that same free row
    store.open('y-1', 'y-1', 'echo.echo', 'human:t', NO_ARGS, t.now); // takes that row (y-1 was found absent: not hashed again)
    store.drop(x, xDone); // x-1 leaves without being hashed
    store.open('x-1', 'x-1', 'echo.echo', 'human:t', NO_ARGS, t.now); // x-1 again, with no find before it
    expect(store.peek('x-1')?.request_id).toBe('x-1');
    expect(store.peek('y-1')?.request_id).toBe('y-1');
    expect(store.size).toBe(2);
  });

  it('grows past its first columns and keeps running records of every size of burst', () => {
    const t = { now: 1_000 };
    const store = new MemoryRequestStore(clockAt(t), 100, 60_000);
    // running records are never evicted: 5,000 in flight at once, well past max_records
    const slots = Array.from({ length: 5_000 }, (_, i) =>
      store.open(`g-${i}`, `g-${i}`, 'echo.echo', undefined, NO_ARGS, t.now),
    );
    expect(new Set(slots).size).toBe(5_000);
    expect(store.size).toBe(5_000);
    for (let i = 0; i < 5_000; i += 499) expect(store.peek(`g-${i}`)?.status).toBe('running');
  });
});

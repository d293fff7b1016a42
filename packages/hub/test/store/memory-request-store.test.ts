import { describe, expect, it } from 'vitest';

import type { RequestRecord } from '../../src/hub-types.js';
import { MemoryRequestStore, NO_ARGS } from '../../src/store/memory-request-store.js';
import { clockAt } from './clock-at.js';

function record(request_id: string): RequestRecord {
  return {
    request_id,
    correlation_id: request_id,
    target: 'echo.echo',
    status: 'running',
    created_at: new Date(0).toISOString(),
  } as RequestRecord;
}

/** The store's FIFO of finished records (private): a ring of slots between two absolute positions. */
function fifo(s: MemoryRequestStore): { finished: Int32Array; head: number; tail: number } {
  return s as unknown as { finished: Int32Array; head: number; tail: number };
}

describe('MemoryRequestStore', () => {
  it('keeps its FIFO of finished ids bounded when records expire by age, not by count', async () => {
    // a daemon well under max_results: records leave by their ttl (prune), never by eviction
    const t = { now: 1_000 };
    const s = new MemoryRequestStore(clockAt(t), 10_000, 1_000);
    for (let i = 0; i < 50_000; i++) {
      const id = `r-${i}`;
      await s.begin(record(id));
      await s.finish(id, { ok: true, result: i }, new Date(t.now).toISOString());
      t.now += 10;
      if (i % 1_000 === 999) s.prune(); // the hub prunes every 10 s
    }
    s.prune();
    expect(s.size).toBeLessThanOrEqual(101);
    const f = fifo(s);
    // one place per live record at most, not one per call ever made (50,000)
    expect(f.tail - f.head).toBeLessThanOrEqual(s.size);
    // never wider than what finished between two prunes (1,000 here) and the live records
    expect(f.finished.length).toBeLessThanOrEqual(2_048);
  });

  it('still evicts the oldest finished records first past max_records', async () => {
    const t = { now: 1_000 };
    const s = new MemoryRequestStore(clockAt(t), 100, 3_600_000);
    for (let i = 0; i < 150; i++) {
      await s.begin(record(`r-${i}`));
      await s.finish(`r-${i}`, { ok: true, result: i }, new Date(t.now).toISOString());
    }
    expect(s.size).toBeLessThanOrEqual(100);
    expect(await s.get('r-0')).toBeUndefined();
    expect((await s.get('r-149'))?.status).toBe('succeeded');
    s.prune();
    expect((await s.get('r-149'))?.result).toBe(149);
  });

  it('evicts in finishing order across its FIFO wrapping around and growing while wrapped', () => {
    const t = { now: 1_000 };
    const s = new MemoryRequestStore(clockAt(t), 100, 3_600_000);
    const start = (id: string) => {
      const slot = s.open(id, id, 'echo.echo', 'human:t', NO_ARGS, t.now);
      const done = Promise.resolve(id);
      s.attach(slot, done);
      return () => s.settle(slot, done, true, id);
    };
    for (let i = 0; i < 5_000; i++) start(`w-${i}`)(); // the FIFO's first ring (1,024) wraps several times
    expect(s.peek('w-4999')?.status).toBe('succeeded');
    expect(s.peek('w-4000')).toBeUndefined();
    // 3,000 running at once (never evicted), then finished: the FIFO grows twice while wrapped
    const settles = Array.from({ length: 3_000 }, (_, i) => start(`g-${i}`));
    for (const settle of settles) settle();
    start('last'); // past the bound: the oldest finished leave first, down to 90 records
    expect(s.size).toBe(90);
    expect(s.peek('w-4999')).toBeUndefined();
    expect(s.peek('g-2910')).toBeUndefined();
    expect(s.peek('g-2911')?.status).toBe('succeeded');
    expect(s.peek('g-2999')?.status).toBe('succeeded');
    expect(s.peek('last')?.status).toBe('running');
  });

  describe('the time of an outcome (one clock read per batch of outcomes, made after them)', () => {
    function counted(t: { now: number }) {
      let reads = 0;
      const clock = { ...clockAt(t), now: () => (reads++, t.now) };
      return { clock, reads: () => reads };
    }
    function running(s: MemoryRequestStore, id: string, now: number) {
      const slot = s.open(id, id, 'echo.echo', 'human:t', NO_ARGS, now);
      const done = Promise.resolve(id);
      s.attach(slot, done);
      return () => s.settle(slot, done, true, id);
    }

    it('gives the outcomes written in one run the time of one read made after the last, before their callers resume', async () => {
      const t = { now: 1_000 };
      const c = counted(t);
      const s = new MemoryRequestStore(c.clock, 100, 1_000);
      const settleA = running(s, 'a', t.now);
      const settleB = running(s, 'b', t.now);
      const before = c.reads();
      settleA();
      t.now = 1_005; // time passes within the run
      settleB();
      expect(c.reads()).toBe(before);
      let readsThen = 0;
      let seen: string | undefined;
      // a caller resuming on a promise settled with the outcome runs after the stamp
      await Promise.resolve().then(() => {
        readsThen = c.reads();
        seen = s.peek('a')?.finished_at;
      });
      expect(readsThen).toBe(before + 1);
      expect(seen).toBe(new Date(1_005).toISOString());
      expect(s.peek('b')?.finished_at).toBe(new Date(1_005).toISOString());
      // kept from that time: not a moment less
      t.now = 2_004;
      expect(s.peek('a')?.status).toBe('succeeded');
      t.now = 2_005;
      expect(s.peek('a')).toBeUndefined();
      expect(s.peek('b')).toBeUndefined();
    });

    it('stamps an outcome read before its batch is stamped at that read, and keeps that time', async () => {
      const t = { now: 1_000 };
      const s = new MemoryRequestStore(clockAt(t), 100, 1_000);
      running(s, 'a', t.now)();
      t.now = 1_007;
      expect(s.peek('a')?.finished_at).toBe(new Date(1_007).toISOString());
      t.now = 1_010;
      await Promise.resolve();
      expect(s.peek('a')?.finished_at).toBe(new Date(1_007).toISOString());
    });

    it('does not stamp the record that took the slot of one forgotten or evicted before the stamp', async () => {
      const t = { now: 1_000 };
      const s = new MemoryRequestStore(clockAt(t), 10, 1_000);
      running(s, 'a', t.now)();
      await s.forget('a');
      running(s, 'a', t.now); // the same id again, running in the freed slot
      for (let i = 0; i < 12; i++) running(s, `e-${i}`, t.now)(); // past max_records: some evicted unstamped
      await Promise.resolve();
      expect(s.peek('a')).toMatchObject({ status: 'running' });
      expect(s.peek('a')).not.toHaveProperty('finished_at');
      expect(s.peek('e-11')?.finished_at).toBe(new Date(1_000).toISOString());
      expect(s.size).toBeLessThanOrEqual(10);
    });

    it('a prune before the stamp stamps with its own read: the keep never starts before the outcome', () => {
      const t = { now: 1_000 };
      const s = new MemoryRequestStore(clockAt(t), 100, 1_000);
      running(s, 'a', t.now)();
      t.now = 2_000; // (only a synchronous caller can move time so far before the microtask runs)
      s.prune();
      expect(s.peek('a')?.finished_at).toBe(new Date(2_000).toISOString());
    });
  });
});

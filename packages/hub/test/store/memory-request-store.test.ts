import { describe, expect, it } from 'vitest';

import type { RequestRecord } from '../../src/hub-types.js';
import { MemoryRequestStore } from '../../src/store/memory-request-store.js';
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

/** The store's FIFO of finished ids (private): what it still holds a string for. */
function fifo(s: MemoryRequestStore): { finished: string[]; head: number } {
  return s as unknown as { finished: string[]; head: number };
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
    // one id per live record at most, not one per call ever made (50,000)
    expect(f.finished.length - f.head).toBeLessThanOrEqual(s.size);
    expect(f.finished.length).toBeLessThanOrEqual(5_000);
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
});

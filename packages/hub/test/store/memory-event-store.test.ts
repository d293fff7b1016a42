import { describe, expect, it } from 'vitest';

import type { FingerEvent } from '@finger/protocol';

import { MemoryEventStore } from '../../src/store/memory-event-store.js';

function ev(n: number, data: Record<string, unknown> = { n }, request_id = `r${n % 3}`): FingerEvent {
  return {
    id: `01J${String(n).padStart(23, '0')}`,
    type: 'DISPATCH_RESULT',
    ts: '2026-01-02T03:04:05.678Z',
    request_id,
    correlation_id: n % 5 === 0 ? `c${n}` : '',
    session_id: 's',
    workflow_id: '',
    target: 'echo.echo',
    data,
  };
}

describe('MemoryEventStore', () => {
  it('answers the same whether events were added with their JSON or without, across chunks and wraparound', () => {
    for (const capacity of [1, 3, 1024, 1500]) {
      const plain = new MemoryEventStore({ capacity });
      const withJson = new MemoryEventStore({ capacity });
      const all: FingerEvent[] = [];
      for (let n = 0; n < capacity * 2 + 7; n++) {
        const kind = n % 4;
        const data =
          kind === 1 ? { text: 'ünïcødé €'.repeat(40) } : kind === 2 ? { big: 'x'.repeat(600) } : { n, ok: true };
        const e = ev(n, data);
        all.push(e);
        plain.add(e);
        withJson.add(e, kind === 3 ? undefined : JSON.stringify(e));
      }
      expect(withJson.size).toBe(plain.size);
      expect(withJson.evicted).toBe(plain.evicted);
      expect([...withJson]).toEqual([...plain]);
      expect([...withJson]).toEqual(all.slice(-capacity));
      for (const r of ['r0', 'r1', 'r2']) expect(withJson.pathOf(r)).toEqual(plain.pathOf(r));
      expect(withJson.latest({ request_id: 'r1' }, 5)).toEqual(plain.latest({ request_id: 'r1' }, 5));
      // parsed once, then the same objects
      expect(withJson.latest({}, 2)[0]).toBe(withJson.latest({}, 2)[0]);
    }
  });

  it('keeps the JSON it was given (the event as emitted)', async () => {
    const s = new MemoryEventStore({ capacity: 4 });
    const e = ev(1, { step: 1 });
    s.add(e, JSON.stringify(e));
    e.data.step = 2;
    expect(s.latest({}, 1)).toEqual([{ ...e, data: { step: 1 } }]);
    const batch = [ev(2), ev(3)];
    await s.append(
      batch,
      batch.map((x) => JSON.stringify(x)),
    );
    expect(await s.recent({}, 2)).toEqual(batch);
    s.clear();
    expect(s.size).toBe(0);
    expect([...s]).toEqual([]);
    s.add(ev(4), JSON.stringify(ev(4)));
    expect([...s]).toEqual([ev(4)]);
  });

  it('keeps JSON of about a slot size whole, with multi-byte characters anywhere', () => {
    const s = new MemoryEventStore({ capacity: 200 });
    const added: FingerEvent[] = [];
    for (let pad = 280; pad < 310; pad++)
      for (const tail of ['é'.repeat(5), 'é'.repeat(7), '€'.repeat(3), '€'.repeat(6), '😀'.repeat(3), 'a']) {
        const e = ev(pad, { text: 'x'.repeat(pad) + tail });
        added.push(e);
        s.add(e, JSON.stringify(e));
      }
    expect([...s]).toEqual(added.slice(-200));
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new MemoryEventStore({ capacity: 0 })).toThrow(RangeError);
  });
});

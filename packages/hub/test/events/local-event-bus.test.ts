import { describe, expect, it, vi } from 'vitest';

import { type FingerEvent, isUlid } from '@finger/protocol';

import type { Clock } from '../../src/clock.js';
import { LocalEventBus } from '../../src/events/local-event-bus.js';
import type { Logger } from '../../src/logger.js';
import type { EventStore } from '../../src/store/event-store.js';
import { MemoryEventStore } from '../../src/store/memory-event-store.js';

/** A clock whose timers fire only when the test says so. */
class ManualClock implements Clock {
  t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  private timers = new Map<number, () => void>();
  private next = 1;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void): unknown {
    const id = this.next++;
    this.timers.set(id, fn);
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  setInterval(): unknown {
    throw new Error('not used');
  }
  clearInterval(): void {}
  get pending(): number {
    return this.timers.size;
  }
  fireAll(): void {
    const fns = [...this.timers.values()];
    this.timers.clear();
    for (const f of fns) f();
  }
}

/** A store that records appends and can be told to fail. */
class RecordingStore implements EventStore {
  readonly inner = new MemoryEventStore();
  batches: { events: (FingerEvent | undefined)[]; lines: string[] | undefined }[] = [];
  fail = false;
  closed = 0;
  append(batch: readonly (FingerEvent | undefined)[], lines?: readonly string[]): Promise<void> {
    if (this.fail) return Promise.reject(new Error('disk on fire'));
    this.batches.push({ events: [...batch], lines: lines ? [...lines] : undefined });
    return this.inner.append(batch, lines);
  }
  forRequest(id: string): Promise<FingerEvent[]> {
    return this.inner.forRequest(id);
  }
  recent(...a: Parameters<EventStore['recent']>): Promise<FingerEvent[]> {
    return this.inner.recent(...a);
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed++;
    return Promise.resolve();
  }
}

function recordingLogger(): Logger & { calls: { level: string; obj: unknown; msg: unknown }[] } {
  const calls: { level: string; obj: unknown; msg: unknown }[] = [];
  const log =
    (level: string) =>
    (obj: unknown, msg?: unknown): void => {
      calls.push({ level, obj, msg });
    };
  const logger = {
    calls,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}

describe('LocalEventBus', () => {
  it('builds the event from the correlation fields, with empty strings for missing ones', () => {
    const clock = new ManualClock();
    const bus = new LocalEventBus({ clock });
    const e = bus.emit('DISPATCH_SENT', { request_id: 'r1', target: 'fs.read' }, { n: 1 });
    expect(isUlid(e.id)).toBe(true);
    expect(e).toEqual({
      id: e.id,
      type: 'DISPATCH_SENT',
      ts: '2026-01-02T03:04:05.678Z',
      request_id: 'r1',
      correlation_id: '',
      session_id: '',
      workflow_id: '',
      target: 'fs.read',
      data: { n: 1 },
    });
    expect(bus.emit('HALTED', {}).data).toEqual({});
  });

  it('delivers by type, request_id, session_id and correlation_id filters', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: Record<string, string[]> = { byType: [], byReq: [], bySession: [], byCorr: [], all: [], combo: [] };
    const rec = (k: string) => (e: FingerEvent) => got[k]!.push(`${e.type}:${e.request_id}:${e.session_id}`);
    bus.subscribe({ types: ['HALTED', 'UNLOCKED'] }, rec('byType'));
    bus.subscribe({ request_id: 'r1' }, rec('byReq'));
    bus.subscribe({ session_id: 's2' }, rec('bySession'));
    bus.subscribe({ correlation_id: 'c9' }, rec('byCorr'));
    bus.subscribe({}, rec('all'));
    bus.subscribe({ types: ['DISPATCH_SENT'], session_id: 's1' }, rec('combo'));

    bus.emit('HALTED', { request_id: 'r1', session_id: 's1' });
    bus.emit('DISPATCH_SENT', { request_id: 'r2', session_id: 's2', correlation_id: 'c9' });
    bus.emit('DISPATCH_SENT', { request_id: 'r1', session_id: 's1' });
    bus.emit('UNLOCKED', {});

    expect(got).toEqual({
      byType: ['HALTED:r1:s1', 'UNLOCKED::'],
      byReq: ['HALTED:r1:s1', 'DISPATCH_SENT:r1:s1'],
      bySession: ['DISPATCH_SENT:r2:s2'],
      byCorr: ['DISPATCH_SENT:r2:s2'],
      all: ['HALTED:r1:s1', 'DISPATCH_SENT:r2:s2', 'DISPATCH_SENT:r1:s1', 'UNLOCKED::'],
      combo: ['DISPATCH_SENT:r1:s1'],
    });
    expect(bus.stats().subscribers).toBe(6);
  });

  it('stops delivering after unsubscribe, even during an emit', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const seen: string[] = [];
    let offB = (): void => undefined;
    const offA = bus.subscribe({ types: ['HALTED'] }, () => {
      seen.push('a');
      offB();
    });
    offB = bus.subscribe({ types: ['HALTED'] }, () => seen.push('b'));
    bus.emit('HALTED', {});
    expect(seen).toEqual(['a']);
    offA();
    offA();
    bus.emit('HALTED', {});
    expect(seen).toEqual(['a']);
    expect(bus.stats().subscribers).toBe(0);
  });

  it('isolates a throwing listener from other listeners and from the emitter', () => {
    const logger = recordingLogger();
    const bus = new LocalEventBus({ clock: new ManualClock(), logger });
    const seen: string[] = [];
    bus.subscribe({}, () => seen.push('before'));
    bus.subscribe({}, () => {
      throw new Error('boom');
    });
    bus.subscribe({ types: ['MODULE_HEALTH'] }, () => {
      throw new Error('typed boom');
    });
    bus.subscribe({}, () => seen.push('after'));
    expect(() => bus.emit('MODULE_HEALTH', { target: 'fs' })).not.toThrow();
    expect(seen).toEqual(['before', 'after']);
    expect(bus.stats().listener_errors).toBe(2);
    expect(logger.calls.filter((c) => c.level === 'warn').map((c) => c.msg)).toEqual([
      'event listener threw',
      'event listener threw',
    ]);
  });

  it('passes every listener the same string, equal to JSON.stringify(event)', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: { e: FingerEvent; json: string }[] = [];
    bus.subscribe({}, (e, json) => got.push({ e, json }));
    bus.subscribe({ types: ['ROUTE_DECIDED'] }, (e, json) => got.push({ e, json }));
    const e = bus.emit(
      'ROUTE_DECIDED',
      { request_id: 'r', session_id: 's' },
      { route: 'fs.read', nested: { a: [1, 'x'] } },
    );
    expect(got).toHaveLength(2);
    expect(got[0]!.e).toBe(e);
    expect(got[0]!.json).toBe(JSON.stringify(e));
    expect(got[1]!.json).toBe(got[0]!.json);
    expect(JSON.parse(got[0]!.json)).toEqual(e);
  });

  it('writes exactly JSON.stringify(event) for any correlation strings and data', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: string[] = [];
    const events: FingerEvent[] = [];
    bus.subscribe({}, (e, json) => {
      got.push(json);
      events.push(e);
    });
    const odd = [
      '',
      'plain',
      'q"uote',
      'back\\slash',
      'new\nline',
      '\u0001ctl',
      'lone \ud800',
      'pair 😀',
      'ünï €',
      '\u2028',
    ];
    for (const v of odd) {
      bus.emit('ROUTE_DECIDED', { request_id: v, correlation_id: v, session_id: v, workflow_id: v, target: v }, { v });
    }
    bus.emit('ROUTE_DECIDED', { request_id: 'r' }, [1, 'x'] as unknown as Record<string, unknown>);
    bus.emit('ROUTE_DECIDED', { request_id: 'r' }, { toJSON: () => ({ shown: true }) } as unknown as Record<
      string,
      unknown
    >);
    bus.emit('ROUTE_DECIDED', { request_id: 7 as unknown as string }, { n: 1 });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    bus.emit('ROUTE_DECIDED', { request_id: 'r' }, circular);
    expect(got).toHaveLength(odd.length + 4);
    for (let i = 0; i < got.length; i++) expect(got[i]).toBe(JSON.stringify(events[i]));
    expect(JSON.parse(got.at(-1)!).data.unserialisable).toBe(true);
  });

  it('never writes to the store on the call path; the timer writes one batch with the same strings', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore();
    const bus = new LocalEventBus({ clock, store });
    const a = bus.emit('INPUT_RECEIVED', { request_id: 'r1' });
    const b = bus.emit('MODE_PARSED', { request_id: 'r1' });
    expect(store.batches).toEqual([]);
    expect(clock.pending).toBe(1);
    clock.fireAll();
    await vi.waitFor(() => expect(store.batches).toHaveLength(1));
    expect(store.batches[0]).toEqual({ events: [a, b], lines: [JSON.stringify(a), JSON.stringify(b)] });
    expect(bus.stats()).toEqual({
      emitted: 2,
      persisted: 2,
      dropped: 0,
      subscribers: 0,
      persist_failures: 0,
      listener_errors: 0,
    });
  });

  it('replays the correlated path of a request in order', async () => {
    for (const store of [new MemoryEventStore(), undefined]) {
      const bus = new LocalEventBus({ clock: new ManualClock(), store });
      const e1 = bus.emit('INPUT_RECEIVED', { request_id: 'r1', correlation_id: 'c1' });
      bus.emit('INPUT_RECEIVED', { request_id: 'other', correlation_id: 'c2' });
      const e2 = bus.emit('DISPATCH_SENT', { request_id: 'r1-child', correlation_id: 'c1' });
      bus.emit('HALTED', {});
      const e3 = bus.emit('DISPATCH_RESULT', { request_id: 'r1', correlation_id: 'c1' });
      bus.emit('DISPATCH_RESULT', { request_id: 'other', correlation_id: 'c2' });
      expect(await bus.replay('r1')).toEqual([e1, e2, e3]);
      expect(await bus.replay('nope')).toEqual([]);
      expect(await bus.recent({ types: ['DISPATCH_RESULT'] }, 1)).toEqual([
        expect.objectContaining({ request_id: 'other' }),
      ]);
      await bus.close();
    }
  });

  it('bounds the buffer: drops the oldest, counts the drops, never blocks', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore();
    const bus = new LocalEventBus({ clock, store, max_buffer: 3 });
    const events = [1, 2, 3, 4, 5].map((n) => bus.emit('TASK_STATE', { request_id: `r${n}` }));
    expect(bus.stats().dropped).toBe(2);
    await bus.flush();
    expect(store.batches.map((b) => b.events)).toEqual([events.slice(2)]);
    expect(bus.stats()).toMatchObject({ emitted: 5, persisted: 3, dropped: 2 });
  });

  it('counts and logs (once) a failing store, and keeps going', async () => {
    const logger = recordingLogger();
    const store = new RecordingStore();
    store.fail = true;
    const bus = new LocalEventBus({ clock: new ManualClock(), store, logger });
    bus.emit('HALTED', {});
    await bus.flush();
    bus.emit('HALTED', {});
    await bus.flush();
    expect(bus.stats()).toMatchObject({ emitted: 2, persisted: 0, persist_failures: 2 });
    expect(logger.calls.filter((c) => c.level === 'error')).toHaveLength(1);
    store.fail = false;
    bus.emit('UNLOCKED', {});
    await bus.flush();
    expect(bus.stats()).toMatchObject({ persisted: 1, persist_failures: 2 });
  });

  it('close flushes, closes the store once, and makes emit a no-op', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore();
    const bus = new LocalEventBus({ clock, store });
    const seen: FingerEvent[] = [];
    bus.subscribe({}, (e) => seen.push(e));
    const e = bus.emit('HALTED', {});
    await Promise.all([bus.close(), bus.close()]);
    await bus.close();
    expect(store.closed).toBe(1);
    expect(store.batches.map((b) => b.events)).toEqual([[e]]);
    bus.emit('UNLOCKED', {});
    expect(seen).toEqual([e]);
    expect(bus.stats()).toMatchObject({ emitted: 1, persisted: 1, subscribers: 0 });
    expect(clock.pending).toBe(0);
  });

  it('replaces data that cannot be serialised instead of throwing', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    let json = '';
    bus.subscribe({}, (_e, j) => (json = j));
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const e = bus.emit('DEGRADED', {}, circular);
    expect(e.data).toMatchObject({ unserialisable: true });
    expect(JSON.parse(json)).toEqual(e);
  });
});

describe('LocalEventBus.publishJson', () => {
  const line = (id: string, type: string, request_id = 'r1'): string =>
    JSON.stringify({
      id,
      type,
      ts: '2026-11-26T08:00:00.000Z',
      request_id,
      correlation_id: 'c1',
      session_id: '',
      workflow_id: '',
      target: 'echo.echo',
      data: { n: 1 },
    });
  /** A line with a readable head whose body is not JSON: what only a parse can tell. */
  const broken = '{"id":"bad","type":"HALTED",oops}';

  it('hands JSON subscribers the line as it came, and keeps it for queries, without parsing it', async () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: [string, string][] = [];
    bus.subscribeJson({ types: ['HALTED'] }, (json, type) => got.push([json, type]));
    bus.subscribeJson({}, (json, type) => got.push([`*${json}`, type]));
    const good = line('e1', 'HALTED');
    expect(bus.publishJson({ id: 'e1', type: 'HALTED' }, good)).toBe(true);
    expect(bus.publishJson({ id: 'bad', type: 'HALTED' }, broken)).toBe(true); // nobody needed the object
    expect(got).toEqual([
      [good, 'HALTED'],
      [`*${good}`, 'HALTED'],
      [broken, 'HALTED'],
      [`*${broken}`, 'HALTED'],
    ]);
    // the ring parses when a query reads it: the broken line is not an event and is skipped
    expect(await bus.recent({}, 10)).toEqual([JSON.parse(good)]);
    expect(await bus.replay('r1')).toEqual([JSON.parse(good)]);
    expect(bus.stats().emitted).toBe(2);
  });

  it('parses for a subscriber that takes the object, and delivers nothing of a line that is not that event', async () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const objects: FingerEvent[] = [];
    const lines: string[] = [];
    bus.subscribe({ types: ['HALTED'] }, (e) => objects.push(e));
    bus.subscribeJson({}, (json) => lines.push(json));
    const good = line('e1', 'HALTED');
    expect(bus.publishJson({ id: 'e1', type: 'HALTED' }, good)).toBe(true);
    expect(bus.publishJson({ id: 'bad', type: 'HALTED' }, broken)).toBe(false);
    expect(bus.publishJson({ id: 'other-id', type: 'HALTED' }, line('e2', 'HALTED'))).toBe(false);
    expect(bus.publishJson({ id: 'e3', type: 'HALTED' }, '{"id":"e3","type":"HALTED","data":5}')).toBe(false);
    expect(objects).toEqual([JSON.parse(good)]);
    expect(lines).toEqual([good]);
    expect(await bus.recent({}, 10)).toEqual([JSON.parse(good)]);
    expect(bus.stats().emitted).toBe(1);
  });

  it('parses for a JSON subscriber that filters on a correlation field, and filters by it', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: string[] = [];
    bus.subscribeJson({ request_id: 'r2' }, (json) => got.push(json));
    const mine = line('e2', 'DISPATCH_RESULT', 'r2');
    expect(bus.publishJson({ id: 'e1', type: 'DISPATCH_RESULT' }, line('e1', 'DISPATCH_RESULT', 'r1'))).toBe(true);
    expect(bus.publishJson({ id: 'e2', type: 'DISPATCH_RESULT' }, mine)).toBe(true);
    expect(bus.publishJson({ id: 'bad', type: 'HALTED' }, broken)).toBe(false);
    expect(got).toEqual([mine]);
  });

  it('gives the store the line with no event object', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore();
    const bus = new LocalEventBus({ clock, store });
    const good = line('e1', 'UNLOCKED');
    bus.publishJson({ id: 'e1', type: 'UNLOCKED' }, good);
    await bus.flush();
    expect(store.batches).toEqual([{ events: [undefined], lines: [good] }]);
    expect(await store.recent({}, 5)).toEqual([JSON.parse(good)]);
    expect(bus.stats()).toMatchObject({ emitted: 1, persisted: 1 });
  });

  it('counts a throwing JSON subscriber and goes on to the next', () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: string[] = [];
    bus.subscribeJson({}, () => {
      throw new Error('boom');
    });
    bus.subscribeJson({}, (json) => got.push(json));
    bus.publishJson({ id: 'e1', type: 'HALTED' }, line('e1', 'HALTED'));
    bus.emit('UNLOCKED', {});
    expect(got).toHaveLength(2);
    expect(bus.stats().listener_errors).toBe(2);
  });

  it('does nothing once closed', async () => {
    const bus = new LocalEventBus({ clock: new ManualClock() });
    const got: string[] = [];
    bus.subscribeJson({}, (json) => got.push(json));
    await bus.close();
    expect(bus.publishJson({ id: 'e1', type: 'HALTED' }, line('e1', 'HALTED'))).toBe(true);
    expect(got).toEqual([]);
    expect(bus.stats().emitted).toBe(0);
  });
});

// The /v1/events fan-out: clients of one filter share one bus subscription (FanoutGroup), an event
// is framed once, and a flush hands every client the same batch in one write; a control message
// follows the events emitted before it. Unit tests over fake sockets, then real clients against a
// real daemon.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';

import { LocalEventBus } from '@finger/hub';
import { waitUntil } from '@finger/testkit/core';

import { type ClientHost, EventClient } from '../src/ws/event-client.js';
import { FanoutGroup, filterKey, type GroupHost, type GroupMember } from '../src/ws/fanout-group.js';
import type { EventBatch } from '../src/ws/ws-frames.js';
import { startDaemon, type TestDaemon } from './helpers.js';
import { WsClient } from './ws-client.js';

/** The payloads of the unmasked text frames in `wire`, in order. */
function framesOf(wire: Buffer): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < wire.length) {
    expect(wire[i]).toBe(0x81); // FIN + text
    let len = wire[i + 1]!;
    let at = i + 2;
    if (len === 126) {
      len = wire.readUInt16BE(i + 2);
      at = i + 4;
    } else if (len === 127) {
      len = Number(wire.readBigUInt64BE(i + 2));
      at = i + 10;
    }
    out.push(wire.subarray(at, at + len).toString());
    i = at + len;
  }
  return out;
}

/** A group host that records what the group asks of it; flushes only when told. */
function host(flushBytes = 1 << 20): GroupHost & { scheduled: number; emptiedGroups: FanoutGroup[] } {
  const h = {
    flushBytes,
    scheduled: 0,
    emptiedGroups: [] as FanoutGroup[],
    flushLater: () => {
      h.scheduled++;
    },
    emptied: (g: FanoutGroup) => {
      h.emptiedGroups.push(g);
    },
  };
  return h;
}

function member(needsPayloads = false): GroupMember & { batches: EventBatch[] } {
  const batches: EventBatch[] = [];
  return { needsPayloads, batches, deliver: (b) => batches.push(b) };
}

describe('FanoutGroup', () => {
  it('one bus subscription for all its members; a flush hands each the same batch of every event framed once', () => {
    const bus = new LocalEventBus();
    const h = host();
    const g = new FanoutGroup(h, bus, 'k', { types: ['TASK_STATE'] });
    const [a, b] = [member(), member()];
    g.add(a);
    g.add(b);
    expect(bus.stats().subscribers).toBe(1);
    const e1 = bus.emit('TASK_STATE', { request_id: 'r1' }, { n: 1 });
    bus.emit('FLAG', { request_id: 'r1' }, { n: 2 }); // not of the filter
    const e3 = bus.emit('TASK_STATE', { request_id: 'r3' }, { n: 3, s: 'é"\n' });
    expect(h.scheduled).toBe(1); // one flush asked for the window, not one per event
    expect(a.batches).toEqual([]);
    g.flush();
    expect(a.batches).toHaveLength(1);
    expect(b.batches[0]).toBe(a.batches[0]);
    const batch = a.batches[0]!;
    expect(batch.events).toBe(2);
    expect(batch.payloads).toBeUndefined();
    expect(framesOf(batch.wire).map((f) => JSON.parse(f) as unknown)).toEqual([
      { type: 'event', event: JSON.parse(JSON.stringify(e1)) as unknown },
      { type: 'event', event: JSON.parse(JSON.stringify(e3)) as unknown },
    ]);
    g.flush(); // nothing pending: nothing handed out
    expect(a.batches).toHaveLength(1);
  });

  it('keeps each payload only when a member sends frame by frame (an extension was negotiated)', () => {
    const bus = new LocalEventBus();
    const g = new FanoutGroup(host(), bus, 'k', {});
    const plain = member();
    const viaWs = member(true);
    g.add(plain);
    g.add(viaWs);
    bus.emit('TASK_STATE', {}, { n: 1 });
    bus.emit('TASK_STATE', {}, { n: 2 });
    g.flush();
    const batch = viaWs.batches[0]!;
    expect(batch.payloads?.map(String)).toEqual(framesOf(batch.wire));
  });

  it('flushes at once past flushBytes; a member that joins gets only events emitted after it', () => {
    const bus = new LocalEventBus();
    const h = host(1000);
    const g = new FanoutGroup(h, bus, 'k', {});
    const early = member();
    g.add(early);
    bus.emit('TASK_STATE', {}, { n: 1 });
    expect(early.batches).toEqual([]);
    const late = member();
    g.add(late); // the window so far goes to `early` first
    expect(early.batches.map((x) => x.events)).toEqual([1]);
    bus.emit('TASK_STATE', {}, { pad: 'x'.repeat(1200) }); // past 1000 bytes: flushed without waiting
    expect(early.batches.map((x) => x.events)).toEqual([1, 1]);
    expect(late.batches.map((x) => x.events)).toEqual([1]);
  });

  it('the last member out unsubscribes the group and drops what it held', () => {
    const bus = new LocalEventBus();
    const h = host();
    const g = new FanoutGroup(h, bus, 'k', {});
    const [a, b] = [member(), member()];
    g.add(a);
    g.add(b);
    g.remove(a);
    expect(bus.stats().subscribers).toBe(1);
    expect(h.emptiedGroups).toEqual([]);
    bus.emit('TASK_STATE', {}, { n: 1 });
    g.remove(b);
    expect(bus.stats().subscribers).toBe(0);
    expect(h.emptiedGroups).toEqual([g]);
    g.flush();
    expect(b.batches).toEqual([]);
  });

  it('filterKey: the same filter however its types are listed; another filter, another key', () => {
    expect(filterKey({ types: ['FLAG', 'TASK_STATE', 'FLAG'] })).toBe(filterKey({ types: ['TASK_STATE', 'FLAG'] }));
    expect(filterKey({})).not.toBe(filterKey({ types: ['FLAG'] }));
    expect(filterKey({ request_id: 'a' })).not.toBe(filterKey({ session_id: 'a' }));
  });
});

/** A ws socket's surface as EventClient uses it, recording every write and ping in order. */
function fakeSocket() {
  const writes: string[] = [];
  const pings: string[] = [];
  const s = {
    readyState: 1,
    extensions: '',
    bufferedAmount: 0,
    writes,
    pings,
    ping: (data: string) => {
      pings.push(data);
    },
    _socket: {
      // write callbacks are never called: progress comes from pongs here
      write: (data: Buffer) => {
        for (const f of framesOf(data)) writes.push(f);
        return true;
      },
    },
    send: (data: string | Buffer) => {
      writes.push(String(data));
    },
    close: () => {
      s.readyState = 3;
    },
  };
  return s;
}

describe('EventClient in its group', () => {
  const gw: ClientHost = {
    counters: { events_sent: 0, events_dropped: 0, dropped_notices: 0, slow_closed: 0, sockets_refused: 0 },
    maxEvents: 100,
    maxBytes: 1 << 20,
    maxSlowBytes: 0,
  };

  it('a control message follows the events emitted before it, though their window has not closed', () => {
    const bus = new LocalEventBus();
    const g = new FanoutGroup(host(), bus, 'k', {});
    const socket = fakeSocket();
    const client = new EventClient(gw, socket as unknown as WebSocket);
    client.subscribe(g, {});
    bus.emit('TASK_STATE', {}, { n: 1 });
    bus.emit('TASK_STATE', {}, { n: 2 });
    client.send({ type: 'halted', phase: 'halted' });
    expect(socket.writes.map((w) => JSON.parse(w) as { type: string; event?: { data: unknown } })).toEqual([
      { type: 'subscribed', filter: {} },
      expect.objectContaining({ type: 'event', event: expect.objectContaining({ data: { n: 1 } }) }),
      expect.objectContaining({ type: 'event', event: expect.objectContaining({ data: { n: 2 } }) }),
      { type: 'halted', phase: 'halted' },
    ]);
    expect(gw.counters.events_sent).toBe(2);
  });

  it('counts bytes in flight until the client answers a ping: a reader that stopped is queued for, though the kernel still takes bytes', () => {
    const small: ClientHost = {
      counters: { events_sent: 0, events_dropped: 0, dropped_notices: 0, slow_closed: 0, sockets_refused: 0 },
      maxBytes: 1000,
      maxEvents: 3,
      maxSlowBytes: 0,
    };
    const bus = new LocalEventBus();
    const g = new FanoutGroup(host(), bus, 'k', {});
    const socket = fakeSocket(); // bufferedAmount stays 0, as with a kernel that takes everything
    const client = new EventClient(small, socket as unknown as WebSocket);
    client.subscribe(g, {});
    const pad = 'x'.repeat(400);
    const wrote = () => socket.writes.length - 1;
    for (let n = 1; n <= 3; n++) {
      bus.emit('TASK_STATE', {}, { n, pad });
      g.flush();
    }
    // ≥ 1000 bytes written and not acknowledged: the third batch waits
    expect(wrote()).toBe(2);
    expect(socket.pings.length).toBeGreaterThan(0);
    const last = socket.pings.at(-1)!;
    // a pong that is not one of our counts moves nothing; a count past what was written is refused
    client.ponged(Buffer.from(''));
    client.ponged(Buffer.from(String(Number(last) * 10)));
    expect(wrote()).toBe(2);
    client.ponged(Buffer.from(last));
    expect(wrote()).toBe(3);
    // still silent: the queue fills (3 events), then events are dropped and counted
    for (let n = 4; n <= 8; n++) {
      bus.emit('TASK_STATE', {}, { n, pad });
      g.flush();
    }
    expect(small.counters.events_dropped).toBeGreaterThan(0);
    for (const p of [...socket.pings]) client.ponged(Buffer.from(p));
    for (let i = 0; i < 5 && socket.pings.length > 0; i++) client.ponged(Buffer.from(socket.pings.at(-1)!));
    const tail = socket.writes.slice(-1)[0]!;
    expect(JSON.parse(tail)).toEqual({ type: 'dropped', count: small.counters.events_dropped });
    expect(small.counters.events_sent + small.counters.events_dropped).toBe(8);
  });

  it('a client that left its group gets nothing more, and the group is gone with it', () => {
    const bus = new LocalEventBus();
    const h = host();
    const g = new FanoutGroup(h, bus, 'k', {});
    const socket = fakeSocket();
    const client = new EventClient(gw, socket as unknown as WebSocket);
    client.subscribe(g, {});
    bus.emit('TASK_STATE', {}, { n: 1 });
    client.dispose();
    g.flush();
    expect(socket.writes).toEqual(['{"type":"subscribed","filter":{}}']);
    expect(bus.stats().subscribers).toBe(0);
    expect(h.emptiedGroups).toEqual([g]);
  });
});

describe('WebSocket /v1/events fan-out', () => {
  let d: TestDaemon;
  let url: string;
  beforeAll(async () => {
    d = await startDaemon({});
    url = (await d.app.listen()).url.replace(/^http/, 'ws') + '/v1/events';
  });
  afterAll(async () => {
    await d.close();
  });

  it('sockets of one filter share one bus subscription; resubscribing to the same filter keeps the stream; the last close ends it', async () => {
    const base = d.app.events.stats().subscribers;
    const clients = await Promise.all(Array.from({ length: 20 }, () => WsClient.open(url, d.admin, false)));
    for (const c of clients) await waitUntil('ready', () => c.count('ready') === 1, 10_000, 5);
    for (const c of clients) await c.subscribe({ types: ['TASK_STATE', 'FLAG'] });
    expect(d.app.events.stats().subscribers).toBe(base + 1);
    // the same filter spelled otherwise is the same group; another filter is another
    await clients[0]!.subscribe({ types: ['FLAG', 'TASK_STATE'] });
    await clients[1]!.subscribe({ types: ['TASK_STATE'], request_id: 'fan-1' });
    expect(d.app.events.stats().subscribers).toBe(base + 2);
    // the only member of its group resubscribes to that filter: its group is made again
    await clients[1]!.subscribe({ types: ['TASK_STATE'], request_id: 'fan-1' });
    expect(d.app.events.stats().subscribers).toBe(base + 2);

    d.app.events.emit('TASK_STATE', { request_id: 'fan-1' }, { n: 1 });
    d.app.events.emit('TASK_STATE', { request_id: 'fan-2' }, { n: 2 });
    for (const c of clients) {
      const want = c === clients[1] ? 1 : 2;
      await waitUntil('the events', () => c.events >= want, 10_000, 5);
    }
    expect(clients.map((c) => c.events)).toEqual(clients.map((c) => (c === clients[1] ? 1 : 2)));
    expect(d.app.eventGateway.stats().events_sent).toBeGreaterThanOrEqual(39);

    for (const c of clients) c.ws.terminate();
    await waitUntil('every socket gone', () => d.app.eventGateway.stats().clients === 0, 10_000, 5);
    expect(d.app.events.stats().subscribers).toBe(base);
  });
});

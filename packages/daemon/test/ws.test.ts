import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitUntil } from '@finger/testkit/core';

import { startDaemon, type TestDaemon } from './helpers.js';
import { WsClient as Client } from './ws-client.js';

describe('WebSocket /v1/events', () => {
  let d: TestDaemon;
  let url: string;
  beforeAll(async () => {
    d = await startDaemon({
      // max_slow_bytes 0: the paused reader below is dropped-and-told, never cut off (ws-limits.test.ts cuts)
      ws: { auth_timeout_ms: 300, max_buffered_bytes: 64 * 1024, max_buffered_events: 1000, max_slow_bytes: 0 },
      events: { max_segment_bytes: 1 << 20, max_segments: 2 },
    });
    url = (await d.app.listen()).url.replace(/^http/, 'ws') + '/v1/events';
  });
  afterAll(async () => {
    await d.close();
  });

  it('header auth → ready; a subscriber sees INPUT_RECEIVED, MODE_PARSED, DISPATCH_SENT, DISPATCH_RESULT with one correlation_id', async () => {
    const c = await Client.open(url, d.admin);
    await c.until(() => c.find('ready'), 'ready');
    c.send({
      op: 'subscribe',
      types: ['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT'],
      session_id: 'ws-s1',
    });
    const sub = await c.until(() => c.find('subscribed'), 'subscribed');
    expect(sub).toEqual({
      type: 'subscribed',
      filter: { types: ['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT'], session_id: 'ws-s1' },
    });
    // another session's traffic is filtered out
    await d.call('POST', '/v1/input', { body: { text: '/hub target=echo {"skip":true}', session_id: 'other' } });
    const res = await fetch(url.replace(/^ws/, 'http').replace('/v1/events', '/v1/input'), {
      method: 'POST',
      headers: { authorization: `Bearer ${d.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: '/hub target=echo {"a":1}', session_id: 'ws-s1' }),
    });
    const body = (await res.json()) as { correlation_id: string; request_id: string };
    expect(res.status).toBe(200);
    const events = await c.until(() => {
      const evs = c.messages.filter((m) => m.type === 'event').map((m) => m.event);
      return evs.length >= 4 ? evs : undefined;
    }, 'four events');
    expect(events.map((e) => e.type)).toEqual(['INPUT_RECEIVED', 'MODE_PARSED', 'DISPATCH_SENT', 'DISPATCH_RESULT']);
    for (const e of events) {
      expect(e.correlation_id).toBe(body.correlation_id);
      expect(e.request_id).toBe(body.request_id);
      expect(e.session_id).toBe('ws-s1');
    }
    expect(events[0].data).toEqual({ text: '/hub target=echo {"a":1}' });
    expect(events[1].data).toEqual({ mode: 'hub' });
    expect(events[2].data).toEqual({ target: 'echo.echo', blocking: true });
    expect(events[3].data).toEqual({ ok: true });
    c.close();
  });

  it('first-message auth works; a bad subscribe reports E_INVALID_ARGS and keeps the socket', async () => {
    const viewer = await d.token('viewer');
    const c = await Client.open(url);
    c.send({ op: 'auth', token: viewer });
    await c.until(() => c.find('ready'), 'ready');
    c.send({ op: 'subscribe', types: ['NOPE'] });
    const err = await c.until(() => c.find('error'), 'error');
    expect(err.error.code).toBe('E_INVALID_ARGS');
    c.send({ op: 'subscribe' });
    expect(await c.until(() => c.find('subscribed'), 'subscribed')).toEqual({ type: 'subscribed', filter: {} });
    expect(c.closed).toBeUndefined();
    c.close();
  });

  it('no auth in time, a bad token, or a bad first message → E_UNAUTHENTICATED then close 4401', async () => {
    const silent = await Client.open(url);
    await silent.until(() => silent.closed, 'close');
    expect(silent.closed!.code).toBe(4401);
    expect(silent.find('error')!.error.code).toBe('E_UNAUTHENTICATED');

    const badHeader = await Client.open(url, 'fgr_forged');
    await badHeader.until(() => badHeader.closed, 'close');
    expect(badHeader.closed!.code).toBe(4401);
    expect(badHeader.find('error')!.error.code).toBe('E_UNAUTHENTICATED');

    const badMsg = await Client.open(url);
    badMsg.send({ op: 'subscribe' });
    await badMsg.until(() => badMsg.closed, 'close');
    expect(badMsg.closed!.code).toBe(4401);

    const badToken = await Client.open(url);
    badToken.send({ op: 'auth', token: 'fgr_forged' });
    await badToken.until(() => badToken.closed, 'close');
    expect(badToken.closed!.code).toBe(4401);
  });

  it('an agent principal may not read the event stream (E_FORBIDDEN, 4403)', async () => {
    const agent = await d.token('agent:reviewer');
    const c = await Client.open(url);
    c.send({ op: 'auth', token: agent });
    await c.until(() => c.closed, 'close');
    expect(c.closed!.code).toBe(4403);
    expect(c.find('error')!.error.code).toBe('E_FORBIDDEN');
  });

  it('revoking a token closes every socket opened with it at once (E_UNAUTHENTICATED, 4401); no event after', async () => {
    const viewer = await d.token('viewer', 'ws-revoked-viewer');
    const byHeader = await Client.open(url, viewer);
    const byMessage = await Client.open(url);
    byMessage.send({ op: 'auth', token: viewer });
    const other = await Client.open(url, await d.token('viewer', 'ws-kept-viewer'));
    for (const c of [byHeader, byMessage, other]) {
      await c.until(() => c.find('ready'), 'ready');
      c.send({ op: 'subscribe', types: ['TASK_STATE'], request_id: 'revoke-me' });
      await c.until(() => c.find('subscribed'), 'subscribed');
    }
    const bus = d.app.events;
    bus.emit('TASK_STATE', { request_id: 'revoke-me' }, { n: 1 });
    for (const c of [byHeader, byMessage, other]) await c.until(() => c.events === 1 || undefined, 'first event');

    const res = await fetch(url.replace(/^ws/, 'http').replace('/v1/events', '/v1/tokens/ws-revoked-viewer'), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${d.admin}` },
    });
    expect(res.status).toBe(200);
    // emitted right after the revoke answered: the revoked sockets must not get it
    bus.emit('TASK_STATE', { request_id: 'revoke-me' }, { n: 2 });
    for (const c of [byHeader, byMessage]) {
      await c.until(() => c.closed, 'close');
      expect(c.closed).toEqual({ code: 4401, reason: 'E_UNAUTHENTICATED' });
      expect(c.messages.at(-1)).toEqual({
        type: 'error',
        error: { code: 'E_UNAUTHENTICATED', message: 'the token "ws-revoked-viewer" was revoked' },
      });
      expect(c.events).toBe(1);
    }
    // a socket of another token is untouched
    await other.until(() => other.events === 2 || undefined, 'second event');
    expect(other.closed).toBeUndefined();

    // and the revoked token cannot come back
    const again = await Client.open(url, viewer);
    await again.until(() => again.closed, 'close');
    expect(again.closed!.code).toBe(4401);
    other.close();
  });

  it('a client that never reads does not slow the emitter or other clients, and is told what it dropped', async () => {
    const fast = await Client.open(url, d.admin, false);
    const slow = await Client.open(url, d.admin, false);
    for (const c of [fast, slow]) {
      await c.until(() => c.find('ready'), 'ready');
      c.send({ op: 'subscribe', types: ['TASK_STATE'] });
      await c.until(() => c.find('subscribed'), 'subscribed');
    }
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

    const TOTAL = 20_000;
    const pad = 'x'.repeat(2000);
    const bus = d.app.events;
    for (let i = 0; i < TOTAL; i += 250) {
      for (let j = i; j < i + 250; j++) bus.emit('TASK_STATE', { request_id: `slow-${j}` }, { n: j, pad });
      // pace batches by the fast reader (never by the paused one), so a loaded machine cannot make
      // the fast client overflow its own buffer; the emitter itself never waits on a socket
      await fast.until(() => fast.events >= i + 250 || undefined, 'fast client to keep up', 30_000);
    }
    await fast.until(() => fast.events === TOTAL || undefined, 'fast client to get every event', 30_000);
    expect(fast.events).toBe(TOTAL);
    expect(fast.find('dropped')).toBeUndefined();
    expect(d.app.eventGateway.stats().events_dropped).toBeGreaterThan(0);

    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const dropped = await slow.until(() => slow.find('dropped'), 'dropped notice', 30_000);
    expect(dropped.count).toBeGreaterThan(0);
    // every event was either delivered or counted as dropped
    await slow.until(() => slow.events + dropped.count === TOTAL || undefined, 'all events accounted for');
    expect(slow.events + dropped.count).toBe(TOTAL);
    expect(slow.closed).toBeUndefined();

    // the slow client recovers: new events flow again
    bus.emit('TASK_STATE', { request_id: 'after' }, { n: -1 });
    await slow.until(() => slow.events === TOTAL - dropped.count + 1 || undefined, 'event after recovery');
    fast.close();
    slow.close();
  }, 60_000);
});

describe('WebSocket heartbeat', () => {
  it('terminates a client that stops answering pings', async () => {
    const d = await startDaemon({ ws: { heartbeat_ms: 100 } });
    try {
      const url = (await d.app.listen()).url.replace(/^http/, 'ws') + '/v1/events';
      const c = await Client.open(url, d.admin);
      await c.until(() => c.find('ready'), 'ready');
      expect(d.app.eventGateway.stats().clients).toBe(1);
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      await waitUntil('the silent client to be terminated', () => d.app.eventGateway.stats().clients === 0, 10_000, 20);
      expect(d.app.eventGateway.stats().clients).toBe(0);
      c.close();
    } finally {
      await d.close();
    }
  });
});

// /v1/events limits with real ws clients against a real daemon: socket limits (global and per
// token) refuse with E_OVERLOADED and close 4429; a paused reader is cut off by bytes (close
// 4008, counted) while the others keep receiving everything; one frame per event for all clients.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitUntil } from '@finger/testkit/core';

import { startDaemon, type TestDaemon } from './helpers.js';
import { WsClient } from './ws-client.js';

function socketOf(c: WsClient): { pause(): void; resume(): void } {
  return (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
}

describe('WebSocket /v1/events limits', () => {
  let d: TestDaemon;
  let url: string;
  const open: WsClient[] = [];
  const connect = async (token: string) => {
    const c = await WsClient.open(url, token, false);
    open.push(c);
    return c;
  };
  const closeAll = async () => {
    for (const c of open.splice(0)) c.ws.terminate();
    await waitUntil(
      'the gateway to see every socket closed',
      () => d.app.eventGateway.stats().clients === 0,
      10_000,
      10,
    );
  };

  beforeAll(async () => {
    d = await startDaemon({
      // in flight (written, not yet acknowledged by a pong) 64 KiB, then 200 events queued: a
      // reader takes a 200-event burst of 1 KB events within one ping round trip
      ws: {
        max_buffered_bytes: 64 * 1024,
        max_buffered_events: 200,
        max_slow_bytes: 512 * 1024,
        max_sockets: 6,
        max_sockets_per_token: 3,
      },
    });
    url = (await d.app.listen()).url.replace(/^http/, 'ws') + '/v1/events';
  });
  afterAll(async () => {
    await d.close();
  });

  it('refuses a token past max_sockets_per_token with E_OVERLOADED and close 4429; another token still connects', async () => {
    const viewer = await d.token('viewer', 'ws-limit-viewer');
    const mine = await Promise.all([0, 1, 2].map(() => connect(viewer)));
    for (const c of mine) await c.until(() => c.find('ready'), 'ready');
    const extra = await connect(viewer);
    await extra.until(() => extra.closed, 'refusal');
    expect(extra.closed).toEqual({ code: 4429, reason: 'E_OVERLOADED' });
    expect(extra.find('error')?.error).toMatchObject({ code: 'E_OVERLOADED' });
    expect(extra.find('error')?.error.message).toContain('ws.max_sockets_per_token 3');
    expect(extra.find('ready')).toBeUndefined();
    // another token is not counted against this one
    const admin = await connect(d.admin);
    await admin.until(() => admin.find('ready'), 'ready');
    // a closed socket frees its place
    mine[0]!.ws.terminate();
    await mine[0]!.until(() => mine[0]!.closed, 'closed');
    await admin.until(() => d.app.eventGateway.stats().clients === 4 || undefined, 'the gateway to see the close');
    const again = await connect(viewer);
    await again.until(() => again.find('ready'), 'ready after a close');
    expect(d.app.eventGateway.stats().sockets_refused).toBe(1);
    await closeAll();
  });

  it('refuses a socket past max_sockets (authenticated or not) with close 4429', async () => {
    const tokens = await Promise.all([0, 1, 2].map((i) => d.token('viewer', `ws-limit-global-${i}`)));
    const six = [];
    for (const t of tokens) for (let i = 0; i < 2; i++) six.push(await connect(t));
    for (const c of six) await c.until(() => c.find('ready'), 'ready');
    const before = d.app.eventGateway.stats().sockets_refused;
    const seventh = await connect(d.admin);
    await seventh.until(() => seventh.closed, 'refusal');
    expect(seventh.closed).toEqual({ code: 4429, reason: 'E_OVERLOADED' });
    expect(seventh.find('error')?.error).toMatchObject({ code: 'E_OVERLOADED' });
    expect(seventh.find('error')?.error.message).toContain('ws.max_sockets 6');
    expect(d.app.eventGateway.stats().sockets_refused).toBe(before + 1);
    await closeAll();
  });

  it('cuts a paused reader off by bytes (close 4008, counted) while the others receive every event', async () => {
    const readers = await Promise.all([0, 1].map(() => connect(d.admin)));
    const paused = await connect(d.admin);
    for (const c of [...readers, paused]) await c.subscribed(['TASK_STATE']);
    socketOf(paused).pause();
    const before = d.app.eventGateway.stats();

    const TOTAL = 4_000;
    const pad = 'x'.repeat(1000); // ≈ 1 KB events: the paused one passes 512 KiB behind long before the end
    const bus = d.app.events;
    for (let i = 0; i < TOTAL; i += 200) {
      for (let j = i; j < i + 200; j++) bus.emit('TASK_STATE', { request_id: `cut-${j}` }, { n: j, pad });
      // paced by the readers (never by the paused one), so they never fall behind themselves
      for (const r of readers) await r.until(() => r.events >= i + 200 || undefined, 'readers to keep up');
    }
    for (const r of readers) {
      await r.until(() => r.events === TOTAL || undefined, 'every event');
      expect(r.events).toBe(TOTAL);
      expect(r.find('dropped')).toBeUndefined();
      expect(r.closed).toBeUndefined();
    }
    const after = d.app.eventGateway.stats();
    expect(after.slow_closed - before.slow_closed).toBe(1);
    expect(after.events_dropped).toBeGreaterThan(before.events_dropped);

    // resumed, the paused client reads what was in flight, then the close: 4008 "slow consumer"
    socketOf(paused).resume();
    await paused.until(() => paused.closed, 'the cut-off close', 30_000);
    expect(paused.closed).toEqual({ code: 4008, reason: 'slow consumer' });
    expect(paused.events).toBeLessThan(TOTAL);
    await closeAll();
  }, 60_000);
});

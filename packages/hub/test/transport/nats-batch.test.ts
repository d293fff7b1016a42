import { connect, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { rfc3339, ulid } from '@finger/protocol';
import { natsUrlForTests, requestEnvelope, testClusterName, waitUntil } from '@finger/testkit';

import { type DroppedMessage, NatsTransport } from '../../src/transport/nats.js';
import { inboxOf, MAX_BATCH, parseBatch, WireBatch } from '../../src/transport/nats-batch.js';
import { serveKeyOf, WireAuth } from '../../src/transport/nats-wire.js';
import type { RequestHooks } from '../../src/transport/transport.js';

const url = await natsUrlForTests();
const KEY = 'batch-test-cluster-key-0123456789';

describe('request batch wire form', () => {
  it('parses the lines of a batch body back to tokens and envelope JSON', () => {
    const b = new WireBatch('finger.c.call.m', true);
    for (const [t, json] of [
      ['a1', '[1,"x"]'],
      ['b2', '["héllo ✓"]'],
    ] as const) {
      const line = `${t} ${json}`;
      b.add(t, line, Buffer.byteLength(line));
    }
    const body = Buffer.from(b.body());
    expect(b.bytes).toBe(body.length);
    expect(parseBatch(body)?.map((p) => [p.token, p.json.toString()])).toEqual([
      ['a1', '[1,"x"]'],
      ['b2', '["héllo ✓"]'],
    ]);
    expect(b.tokens).toEqual(['a1', 'b2']);
  });

  it('refuses a body with a line lacking a valid token', () => {
    expect(parseBatch(Buffer.from('[1,2]'))).toBeUndefined();
    expect(parseBatch(Buffer.from('a1 [1]\n[2]'))).toBeUndefined();
    expect(parseBatch(Buffer.from('A* [1]'))).toBeUndefined();
    expect(parseBatch(Buffer.from('é1 [1]'))).toBeUndefined();
    expect(parseBatch(Buffer.from('a1 ["✓"]\n✓ [2]'))).toBeUndefined();
    expect(parseBatch(Buffer.from(''))).toBeUndefined();
    // tokens: 1–16 of [0-9a-z], also when the body comes as text
    expect(parseBatch(`${'z'.repeat(16)} [1]`)?.[0]?.token).toBe('z'.repeat(16));
    expect(parseBatch(`${'z'.repeat(17)} [1]`)).toBeUndefined();
    expect(parseBatch(' [1]')).toBeUndefined();
    expect(parseBatch('0a9z/ [1]')).toBeUndefined();
    expect(parseBatch('a:1 [1]')).toBeUndefined();
    expect(parseBatch('`a [1]')).toBeUndefined();
    expect(parseBatch('a{ [1]')).toBeUndefined();
    expect(inboxOf('_INBOX.abc.7')).toBe('_INBOX.abc.');
    expect(inboxOf('noinbox')).toBeUndefined();
    expect(inboxOf('.leading')).toBeUndefined(); // a dot only at the start names no inbox
    expect(inboxOf('a.')).toBe('a.');
    expect(inboxOf('')).toBeUndefined();
    for (const r of ['_INBOX.x.y.z9', 'a.b', 'x..y', '.a.b'])
      expect(inboxOf(r)).toBe(r.lastIndexOf('.') > 0 ? r.slice(0, r.lastIndexOf('.') + 1) : undefined);
  });
});

function request(target: string, payload: unknown, deadline = Date.now() + 5000): Envelope {
  return requestEnvelope(target, payload, { deadline });
}

function echo(req: Envelope): Envelope {
  const id = ulid();
  return {
    ...req,
    id,
    kind: 'reply',
    source: { kind: 'module', id: req.target.split('.')[0]!, roles: [] },
    timestamp: rfc3339(Date.now()),
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function transport(cluster: string, node: string, role: 'daemon' | 'serve' = 'daemon', now?: () => number) {
  const nc: NatsConnection = await connect({ servers: url!, noAsyncTraces: true });
  const dropped: DroppedMessage[] = [];
  const auth =
    role === 'serve'
      ? new WireAuth({ role, node, serve_key: serveKeyOf(KEY, 'echo'), ...(now ? { now } : {}) })
      : new WireAuth({ role, node, cluster_key: KEY, ...(now ? { now } : {}) });
  const t = new NatsTransport({ connection: nc, cluster, auth, onDropped: (d) => dropped.push(d) });
  cleanup.push(async () => {
    await t.close();
    await nc.drain();
  });
  return { t, nc, dropped };
}

/** Counts the NATS messages published on a module's call subject. */
async function watch(nc: NatsConnection, cluster: string, module: string) {
  const seen: number[] = [];
  nc.subscribe(`finger.${cluster}.call.${module}`, { callback: (_e, m) => seen.push(m.data.length) });
  await nc.flush();
  return seen;
}

describe.skipIf(!url)('request batches over NATS', () => {
  it('sends the requests of one turn to one module as one message, and their replies as one, answering each', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    const seen = await watch(server.nc, cluster, 'echo');
    const replyFrames: string[] = [];
    server.nc.subscribe('_INBOX.>', {
      callback: (_e, m) => {
        if (Buffer.from(m.data).toString('latin1', 0, 9) === 'FW6 reply') replyFrames.push(m.subject);
      },
    });
    let handled = 0;
    await server.t.serve('echo', async (req) => {
      handled++;
      return echo(req);
    });
    // the first request goes out alone (nothing outstanding); the next ones wait for the end of the
    // turn and leave MAX_BATCH to a frame
    const n = 1 + MAX_BATCH + 8;
    const calls = Array.from({ length: n }, (_, i) => caller.t.request(request('echo.say', { i })));
    const replies = await Promise.all(calls);
    expect(replies.map((r) => r.payload)).toEqual(Array.from({ length: n }, (_, i) => ({ i })));
    expect(replies.every((r, i) => r.request_id === replies[i]!.request_id && r.kind === 'reply')).toBe(true);
    expect(handled).toBe(n);
    await caller.nc.flush();
    await server.nc.flush();
    expect(seen).toHaveLength(3);
    // the replies of one turn to one caller leave as few frames too
    expect(replyFrames.length).toBeGreaterThan(0);
    expect(replyFrames.length).toBeLessThanOrEqual(3);
    expect(server.dropped).toEqual([]);
  });

  it('splits a batch that would pass max_payload; a single request over it still fails E_INVALID_ARGS', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    const seen = await watch(server.nc, cluster, 'echo');
    await server.t.serve('echo', async (req) => echo(req));
    const max = caller.nc.info!.max_payload;
    const big = 'x'.repeat(Math.floor(max / 3));
    const calls = Array.from({ length: 7 }, (_, i) => caller.t.request(request('echo.say', { i, big })));
    const replies = await Promise.all(calls);
    expect(replies.map((r) => (r.payload as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await server.nc.flush();
    // 1 alone, then 6 of a third each: at most two per frame
    expect(seen.length).toBe(4);
    for (const n of seen) expect(n).toBeLessThanOrEqual(max);
    const pending = caller.t.request(request('echo.say', { n: 1 }));
    await expect(caller.t.request(request('echo.say', { big: 'x'.repeat(max) }))).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
    });
    await expect(pending).resolves.toMatchObject({ payload: { n: 1 } });
  });

  it('fails every call of a batch nobody serves with E_NO_TARGET', async () => {
    const cluster = testClusterName('batch');
    const caller = await transport(cluster, 'cli');
    const calls = Array.from({ length: 12 }, (_, i) => caller.t.request(request(`ghost.t${i % 2}`, { i })));
    const outcomes = await Promise.allSettled(calls);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'E_NO_TARGET' });
    }
    expect(caller.t.stats().pending).toBe(0);
  });

  it('refuses every request of a batch sent by a serve process, each with E_FORBIDDEN', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const impostor = await transport(cluster, 'imp', 'serve');
    let handled = 0;
    await server.t.serve('echo', async (req) => {
      handled++;
      return echo(req);
    });
    const replies = await Promise.all(
      Array.from({ length: 5 }, (_, i) => impostor.t.request(request('echo.say', { i }))),
    );
    for (const r of replies) expect(r.error).toMatchObject({ code: 'E_FORBIDDEN' });
    expect(handled).toBe(0);
    expect(server.dropped.filter((d) => d.reason === 'request originated by a module serve process')).toHaveLength(5);
  });

  it('sends the cancel of a request still waiting in a batch after the batch', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    const cancelled: string[] = [];
    await server.t.serve('slow', (req, channel) => {
      return new Promise<Envelope>((resolve) => {
        channel.onCancel({
          onCancelled: (reason) => {
            cancelled.push(`${(req.payload as { i: number }).i}:${reason}`);
            resolve({ ...echo(req), payload: null, error: { code: 'E_MODULE_ERROR', message: reason } });
          },
        });
      });
    });
    const hooks = [{}, {}] as RequestHooks[];
    const calls = [0, 1].map((i) => caller.t.request(request('slow.wait', { i }), hooks[i]));
    // the second request is in the batch of this turn; its cancel must not overtake it
    hooks[1]!.canceller!.cancel('user');
    await expect(calls[1]).resolves.toMatchObject({ error: { code: 'E_MODULE_ERROR' } });
    expect(cancelled).toEqual(['1:user']);
    hooks[0]!.canceller!.cancel('done');
    await expect(calls[0]).resolves.toMatchObject({ error: { code: 'E_MODULE_ERROR' } });
  });

  it('drops a frame of an earlier wire version with E_INVALID_ENVELOPE naming the version, reporting it', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    await server.t.serve('echo', async (req) => echo(req));
    const nc = await connect({ servers: url!, noAsyncTraces: true });
    cleanup.push(() => nc.drain());
    // as finger before the FW6 frame signed it: 22-character MACs, no timestamp, no key ids
    const old = Buffer.from(`FW5 request d1 ${'A'.repeat(22)} ${'B'.repeat(22)}.echo\n1abc [2]`, 'latin1');
    nc.publish(`finger.${cluster}.call.echo`, old, { reply: '_INBOX.old.1' });
    await nc.flush();
    await waitUntil('the frame dropped', () => server.dropped.length > 0, 5000, 10);
    expect(server.dropped).toEqual([
      {
        code: 'E_INVALID_ENVELOPE',
        reason: 'unsupported frame version',
        version: 'FW5',
        subject: `finger.${cluster}.call.echo`,
      },
    ]);
  });

  it('drops a reply naming a principal other than the called module or the answering node', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    const sources: Envelope['source'][] = [
      { kind: 'human', id: 'alice', roles: ['admin'] },
      { kind: 'module', id: 'other', roles: [] },
      { kind: 'module', id: 'echo', roles: ['admin'] },
      { kind: 'system', id: 'cli', roles: [] }, // the caller's node, not the one that signed the reply
      { kind: 'agent', id: 'echo', roles: [] },
    ];
    await server.t.serve('echo', async (req) => {
      const i = (req.payload as { i: number }).i;
      const src = sources[i];
      return src === undefined ? echo(req) : { ...echo(req), source: src };
    });
    const soon = Date.now() + 400;
    const forged = sources.map((_, i) => caller.t.request(request('echo.say', { i }, soon)));
    // a result comes back in the module's name (errors of the serving node in its own: other tests)
    await expect(caller.t.request(request('echo.say', { i: sources.length }))).resolves.toMatchObject({
      source: { kind: 'module', id: 'echo' },
      payload: { i: sources.length },
    });
    for (const f of forged) await expect(f).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(caller.dropped.map((d) => d.reason)).toEqual([
      'reply from human "alice" to a call of "echo.say"',
      'reply from module "other" to a call of "echo.say"',
      'reply from module "echo" to a call of "echo.say"',
      'reply from system "cli" to a call of "echo.say"',
      'reply from agent "echo" to a call of "echo.say"',
    ]);
    expect(caller.dropped.every((d) => d.node === 'srv')).toBe(true);
  });

  it('refuses a request published again (a captured frame replayed): the module runs once', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    let runs = 0;
    await server.t.serve('echo', async (req) => {
      runs++;
      return echo(req);
    });
    // an eavesdropper on the call subject keeps the signed frame and its reply subject
    const spy = await connect({ servers: url!, noAsyncTraces: true });
    cleanup.push(() => spy.drain());
    const captured: { data: Uint8Array; reply: string }[] = [];
    spy.subscribe(`finger.${cluster}.call.echo`, {
      callback: (_e, m) => captured.push({ data: m.data, reply: m.reply! }),
    });
    await spy.flush();
    await expect(caller.t.request(request('echo.say', { n: 1 }))).resolves.toMatchObject({ payload: { n: 1 } });
    expect(captured).toHaveLength(1);
    spy.publish(`finger.${cluster}.call.echo`, captured[0]!.data, { reply: captured[0]!.reply });
    await spy.flush();
    await waitUntil('the frame dropped', () => server.dropped.length > 0, 5000, 10);
    expect(server.dropped).toEqual([
      { reason: 'replayed request', subject: `finger.${cluster}.call.echo`, node: 'cli', role: 'daemon' },
    ]);
    expect(runs).toBe(1);
  });

  it("refuses a captured request replayed on another module's call subject, and one replayed past the time window", async () => {
    const cluster = testClusterName('batch');
    let skew = 0;
    const server = await transport(cluster, 'srv', 'daemon', () => Date.now() + skew);
    const caller = await transport(cluster, 'cli');
    const runs: string[] = [];
    for (const m of ['echo', 'other'])
      await server.t.serve(m, async (req) => {
        runs.push(req.target);
        return echo(req);
      });
    const spy = await connect({ servers: url!, noAsyncTraces: true });
    cleanup.push(() => spy.drain());
    const captured: { data: Uint8Array; reply: string }[] = [];
    spy.subscribe(`finger.${cluster}.call.echo`, {
      callback: (_e, m) => captured.push({ data: m.data, reply: m.reply! }),
    });
    await spy.flush();
    await expect(caller.t.request(request('echo.say', { n: 1 }))).resolves.toMatchObject({ payload: { n: 1 } });
    expect(captured).toHaveLength(1);
    // the subject is signed: the frame fails on another module's call subject
    spy.publish(`finger.${cluster}.call.other`, captured[0]!.data, { reply: captured[0]!.reply });
    await spy.flush();
    await waitUntil('the frame dropped', () => server.dropped.length > 0, 5000, 10);
    expect(server.dropped).toEqual([
      {
        code: 'E_UNAUTHENTICATED',
        reason: 'bad signature',
        subject: `finger.${cluster}.call.other`,
        claimed_node: 'cli',
      },
    ]);
    // on its own subject, once the server's clock is past the window: stale (the id window need not remember it)
    skew = 121_000;
    spy.publish(`finger.${cluster}.call.echo`, captured[0]!.data, { reply: captured[0]!.reply });
    await spy.flush();
    await waitUntil('a second frame dropped', () => server.dropped.length > 1, 5000, 10);
    expect(server.dropped[1]).toEqual({
      code: 'E_UNAUTHENTICATED',
      reason: 'stale frame',
      subject: `finger.${cluster}.call.echo`,
      claimed_node: 'cli',
    });
    expect(runs).toEqual(['echo.say']);
  });

  it('makes reply tokens no one can count on: 13 random base-32 digits, never a step of a counter', async () => {
    const cluster = testClusterName('batch');
    const server = await transport(cluster, 'srv');
    const caller = await transport(cluster, 'cli');
    await server.t.serve('echo', async (req) => echo(req));
    // what a serve host sees of a caller: the reply subject of each request to its module
    const spy = await connect({ servers: url!, noAsyncTraces: true });
    cleanup.push(() => spy.drain());
    const tokens: string[] = [];
    spy.subscribe(`finger.${cluster}.call.echo`, {
      callback: (_e, m) => tokens.push(m.reply!.slice(m.reply!.lastIndexOf('.') + 1)),
    });
    await spy.flush();
    // one at a time: each request goes out alone, under a token of its own
    for (let i = 0; i < 100; i++) await caller.t.request(request('echo.say', { i }));
    await waitUntil('every request seen', () => tokens.length === 100, 5000, 10);
    const DIGITS = '0123456789abcdefghijklmnopqrstuv';
    const value = (t: string) => [...t].reduce((v, c) => v * 32n + BigInt(DIGITS.indexOf(c)), 0n);
    for (const t of tokens) expect(t).toMatch(/^[0-9a-v]{13}$/);
    expect(new Set(tokens).size).toBe(100);
    // a counter steps by one amount (whatever it starts from) and keeps its leading digits
    const steps = new Set(tokens.slice(1).map((t, i) => value(t) - value(tokens[i]!)));
    expect(steps.size).toBe(99);
    expect(new Set(tokens.map((t) => t[0])).size).toBeGreaterThanOrEqual(12);
  });
});

import type { NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';
import { requestEnvelope } from '@finger/testkit';

import { MessageHub, type ModuleRuntime, type RuntimeOptions, silentLogger } from '../../src/index.js';
import { NatsRuntime } from '../../src/runtime/nats.js';
import { NatsTransport } from '../../src/transport/nats.js';
import { WireAuth } from '../../src/transport/nats-wire.js';
import type { ReplySink } from '../../src/transport/reply-sink.js';
import { FakeRemote } from '../fixtures/fake-remote.js';
import { human, manifest, rejectionOf, until } from '../helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function remoteHub(): Promise<{ hub: MessageHub; remote: FakeRemote }> {
  const remote = new FakeRemote();
  const hub = new MessageHub({
    createRuntime: (_o: RuntimeOptions): ModuleRuntime => remote,
    limits: { lease_sweep_ms: 5 },
  });
  closers.push(() => hub.close(100));
  await hub.registry.register(
    manifest('far', [{ name: 'echo' }, { name: 'slow', timeout_ms: 30 }], { runtime: { type: 'nats' } }),
    { baseDir: '.' },
  );
  return { hub, remote };
}

describe('forwarding runtimes (modules hosted elsewhere)', () => {
  it("get the hub's envelope as it is; the remote reply's payload is the result", async () => {
    const { hub, remote } = await remoteHub();
    const p = hub.request({ target: 'far.echo', payload: { x: 1 }, source: human, session_id: 's1' });
    expect(remote.sent).toHaveLength(1);
    const req = remote.sent[0]!.request;
    expect(req).toMatchObject({
      kind: 'request',
      target: 'far.echo',
      payload: { x: 1 },
      source: human,
      session_id: 's1',
      blocking: true,
      execution_chain: [],
      nesting_depth: 0,
    });
    expect(req.lease?.id).toBe(req.id);
    remote.sent[0]!.reply({ y: 2 });
    expect(await p).toEqual({ y: 2 });
    expect(remote.invoked).toBe(0);
    expect(hub.stats()).toMatchObject({ inflight: 0, leases_active: 0 });
  });

  it("fail with the remote reply's error code, and with the code of a transport failure", async () => {
    const { hub, remote } = await remoteHub();
    const a = hub.request({ target: 'far.echo', payload: {}, source: human });
    remote.sent[0]!.reply(null, { code: 'E_MODULE_ERROR', message: 'boom' });
    expect(await rejectionOf(a)).toMatchObject({ code: 'E_MODULE_ERROR', message: 'boom' });
    const b = hub.request({ target: 'far.echo', payload: {}, source: human });
    remote.sent[1]!.sink.onFailed(new FingerError('E_NO_TARGET', 'no node serves "far.echo" in the cluster'));
    expect(await rejectionOf(b)).toMatchObject({ code: 'E_NO_TARGET' });
  });

  it("pass progress and lease extensions to the caller, and the hub's cancel to the remote", async () => {
    const { hub, remote } = await remoteHub();
    const progress: string[] = [];
    const p = hub.request({ target: 'far.slow', payload: {}, source: human, onProgress: (m) => progress.push(m) });
    const s = remote.sent[0]!;
    s.sink.onProgress?.('half', 0.5);
    s.sink.onLeaseExtend?.(60_000);
    expect(progress).toEqual(['half']);
    expect(s.cancels).toEqual([]);
    s.reply('done');
    expect(await p).toBe('done');
    // the lease of 30 ms, not extended this time, expires: the remote gets the cancel
    const q = hub.request({ target: 'far.slow', payload: {}, source: human });
    expect(await rejectionOf(q)).toMatchObject({ code: 'E_LEASE_EXPIRED' });
    expect(remote.sent[1]!.cancels).toEqual(['E_LEASE_EXPIRED']);
  });

  it("are served on the hub's transport by the forward handler too (reply envelope as it came)", async () => {
    const { hub, remote } = await remoteHub();
    const env = { id: 'e1', target: 'far.echo' } as Envelope;
    const progress: string[] = [];
    const p = hub.transport.request(env, { onProgress: (m) => progress.push(m) });
    await until(() => remote.sent.length === 1, 'the request');
    expect(remote.sent[0]!.request).toBe(env);
    remote.sent[0]!.sink.onProgress?.('started');
    remote.sent[0]!.reply(7);
    expect(await p).toMatchObject({ kind: 'reply', payload: 7 });
    expect(progress).toEqual(['started']);
    const q = hub.transport.request(env);
    await until(() => remote.sent.length === 2, 'the second request');
    remote.sent[1]!.sink.onFailed(new FingerError('E_TIMEOUT', 'late'));
    expect(await rejectionOf(q)).toMatchObject({ code: 'E_TIMEOUT' });
  });
});

/** A NATS connection that records publishes (nothing answers). */
function fakeConnection(published: { subject: string; reply?: string }[]): NatsConnection {
  return {
    info: { max_payload: 1024 * 1024 },
    isClosed: () => false,
    subscribe: () => ({ unsubscribe() {}, drain: async () => {} }),
    publish: (subject: string, _data: Uint8Array, opts?: { reply?: string }) =>
      published.push({ subject, ...(opts?.reply ? { reply: opts.reply } : {}) }),
    flush: async () => {},
    status: () => ({ async *[Symbol.asyncIterator]() {} }),
    drain: async () => {},
    close: async () => {},
  } as unknown as NatsConnection;
}

function transport(published: { subject: string; reply?: string }[]): NatsTransport {
  const t = new NatsTransport({
    connection: fakeConnection(published),
    cluster: 'fw',
    auth: new WireAuth({ role: 'daemon', node: 'n1', cluster_key: 'test-cluster-key-0123456789abcdef' }),
  });
  closers.push(() => t.close());
  return t;
}

function envelope(payload: unknown): Envelope {
  return requestEnvelope('far.echo', payload, { source: human });
}

/** A sink that records how it was settled. */
function recordingSink(): ReplySink & { outcome: unknown[] } {
  const outcome: unknown[] = [];
  return { outcome, onReply: (r) => outcome.push(r), onFailed: (e) => outcome.push(e) };
}

describe('NatsTransport.send', () => {
  it('publishes the request and gives the sink a canceller, which sends a cancel', () => {
    const published: { subject: string; reply?: string }[] = [];
    const t = transport(published);
    const sink = recordingSink();
    t.send(envelope({ x: 1 }), sink);
    expect(published).toEqual([{ subject: 'finger.fw.call.far', reply: expect.stringMatching(/^_INBOX\./) }]);
    sink.canceller!.cancel('E_HALTED');
    expect(published[1]).toEqual({ subject: 'finger.fw.cancel' });
    expect(t.stats().pending).toBe(1);
  });

  it('never throws: what fails at once reaches onFailed from a microtask, with its code', async () => {
    const t = transport([]);
    const sink = recordingSink();
    t.send(envelope({ n: 1n }), sink);
    expect(sink.outcome).toEqual([]);
    await Promise.resolve();
    expect(sink.outcome).toMatchObject([{ code: 'E_INTERNAL' }]);
    await t.close();
    const closed = recordingSink();
    t.send(envelope({}), closed);
    await Promise.resolve();
    expect(closed.outcome).toMatchObject([{ code: 'E_PROVIDER_CLOSED' }]);
    expect(await rejectionOf(t.request(envelope({})))).toMatchObject({ code: 'E_PROVIDER_CLOSED' });
  });

  it('fails outstanding requests with E_PROVIDER_CLOSED on close, and cancelModule cancels those of one module', async () => {
    const published: { subject: string; reply?: string }[] = [];
    const t = transport(published);
    const sink = recordingSink();
    t.send(envelope({}), sink);
    t.cancelModule('other', 'E_PROVIDER_CLOSED');
    expect(published.filter((p) => p.subject === 'finger.fw.cancel')).toHaveLength(0);
    t.cancelModule('far', 'E_PROVIDER_CLOSED');
    expect(published.filter((p) => p.subject === 'finger.fw.cancel')).toHaveLength(1);
    await t.close();
    expect(sink.outcome).toMatchObject([{ code: 'E_PROVIDER_CLOSED' }]);
  });
});

describe('NatsTransport batches that cannot go out', () => {
  it('fail their requests from a microtask, so a sink that sends again from onFailed loses no request', async () => {
    let publishes = 0;
    const forServe = [true, false, true, true];
    const connection = {
      ...fakeConnection([]),
      publish: () => {
        if (++publishes > 1) throw new Error('connection draining');
      },
    } as unknown as NatsConnection;
    const t = new NatsTransport({
      connection,
      cluster: 'fw',
      auth: new WireAuth({ role: 'daemon', node: 'n1', cluster_key: 'test-cluster-key-0123456789abcdef' }),
      // the second request's batch is closed by the third; the request sent again would close the third's
      servedByServe: () => forServe.shift() ?? true,
    });
    closers.push(() => t.close());
    t.send(envelope({}), recordingSink()); // alone: published at once
    const again = recordingSink();
    const first = recordingSink();
    const resend: ReplySink = {
      onReply: () => undefined,
      onFailed: (e) => {
        first.outcome.push(e);
        t.send(envelope({}), again);
      },
    };
    t.send(envelope({}), resend); // batched
    const third = recordingSink();
    t.send(envelope({}), third); // the batch of `resend` goes out first, and fails
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect([first.outcome, third.outcome, again.outcome]).toMatchObject([
      [{ code: 'E_NO_TARGET' }],
      [{ code: 'E_NO_TARGET' }],
      [{ code: 'E_NO_TARGET' }],
    ]);
    expect(t.stats().pending).toBe(1); // the first request, still waiting for its reply
  });
});

describe('NatsRuntime.forward', () => {
  it('hands the envelope to the transport; once closed, fails with E_PROVIDER_CLOSED and cancels what is out', async () => {
    const requests: Envelope[] = [];
    const cancelled: [string, string][] = [];
    const rt = new NatsRuntime({
      manifest: manifest('far', [{ name: 'echo' }], { runtime: { type: 'nats' } }),
      baseDir: '.',
      logger: silentLogger,
      transport: {
        name: 'fake',
        serve: () => Promise.reject(new Error('not used')),
        request: () => new Promise(() => undefined),
        send: (e) => requests.push(e),
        serves: () => false,
        close: async () => undefined,
        cancelModule: (module_id, reason) => cancelled.push([module_id, reason]),
        failModule: () => 0,
      },
      remoteHealth: () => ({ ok: true }),
    });
    const env: Envelope = { ...envelope(undefined), blocking: false, lease: { id: 'L1', ttl_ms: 300, expires_at: 1 } };
    rt.forward(env, recordingSink());
    // as it is, but with the lease the remote side has always been sent (to the deadline), blocking, a null payload
    const { lease: _lease, blocking: _blocking, payload: _payload, ...same } = env;
    expect(requests[0]).toEqual({
      ...same,
      blocking: true,
      payload: null,
      lease: { id: 'L1', ttl_ms: expect.any(Number), expires_at: env.deadline },
    });
    await rt.close();
    expect(cancelled).toEqual([['far', 'E_PROVIDER_CLOSED']]);
    const sink = recordingSink();
    rt.forward(env, sink);
    await Promise.resolve();
    expect(sink.outcome).toMatchObject([{ code: 'E_PROVIDER_CLOSED' }]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import {
  MessageHub,
  type ModuleRuntime,
  type RequestHooks,
  type RuntimeOptions,
  silentLogger,
} from '../../src/index.js';
import type { ForwardingRuntime } from '../../src/registry/forward-handler.js';
import { NatsRuntime } from '../../src/runtime/nats.js';
import type { Transport } from '../../src/transport/transport.js';
import { human, manifest, rejectionOf, until } from '../helpers.js';

/** One forwarded request as the fake remote saw it, and how to answer it. */
interface Sent {
  request: Envelope;
  hooks: RequestHooks;
  cancels: string[];
  reply(payload: unknown, error?: { code: string; message: string }): void;
  fail(e: unknown): void;
}

/** A module hosted "elsewhere": forward() records the request and lets the test answer it. */
class FakeRemote implements ForwardingRuntime {
  readonly type = 'nats';
  readonly sent: Sent[] = [];
  invoked = 0;
  throwNext: unknown = undefined;
  async start(): Promise<void> {}
  forward(request: Envelope, hooks: RequestHooks): Promise<Envelope> {
    if (this.throwNext !== undefined) throw this.throwNext;
    return new Promise((resolve, reject) => {
      const s: Sent = {
        request,
        hooks,
        cancels: [],
        reply: (payload, error) =>
          resolve({ ...request, id: 'r1', kind: 'reply', payload, ...(error ? { error } : {}) }),
        fail: reject,
      };
      hooks.canceller = { cancel: (reason) => s.cancels.push(reason) };
      this.sent.push(s);
    });
  }
  invoke(): Promise<unknown> {
    this.invoked++;
    return Promise.reject(new Error('a forwarding runtime is not invoked'));
  }
  cancel(): void {}
  async health() {
    return { ok: true };
  }
  async close(): Promise<void> {}
}

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

async function remoteHub(): Promise<{ hub: MessageHub; remote: FakeRemote }> {
  const remote = new FakeRemote();
  const hub = new MessageHub({
    createRuntime: (_o: RuntimeOptions): ModuleRuntime => remote,
    limits: { lease_sweep_ms: 5 },
  });
  hubs.push(hub);
  await hub.registry.register(
    manifest('far', [{ name: 'echo' }, { name: 'slow', timeout_ms: 30 }], { runtime: { type: 'nats' } }),
    { baseDir: '.' },
  );
  return { hub, remote };
}

describe('forward handler (modules hosted elsewhere)', () => {
  it("sends the hub's envelope as it is and resolves with the remote reply's payload", async () => {
    const { hub, remote } = await remoteHub();
    const p = hub.request({ target: 'far.echo', payload: { x: 1 }, source: human, session_id: 's1' });
    await until(() => remote.sent.length === 1, 'the request');
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
  });

  it("fails with the remote reply's error code, and with the code of a transport rejection", async () => {
    const { hub, remote } = await remoteHub();
    const a = hub.request({ target: 'far.echo', payload: {}, source: human });
    await until(() => remote.sent.length === 1, 'the request');
    remote.sent[0]!.reply(null, { code: 'E_MODULE_ERROR', message: 'boom' });
    expect(await rejectionOf(a)).toMatchObject({ code: 'E_MODULE_ERROR', message: 'boom' });
    const b = hub.request({ target: 'far.echo', payload: {}, source: human });
    await until(() => remote.sent.length === 2, 'the second request');
    remote.sent[1]!.fail(new FingerError('E_NO_TARGET', 'no node serves "far.echo" in the cluster'));
    expect(await rejectionOf(b)).toMatchObject({ code: 'E_NO_TARGET' });
  });

  it('answers what forward() throws at once with its code, anything else with E_INTERNAL', async () => {
    const { hub, remote } = await remoteHub();
    remote.throwNext = new FingerError('E_OVERLOADED', 'too many');
    expect(await rejectionOf(hub.request({ target: 'far.echo', payload: {}, source: human }))).toMatchObject({
      code: 'E_OVERLOADED',
    });
    remote.throwNext = new TypeError('Do not know how to serialize a BigInt');
    expect(await rejectionOf(hub.request({ target: 'far.echo', payload: {}, source: human }))).toMatchObject({
      code: 'E_INTERNAL',
      message: 'Do not know how to serialize a BigInt',
    });
  });

  it("passes progress and lease extensions to the caller, and the hub's cancel to the remote", async () => {
    const { hub, remote } = await remoteHub();
    const progress: string[] = [];
    const p = hub.request({ target: 'far.slow', payload: {}, source: human, onProgress: (m) => progress.push(m) });
    await until(() => remote.sent.length === 1, 'the request');
    const s = remote.sent[0]!;
    s.hooks.onProgress?.('half', 0.5);
    s.hooks.onLeaseExtend?.(60_000);
    expect(progress).toEqual(['half']);
    expect(s.cancels).toEqual([]);
    s.reply('done');
    expect(await p).toBe('done');
    // the lease of 30 ms, not extended this time, expires: the remote gets the cancel
    const q = hub.request({ target: 'far.slow', payload: {}, source: human });
    expect(await rejectionOf(q)).toMatchObject({ code: 'E_LEASE_EXPIRED' });
    expect(remote.sent[1]!.cancels).toEqual(['E_LEASE_EXPIRED']);
  });
});

describe('NatsRuntime.forward', () => {
  function fakeTransport() {
    const requests: Envelope[] = [];
    const cancelled: [string, string][] = [];
    const transport: Transport & { cancelModule(module_id: string, reason: string): void } = {
      name: 'fake',
      serve: () => Promise.reject(new Error('not used')),
      request: (e) => {
        requests.push(e);
        return new Promise(() => undefined);
      },
      serves: () => false,
      close: async () => undefined,
      cancelModule: (module_id, reason) => cancelled.push([module_id, reason]),
    };
    return { transport, requests, cancelled };
  }

  it('hands the envelope to the transport; once closed, refuses with E_PROVIDER_CLOSED and cancels what is out', async () => {
    const { transport, requests, cancelled } = fakeTransport();
    const rt = new NatsRuntime({
      manifest: manifest('far', [{ name: 'echo' }], { runtime: { type: 'nats' } }),
      baseDir: '.',
      logger: silentLogger,
      onNotice: () => undefined,
      settings: {},
      transport,
      remoteHealth: () => ({ ok: true }),
    });
    const env = { id: 'x' } as Envelope;
    void rt.forward(env, {});
    expect(requests).toEqual([env]);
    expect(requests[0]).toBe(env);
    await rt.close();
    expect(cancelled).toEqual([['far', 'E_PROVIDER_CLOSED']]);
    expect(await rejectionOf(rt.forward(env, {}))).toMatchObject({ code: 'E_PROVIDER_CLOSED' });
  });
});

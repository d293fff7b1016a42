import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { connectNats, NatsTransport, serveKeyOf, WireAuth } from '@finger/hub/nats';
import type { Envelope, FingerEvent, Principal } from '@finger/protocol';
import { natsUrlForTests, requestEnvelope, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'test-cluster-key-0123456789abcdef';
const human: Principal = { kind: 'human', id: 'alice', roles: ['admin'] };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const member = (cluster: string, name: string, opts: { role?: 'daemon' | 'serve'; probe?: boolean } = {}) =>
  clusterMember({
    url: url!,
    cluster,
    name,
    key: KEY,
    cleanup,
    ...(opts.role ? { role: opts.role } : {}),
    ...(opts.probe ? { manifest: PROBE } : {}),
  });

/**
 * A daemon member joins `cluster` and waits until it has imported `module`: a node serves its
 * modules once another node's message proved its key, as a caller that joins does (the bare
 * transports below do not join).
 */
async function servedTo(cluster: string, module: string): Promise<void> {
  const peer = await member(cluster, 'peer');
  await until(() => peer.hub.registry.get(module));
}

function request(target: string, payload: unknown, deadline = Date.now() + 2000): Envelope {
  return requestEnvelope(target, payload, { deadline, source: human });
}

describe.skipIf(!url)('hub over NATS (two hubs, one process)', () => {
  it('imports a remote module and calls it through the local hub, with progress', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    const a = await member(cluster, 'a');
    await until(() => a.hub.registry.get('remote-probe'));
    expect(a.hub.registry.get('remote-probe')!.runtime).toBe('nats');
    expect(a.node.placement('remote-probe')).toMatchObject({
      location: 'remote',
      nodes: [{ node: 'b', role: 'daemon' }],
    });
    expect(b.node.placement('remote-probe')).toEqual({ location: 'local', nodes: [] });
    const r = (await a.hub.request({ target: 'remote-probe.where', payload: { x: 1 }, source: human })) as {
      echo: unknown;
    };
    expect(r.echo).toEqual({ x: 1 });
    const progress: string[] = [];
    const slow = await a.hub.request({
      target: 'remote-probe.slow',
      payload: { ms: 50 },
      source: human,
      onProgress: (m) => progress.push(m),
    });
    expect(slow).toMatchObject({ done: true });
    expect(progress).toEqual(['started']);
  });

  it('extends the lease from the remote side (heartbeats over NATS)', async () => {
    const cluster = testClusterName('hub');
    await member(cluster, 'b', { probe: true });
    const a = await member(cluster, 'a');
    await until(() => a.hub.registry.get('remote-probe'));
    const r = await a.hub.request({ target: 'remote-probe.beat', payload: { ms: 900 }, source: human });
    expect(r).toEqual({ beat: true });
  });

  it('fails past the deadline with E_TIMEOUT and cancels the remote call', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    const a = await member(cluster, 'a');
    await until(() => a.hub.registry.get('remote-probe'));
    await expect(
      a.hub.request({ target: 'remote-probe.slow', payload: { ms: 10_000 }, source: human, timeout_ms: 300 }),
    ).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    await until(() => b.node.transport.stats().serving === 0);
  });

  it('answers E_NO_TARGET when nobody serves the subject and E_INVALID_ARGS over max_payload', async () => {
    const cluster = testClusterName('hub');
    const a = await member(cluster, 'a');
    await expect(a.node.transport.request(request('ghost.tool', {}))).rejects.toMatchObject({ code: 'E_NO_TARGET' });
    const big = 'x'.repeat(a.nc.info!.max_payload);
    await expect(a.node.transport.request(request('ghost.tool', { big }))).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
    });
  });

  it('drops unauthenticated envelopes and refuses requests originated by a serve process', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    await servedTo(cluster, 'remote-probe');
    // a peer with the wrong key: its request is dropped (no reply, so it times out)
    const rogueNc = await connectNats({ url: url! });
    cleanup.push(() => rogueNc.drain());
    const rogue = new NatsTransport({
      connection: rogueNc,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'rogue', cluster_key: 'not-the-cluster-key-000000' }),
    });
    await expect(rogue.request(request('remote-probe.where', {}, Date.now() + 300))).rejects.toMatchObject({
      code: 'E_TIMEOUT',
    });
    await until(() => b.dropped.find((d) => d.reason === 'bad signature' && d.code === 'E_UNAUTHENTICATED'));
    // a serve process (serve key only) naming a human admin: refused with E_FORBIDDEN, never run
    const serveNc = await connectNats({ url: url! });
    cleanup.push(() => serveNc.drain());
    const serve = new NatsTransport({
      connection: serveNc,
      cluster,
      auth: new WireAuth({ role: 'serve', node: 'sneaky', serve_key: serveKeyOf(KEY, 'remote-probe') }),
    });
    const before = (await b.hub.request({ target: 'remote-probe.runs', payload: {}, source: human })) as {
      runs: number;
    };
    const reply = await serve.request(request('remote-probe.where', {}));
    expect(reply.error).toMatchObject({ code: 'E_FORBIDDEN' });
    expect(b.dropped).toContainEqual(
      expect.objectContaining({
        reason: 'request originated by a module serve process',
        node: 'sneaky',
        role: 'serve',
      }),
    );
    const after = (await b.hub.request({ target: 'remote-probe.runs', payload: {}, source: human })) as {
      runs: number;
    };
    expect(after.runs).toBe(before.runs);
    await rogue.close();
    await serve.close();
  });

  it('ignores a cancel sent by a serve process (it originates no call, so only someone else’s)', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    await servedTo(cluster, 'remote-probe');
    const nc = await connectNats({ url: url! });
    cleanup.push(() => nc.drain());
    const caller = new NatsTransport({
      connection: nc,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'caller', cluster_key: KEY }),
    });
    cleanup.push(() => caller.close());
    const env = request('remote-probe.slow', { ms: 300 });
    const reply = caller.request(env);
    await until(() => b.node.transport.stats().serving === 1);
    const evil = new WireAuth({ role: 'serve', node: 'evil', serve_key: serveKeyOf(KEY, 'remote-probe') });
    const cancel = `finger.${cluster}.cancel`;
    nc.publish(cancel, evil.sealJson(cancel, 'cancel', JSON.stringify({ id: env.id, reason: 'gotcha' })));
    await nc.flush();
    await until(() => b.dropped.find((d) => d.reason === 'cancel sent by a module serve process'));
    expect((await reply).payload).toMatchObject({ done: true });
  });

  it('bridges events between hubs once, keeping their ids, naming the node they came from', async () => {
    const cluster = testClusterName('hub');
    const a = await member(cluster, 'a');
    const b = await member(cluster, 'b');
    const seen: FingerEvent[] = [];
    a.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => seen.push(e));
    const sent = b.hub.events.emit('DEGRADED', {}, { component: 'test', n: 1 });
    await until(() => seen.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual([{ ...sent, origin: 'b' }]);
    // the emitting hub's own copy names no origin
    expect(sent).not.toHaveProperty('origin');
  });

  it('hands a JSON subscriber the remote line as sent (with its origin), unparsed, and keeps it for queries', async () => {
    const cluster = testClusterName('hub');
    const a = await member(cluster, 'a');
    const b = await member(cluster, 'b');
    const lines: [string, string][] = [];
    a.hub.events.subscribeJson({ types: ['DEGRADED'] }, (json, type) => lines.push([json, type]));
    const sent = b.hub.events.emit('DEGRADED', { request_id: 'r-json' }, { component: 'test', n: 4 });
    await until(() => lines.length > 0);
    const { id, type, ...rest } = sent;
    expect(lines).toEqual([[JSON.stringify({ id, type, origin: 'b', ...rest }), 'DEGRADED']]);
    expect(await a.hub.events.replay('r-json')).toEqual([{ ...sent, origin: 'b' }]);
  });

  it('drops a daemon line that is not the event its head names, once an object is wanted', async () => {
    const cluster = testClusterName('hub');
    const a = await member(cluster, 'a');
    const objects: FingerEvent[] = [];
    const lines: string[] = [];
    a.hub.events.subscribe({ types: ['HALTED'] }, (e) => objects.push(e));
    a.hub.events.subscribeJson({ types: ['HALTED'] }, (json) => lines.push(json));
    const good = JSON.stringify({ id: 'good-1', type: 'HALTED', ts: new Date().toISOString(), data: {} });
    // not JSON; a second id after the head's (JSON.parse keeps the last): neither is the event its head names
    const body = [
      '{"id":"bad-1","type":"HALTED",oops}',
      good.replace('good-1', 'bad-2').replace('"ts"', '"id":"bad-3","ts"'),
      good,
    ].join('\n');
    const peer = await connectNats({ url: url! });
    cleanup.push(() => peer.drain());
    const auth = new WireAuth({ role: 'daemon', node: 'peer', cluster_key: KEY });
    const subject = `finger.${cluster}.events.HALTED`;
    peer.publish(subject, auth.sealJson(subject, 'events', body, false));
    await until(() => objects.length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(objects.map((e) => e.id)).toEqual(['good-1']);
    expect(lines).toEqual([good.replace('"type":"HALTED",', '"type":"HALTED","origin":"peer",')]);
    expect(a.dropped).toEqual([
      expect.objectContaining({ reason: 'invalid event', node: 'peer' }),
      expect.objectContaining({ reason: 'invalid event', node: 'peer' }),
    ]);
  });

  it('lets a serve process send its module events to daemons without receiving the cluster events', async () => {
    const cluster = testClusterName('hub');
    const d = await member(cluster, 'd');
    const s = await member(cluster, 's', { role: 'serve', probe: true });
    const atDaemon: FingerEvent[] = [];
    const atServe: FingerEvent[] = [];
    d.hub.events.subscribe({ types: ['MODULE_HEALTH'] }, (e) => atDaemon.push(e));
    s.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => atServe.push(e));
    const sent = s.hub.events.emit('MODULE_HEALTH', { target: 'remote-probe' }, { id: 'remote-probe', ok: true });
    d.hub.events.emit('DEGRADED', {}, { component: 'test', n: 3 });
    await until(() => atDaemon.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(atDaemon).toEqual([{ ...sent, origin: 's' }]);
    expect(atServe).toEqual([]);
    expect(s.node.bridge!.stats()).toMatchObject({ received: 0 });
    expect(d.dropped).toEqual([]);
    expect(s.dropped).toEqual([]);
  });

  it('does not send a remote event back, but does send one a listener emits on receiving it', async () => {
    const cluster = testClusterName('hub');
    const a = await member(cluster, 'a');
    const b = await member(cluster, 'b');
    const derived: FingerEvent[] = [];
    // a reacts to the remote event by emitting its own (synchronously, during the delivery)
    a.hub.events.subscribe({ types: ['DEGRADED'] }, () => a.hub.events.emit('MODULE_HEALTH', {}, { module: 'x' }));
    b.hub.events.subscribe({ types: ['MODULE_HEALTH'] }, (e) => derived.push(e));
    b.hub.events.emit('DEGRADED', {}, { component: 'test', n: 2 });
    await until(() => derived.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(derived.map((e) => e.data)).toEqual([{ module: 'x' }]);
    expect(a.node.bridge!.stats()).toMatchObject({ sent: 1, received: 1 });
  });

  it('imports a remote module once the local module of its id that won over it is unregistered, and back', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    const a = await member(cluster, 'a', { probe: true });
    await until(() => b.node.registry.get('remote-probe')?.nodes.has('a'));
    await until(() => a.node.registry.get('remote-probe')?.nodes.has('b'));
    expect(a.node.placement('remote-probe')).toEqual({ location: 'local', nodes: [] });
    await a.hub.registry.unregister('remote-probe');
    await until(() => a.hub.registry.get('remote-probe')?.runtime === 'nats' && a.hub.tools.get('remote-probe.where'));
    expect(a.node.placement('remote-probe')).toMatchObject({ location: 'remote', nodes: [{ node: 'b' }] });
    const r = (await a.hub.request({ target: 'remote-probe.where', payload: { n: 1 }, source: human })) as {
      echo: unknown;
    };
    expect(r.echo).toEqual({ n: 1 });
    // and a local module of the id takes the place of the imported one again
    await a.hub.registry.loadFile(PROBE);
    expect(a.node.placement('remote-probe')).toEqual({ location: 'local', nodes: [] });
    await new Promise((r) => setTimeout(r, 100));
    expect(a.hub.registry.get('remote-probe')?.runtime).toBe('inprocess');
  });

  it('marks a remote module unhealthy when its heartbeats stop', async () => {
    const cluster = testClusterName('hub');
    const b = await member(cluster, 'b', { probe: true });
    const a = await member(cluster, 'a');
    await until(() => a.hub.registry.get('remote-probe'));
    // silence b's heartbeats without a bye: stop its registry timer by closing the connection
    await b.nc.close();
    await until(() => a.hub.registry.get('remote-probe')?.healthy === false, 5000);
    await expect(a.hub.request({ target: 'remote-probe.where', payload: {}, source: human })).rejects.toMatchObject({
      code: 'E_MODULE_UNHEALTHY',
    });
  });
});

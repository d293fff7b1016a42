// A call in flight to a module whose every node fell silent (died, or this daemon lost NATS):
// it fails with E_MODULE_UNHEALTHY once the module is unhealthy, not at its deadline. A node that
// stops answers what it took within its drain time (even while a dead peer makes the module look
// unhealthy), and past it answers E_PROVIDER_CLOSED at once.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { connect, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { createRuntime, LocalEventBus, MessageHub } from '@finger/hub';
import { ClusterNode, runtimeSwitch, serveKeyOf, startModuleServer, WireAuth } from '@finger/hub/nats';
import type { ModuleManifest, Principal } from '@finger/protocol';
import { ManualClock, natsUrlForTests, testClusterName, waitFor } from '@finger/testkit';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'lost-node-test-key-0123456789abcdef';
const human: Principal = { kind: 'human', id: 'tester', roles: ['operator'] };

const far: ModuleManifest = {
  id: 'far',
  name: 'far',
  version: '1.0.0',
  kind: 'tool',
  runtime: { type: 'nats' },
  tools: [{ name: 'slow', description: 'answers late' }],
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function conn(): Promise<NatsConnection> {
  const nc = await connect({ servers: url!, noAsyncTraces: true });
  cleanup.push(() => nc.drain());
  return nc;
}

/**
 * A daemon-side hub that imports the cluster's modules (heartbeats every 100 ms, unhealthy after
 * 300 ms), judging silence by `clock` (the real one unless a test moves time itself).
 */
async function importer(cluster: string, clock?: ManualClock) {
  const rs = runtimeSwitch(createRuntime);
  const hub = new MessageHub({ createRuntime: rs.create, events: new LocalEventBus() });
  cleanup.push(() => hub.close(0));
  const node = new ClusterNode({
    hub,
    connection: await conn(),
    cluster,
    auth: new WireAuth({ role: 'daemon', node: 'caller', cluster_key: KEY }),
    importRemote: true,
    bridgeEvents: false,
    heartbeat_ms: 100,
    unhealthy_after_ms: 300,
    ...(clock ? { clock } : {}),
  });
  rs.bind(node);
  await node.start();
  cleanup.push(() => node.close());
  return hub;
}

/** A `module serve` host of the remote-probe fixture on `cluster` (heartbeat 100 ms). */
async function serveProbe(cluster: string) {
  const server = await startModuleServer({
    manifestFile: PROBE,
    nats: { url: url! },
    cluster,
    serve_key: serveKeyOf(KEY, 'remote-probe'),
    heartbeat_ms: 100,
  });
  cleanup.push(() => server.close(0));
  return server;
}

/** Waits (bounded) until `fn` holds. */
const until = (what: string, fn: () => boolean) => waitFor(what, async () => (fn() ? true : undefined));

/** A call to the remote-probe's `slow` tool, and a promise settled once the module has started it. */
function slowCall(hub: MessageHub, ms: number) {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const call = hub.request({
    target: 'remote-probe.slow',
    payload: { ms },
    source: human,
    timeout_ms: 30_000,
    onProgress: (message) => {
      if (message === 'started') started();
    },
  });
  return { call, running };
}

describe.skipIf(!url)('a call in flight when the module’s nodes fall silent', () => {
  it('fails with E_MODULE_UNHEALTHY (outcome unknown) once no node is heard of, long before its deadline', async () => {
    const cluster = testClusterName('lost');
    const hub = await importer(cluster);

    // a node that takes the module's calls and never answers, and announces it until it "dies"
    const remote = await conn();
    const taken: string[] = [];
    remote.subscribe(`finger.${cluster}.call.far`, { queue: 'q.far', callback: (_e, m) => taken.push(m.subject) });
    await remote.flush();
    const auth = new WireAuth({ role: 'daemon', node: 'remote', cluster_key: KEY });
    const beat = () =>
      remote.publish(
        `finger.${cluster}.registry.hb`,
        auth.sealJson(`finger.${cluster}.registry.hb`, 'hb', JSON.stringify({ node: 'remote', modules: [far] })),
      );
    beat();
    const beating = setInterval(beat, 100);
    cleanup.push(async () => clearInterval(beating));
    await until('far announced', () => hub.registry.get('far') !== undefined);
    expect(hub.registry.get('far')).toMatchObject({ runtime: 'nats', healthy: true });

    const call = hub.request({ target: 'far.slow', payload: {}, source: human, timeout_ms: 60_000 });
    const outcome = call.then(
      () => 'answered',
      (e: { code?: string; details?: unknown }) => e,
    );
    await until('the call taken by the node', () => taken.length > 0);
    expect(taken).toHaveLength(1);
    clearInterval(beating); // the node dies: no more heartbeats, no reply

    expect(await outcome).toMatchObject({ code: 'E_MODULE_UNHEALTHY', details: { module: 'far', outcome: 'unknown' } });
    expect(hub.stats()).toMatchObject({ inflight: 0 });
  });
  it('a serve host that stops answers what it took within its drain, though a dead peer makes the module unhealthy', async () => {
    const cluster = testClusterName('drain');
    const hub = await importer(cluster);
    const server = await serveProbe(cluster);
    // a dead peer of the module: announced once, silent since (not forgotten yet)
    const peer = await conn();
    const manifest = JSON.parse(readFileSync(PROBE, 'utf8')) as ModuleManifest;
    peer.publish(
      `finger.${cluster}.registry.hb`,
      new WireAuth({ role: 'daemon', node: 'dead-peer', cluster_key: KEY }).sealJson(
        `finger.${cluster}.registry.hb`,
        'hb',
        JSON.stringify({ node: 'dead-peer', modules: [{ ...manifest, runtime: { type: 'nats' } }] }),
      ),
    );
    await until('remote-probe healthy', () => hub.registry.get('remote-probe')?.healthy === true);
    expect(hub.registry.get('remote-probe')).toMatchObject({ runtime: 'nats', healthy: true });
    const { call, running } = slowCall(hub, 1500);
    await running;
    // it stops with a 5 s drain: the call (1.5 s) ends within it and its answer arrives
    await server.close(5000);
    expect(await call).toMatchObject({ done: true });
  });

  it('past its drain a stopping serve host answers E_PROVIDER_CLOSED at once and cancels the call', async () => {
    const cluster = testClusterName('drained');
    const hub = await importer(cluster);
    const server = await serveProbe(cluster);
    await until('remote-probe healthy', () => hub.registry.get('remote-probe')?.healthy === true);
    const { call, running } = slowCall(hub, 20_000);
    const outcome = call.then(
      () => 'answered',
      (e: { code?: string }) => e.code,
    );
    await running;
    await server.close(300);
    expect(await outcome).toBe('E_PROVIDER_CLOSED');
  });
  it('judges a node by the heartbeat period it announces when that is longer than the daemon’s', async () => {
    const cluster = testClusterName('slowbeat');
    // silence is measured on the test's clock: exact, however late the heartbeats are delivered
    const clock = new ManualClock();
    const hub = await importer(cluster, clock); // unhealthy after 300 ms of silence…
    const remote = await conn();
    const auth = new WireAuth({ role: 'daemon', node: 'slow-beater', cluster_key: KEY });
    const beat = (hb_ms: number) =>
      remote.publish(
        `finger.${cluster}.registry.hb`,
        auth.sealJson(
          `finger.${cluster}.registry.hb`,
          'hb',
          JSON.stringify({ node: 'slow-beater', hb_ms, modules: [far] }),
        ),
      );
    const healthy = async () => (await hub.registry.checkHealth('far')).healthy;
    // …but this node beats every 1000 ms and says so: silent for less than three of its beats, it is healthy
    beat(1000);
    await until('far announced', () => hub.registry.get('far') !== undefined);
    clock.advance(2999);
    expect(await healthy()).toBe(true);
    clock.advance(2);
    expect(await healthy()).toBe(false);
    // a period outside 100 ms–10 min is not believed: judged by the daemon's own 300 ms
    beat(99_999_999);
    await waitFor('the second heartbeat', async () => ((await healthy()) ? true : undefined));
    clock.advance(299);
    expect(await healthy()).toBe(true);
    clock.advance(2);
    expect(await healthy()).toBe(false);
  });
});

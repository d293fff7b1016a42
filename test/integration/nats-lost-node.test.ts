// A call in flight to a module whose every node fell silent (died, or this daemon lost NATS):
// it fails with E_MODULE_UNHEALTHY once the module is unhealthy, not at its deadline.
import { connect, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { createRuntime, LocalEventBus, MessageHub } from '@finger/hub';
import { ClusterNode, runtimeSwitch, WireAuth } from '@finger/hub/nats';
import type { ModuleManifest, Principal } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

const url = await natsUrlForTests();
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

describe.skipIf(!url)('a call in flight when the module’s nodes fall silent', () => {
  it('fails with E_MODULE_UNHEALTHY (outcome unknown) once no node is heard of, long before its deadline', async () => {
    const cluster = testClusterName('lost');
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
    });
    rs.bind(node);
    await node.start();
    cleanup.push(() => node.close());

    // a node that takes the module's calls and never answers, and announces it until it "dies"
    const remote = await conn();
    const taken: string[] = [];
    remote.subscribe(`finger.${cluster}.call.far`, { queue: 'q.far', callback: (_e, m) => taken.push(m.subject) });
    await remote.flush();
    const auth = new WireAuth({ role: 'daemon', node: 'remote', cluster_key: KEY });
    const beat = () =>
      remote.publish(
        `finger.${cluster}.registry.hb`,
        auth.sealJson('hb', JSON.stringify({ node: 'remote', modules: [far] })),
      );
    beat();
    const beating = setInterval(beat, 100);
    cleanup.push(async () => clearInterval(beating));
    for (let i = 0; i < 300 && hub.registry.get('far') === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(hub.registry.get('far')).toMatchObject({ runtime: 'nats', healthy: true });

    const call = hub.request({ target: 'far.slow', payload: {}, source: human, timeout_ms: 60_000 });
    const outcome = call.then(
      () => 'answered',
      (e: { code?: string; details?: unknown }) => e,
    );
    for (let i = 0; i < 300 && taken.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(taken).toHaveLength(1);
    clearInterval(beating); // the node dies: no more heartbeats, no reply

    expect(await outcome).toMatchObject({ code: 'E_MODULE_UNHEALTHY', details: { module: 'far', outcome: 'unknown' } });
    expect(hub.stats()).toMatchObject({ inflight: 0 });
  });
});

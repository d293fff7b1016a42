// An attacker holding a `module serve` host (serve key, NATS credentials) names a daemon's node
// id in registry messages: node ids are not bound to a key, so its `bye` (or a heartbeat listing
// nothing) made every daemon forget that daemon's modules — their imports unregistered, calls
// failing — at each message. A node heard signing with the cluster key cannot be spoken for by a
// serve host: such messages are dropped and reported.
import { fileURLToPath } from 'node:url';

import type { NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { connectNats, serveKeyOf, WireAuth } from '@finger/hub/nats';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'attack-node-claim-key-0123456789';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const daemon = (cluster: string, name: string, probe: boolean, heartbeat_ms: number) =>
  clusterMember({
    url: url!,
    cluster,
    name,
    key: KEY,
    cleanup,
    ...(probe ? { manifest: PROBE } : {}),
    // B heartbeats slowly: nothing it says undoes the attack before it is checked
    extra: { heartbeat_ms, unhealthy_after_ms: 60_000 },
  });

describe.skipIf(!url)("a serve host naming a daemon's node id in the registry", () => {
  it.each(['bye', 'hb'] as const)("cannot make the daemons forget that daemon's modules (%s)", async (kind) => {
    const cluster = testClusterName('atk-node');
    await daemon(cluster, 'daemon-b', true, 10_000);
    const a = await daemon(cluster, 'daemon-a', false, 200);
    await until(() => a.hub.registry.get('remote-probe'));
    expect(a.node.placement('remote-probe').nodes.map((n) => n.node)).toEqual(['daemon-b']);

    const nc: NatsConnection = await connectNats({ url: url! });
    cleanup.push(() => nc.drain());
    const evil = new WireAuth({ role: 'serve', node: 'daemon-b', serve_key: serveKeyOf(KEY, 'evil-mod') });
    const body = kind === 'bye' ? { node: 'daemon-b', drain_ms: 0 } : { node: 'daemon-b', hb_ms: 10_000, modules: [] };
    const subject = `finger.${cluster}.registry.${kind}`;
    nc.publish(subject, evil.sealJson(subject, kind, JSON.stringify(body)));
    // then an unsigned message on the same subject: once A reports it, A has read the claim
    nc.publish(`finger.${cluster}.registry.${kind}`, Buffer.from('not a frame'));
    await nc.flush();
    await until(() => a.dropped.find((d) => d.reason === 'unsigned message (no frame)'));

    expect(a.node.placement('remote-probe').nodes.map((n) => n.node)).toEqual(['daemon-b']);
    expect(a.node.registry.get('remote-probe')).toBeDefined();
    expect(a.dropped).toContainEqual(
      expect.objectContaining({
        reason: 'a serve host names the node id of a daemon',
        node: 'daemon-b',
        role: 'serve',
      }),
    );
  });

  it("cannot pass its events off as that daemon's", async () => {
    const cluster = testClusterName('atk-node');
    await daemon(cluster, 'daemon-b', true, 200);
    const a = await daemon(cluster, 'daemon-a', false, 200);
    await until(() => a.node.registry.isDaemonNode('daemon-b'));
    const seen: string[] = [];
    a.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => seen.push(e.origin ?? ''));
    const nc: NatsConnection = await connectNats({ url: url! });
    cleanup.push(() => nc.drain());
    const line = (node: string) =>
      JSON.stringify({ id: `ev-${node}`, type: 'DEGRADED', ts: new Date().toISOString(), data: { component: 'x' } });
    const as = (node: string) => new WireAuth({ role: 'serve', node, serve_key: serveKeyOf(KEY, 'evil-mod') });
    const subject = `finger.${cluster}.events.DEGRADED`;
    nc.publish(subject, as('daemon-b').sealJson(subject, 'events', line('daemon-b'), false));
    // the same from a node id no daemon has: delivered (so the drop above is the node claim)
    nc.publish(subject, as('serve-x').sealJson(subject, 'events', line('serve-x'), false));
    await nc.flush();
    await until(() => seen.length > 0 && a.dropped.length > 0);
    expect(seen).toEqual(['serve-x']);
    expect(a.dropped).toContainEqual(
      expect.objectContaining({
        reason: 'a serve host names the node id of a daemon',
        node: 'daemon-b',
        role: 'serve',
      }),
    );
  });
});

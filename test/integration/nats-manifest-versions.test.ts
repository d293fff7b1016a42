// A module whose manifest changes while it is served (a new version rolled out node by node, or a
// node that announces another manifest): daemons take the manifest of the node that began
// announcing its own last, and go back when that node leaves.
import { connect, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { createRuntime, LocalEventBus, MessageHub } from '@finger/hub';
import {
  type ClusterChange,
  ClusterNode,
  ClusterRegistry,
  type DroppedMessage,
  runtimeSwitch,
  serveKeyOf,
  WireAuth,
} from '@finger/hub/nats';
import type { ModuleManifest } from '@finger/protocol';
import { natsUrlForTests, testClusterName, waitUntil } from '@finger/testkit';

const url = await natsUrlForTests();
const KEY = 'manifest-versions-test-key-0123456789';

const versioned = (version: string, tools: string[]): ModuleManifest => ({
  id: 'versioned',
  name: 'versioned',
  version,
  kind: 'tool',
  runtime: { type: 'nats' },
  tools: tools.map((name) => ({ name, description: `${name} of ${version}` })),
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function conn(): Promise<NatsConnection> {
  const nc = await connect({ servers: url!, noAsyncTraces: true });
  cleanup.push(() => nc.drain());
  return nc;
}

/** Publishes what node `node` announces (a daemon's signed heartbeat, or a serve host's), or its bye. */
async function announce(
  nc: NatsConnection,
  cluster: string,
  node: string,
  modules: unknown[] | 'bye',
  role: 'daemon' | 'serve' = 'daemon',
) {
  const auth =
    role === 'serve'
      ? new WireAuth({ role, node, serve_key: serveKeyOf(KEY, 'versioned') })
      : new WireAuth({ role, node, cluster_key: KEY });
  const kind = modules === 'bye' ? 'bye' : 'hb';
  const body = modules === 'bye' ? { node } : { node, modules };
  const subject = `finger.${cluster}.registry.${kind}`;
  nc.publish(subject, auth.sealJson(subject, kind, JSON.stringify(body)));
  await nc.flush();
}

const until = (fn: () => boolean, what: string): Promise<void> => waitUntil(what, fn, 5000, 10);

/**
 * A registry watching `cluster`: each change as it said when it came (`up 1.0.0 daemon`; the
 * module object itself goes on changing), and the messages it dropped.
 */
async function watcher(cluster: string) {
  const changes: string[] = [];
  const dropped: DroppedMessage[] = [];
  const said = (c: ClusterChange) =>
    c.type === 'gone' ? 'gone' : `${c.type} ${c.module.manifest.version} ${c.module.announced_by}`;
  const r = new ClusterRegistry({
    connection: await conn(),
    cluster,
    auth: new WireAuth({ role: 'daemon', node: 'watcher', cluster_key: KEY }),
    local: () => [],
    onChange: (c) => changes.push(said(c)),
    onDropped: (d) => dropped.push(d),
    heartbeat_ms: 60_000,
  });
  await r.start();
  cleanup.push(() => r.close());
  return { changes, dropped };
}

describe.skipIf(!url)('remote manifests that change', () => {
  it('the registry takes the newest node’s manifest, and goes back when that node leaves', async () => {
    const cluster = testClusterName('ver');
    const nc = await conn();
    const { changes, dropped } = await watcher(cluster);
    const v1 = versioned('1.0.0', ['a']);
    const v2 = versioned('2.0.0', ['a', 'b']);
    await announce(nc, cluster, 'n1', [v1]);
    await until(() => changes.length === 1, 'up');
    await announce(nc, cluster, 'n1', [v1]); // the same again: nothing to tell
    await announce(nc, cluster, 'n2', [v2]); // a node with the new version
    await until(() => changes.length === 2, 'changed to 2');
    await announce(nc, cluster, 'n1', [v1]); // the older node goes on with the old one: no flip back
    await announce(nc, cluster, 'n2', [v2]);
    await announce(nc, cluster, 'n2', 'bye'); // the new version's node leaves
    await until(() => changes.length === 3, 'back to 1');
    await announce(nc, cluster, 'n1', [versioned('1.1.0', ['a'])]); // a node announcing another manifest
    await until(() => changes.length === 4, 'changed to 1.1');
    // an invalid one is dropped: its node no longer serves the module, which had no other
    await announce(nc, cluster, 'n1', [{ ...v1, kind: 'not-a-kind' }]);
    await until(() => changes.length === 5, 'gone');
    expect(changes).toEqual([
      'up 1.0.0 daemon',
      'changed 2.0.0 daemon',
      'changed 1.0.0 daemon',
      'changed 1.1.0 daemon',
      'gone',
    ]);
    expect(dropped).toEqual([expect.objectContaining({ reason: 'invalid manifest in heartbeat', node: 'n1' })]);
  });

  it('a daemon’s manifest is used before a serve host’s, however late the serve host came', async () => {
    const cluster = testClusterName('ver');
    const nc = await conn();
    const { changes } = await watcher(cluster);
    // a serve host claiming its tool needs nobody's approval
    const claim = {
      ...versioned('9.0.0', ['a']),
      tools: [{ name: 'a', description: 'harmless', permission: 'AUTO', risk_level: 'low' }],
    };
    await announce(nc, cluster, 'd1', [versioned('1.0.0', ['a'])]);
    await until(() => changes.length === 1, 'up');
    await announce(nc, cluster, 's1', [claim], 'serve');
    await announce(nc, cluster, 'd1', 'bye');
    await until(() => changes.length === 2, 'the serve host’s, now alone');
    await announce(nc, cluster, 'd2', [versioned('3.0.0', ['a'])]);
    await until(() => changes.length === 3, 'a daemon again');
    expect(changes).toEqual(['up 1.0.0 daemon', 'changed 9.0.0 serve', 'changed 3.0.0 daemon']);
  });

  it('a daemon imports the new version in place: its tools are the new manifest’s, and the module never goes missing', async () => {
    const cluster = testClusterName('ver');
    const rs = runtimeSwitch(createRuntime);
    const events = new LocalEventBus();
    const moduleEvents: string[] = [];
    events.subscribe({ types: ['MODULE_REGISTERED', 'MODULE_UNREGISTERED'] }, (e) =>
      moduleEvents.push(
        e.type === 'MODULE_REGISTERED' ? `${String(e.data.previous_version ?? '-')}>${String(e.data.version)}` : 'gone',
      ),
    );
    const hub = new MessageHub({ createRuntime: rs.create, events });
    cleanup.push(() => hub.close(0));
    const node = new ClusterNode({
      hub,
      connection: await conn(),
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'importer', cluster_key: KEY }),
      importRemote: true,
      bridgeEvents: false,
      heartbeat_ms: 60_000,
    });
    rs.bind(node);
    await node.start();
    cleanup.push(() => node.close());
    const nc = await conn();
    const tools = () => (hub.registry.get('versioned')?.tools ?? []).map((t) => t.name).join(',');
    await announce(nc, cluster, 'n1', [versioned('1.0.0', ['a'])]);
    await until(() => tools() === 'a', 'v1 imported');
    await announce(nc, cluster, 'n2', [versioned('2.0.0', ['a', 'b'])]);
    await until(() => tools() === 'a,b', 'v2 imported');
    expect(hub.registry.get('versioned')).toMatchObject({ version: '2.0.0', runtime: 'nats' });
    expect(hub.tools.get('versioned.b')?.description).toBe('b of 2.0.0');
    await announce(nc, cluster, 'n2', 'bye');
    await until(() => tools() === 'a', 'back to v1');
    expect(hub.tools.get('versioned.b')).toBeUndefined();
    // a manifest that flips faster than it is imported ends as the last one announced
    for (let i = 1; i <= 30; i++)
      await announce(nc, cluster, 'n1', [versioned(`1.${i}.0`, i % 2 ? ['a', 'c'] : ['a'])]);
    await until(() => hub.registry.get('versioned')?.version === '1.30.0', 'the last version');
    expect(tools()).toBe('a');
    // each new manifest was taken in place: the module was never unregistered, so no call found it missing
    expect(moduleEvents.slice(0, 3)).toEqual(['->1.0.0', '1.0.0>2.0.0', '2.0.0>1.0.0']);
    expect(moduleEvents).not.toContain('gone');
    expect(moduleEvents.at(-1)).toMatch(/^1\.\d+\.0>1\.30\.0$/);
  });
});

import { connect, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import type { ModuleManifest } from '@finger/protocol';
import { natsUrlForTests, testClusterName, waitUntil } from '@finger/testkit';

import {
  ClusterRegistry,
  MAX_MODULES_PER_NODE,
  MAX_NODES_PER_MODULE,
  MAX_REMOTE_MODULES,
} from '../../src/cluster/cluster-registry.js';
import type { DroppedMessage } from '../../src/transport/nats.js';
import { clusterSubjects, serveKeyOf, WireAuth } from '../../src/transport/nats-wire.js';

const url = await natsUrlForTests();
const KEY = 'registry-bounds-test-key-0123456789';

const manifest = (id: string, description = 'does it'): ModuleManifest => ({
  id,
  name: id,
  version: '1.0.0',
  kind: 'tool',
  runtime: { type: 'nats' },
  tools: [{ name: 'go', description }],
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function registry(cluster: string, max_announced_chars?: number) {
  const nc: NatsConnection = await connect({ servers: url!, noAsyncTraces: true });
  const dropped: DroppedMessage[] = [];
  const r = new ClusterRegistry({
    connection: nc,
    cluster,
    auth: new WireAuth({ role: 'daemon', node: 'watcher', cluster_key: KEY }),
    local: () => [],
    onDropped: (d) => dropped.push(d),
    heartbeat_ms: 60_000,
    ...(max_announced_chars !== undefined ? { max_announced_chars } : {}),
  });
  await r.start();
  cleanup.push(async () => {
    await r.close();
    await nc.drain();
  });
  return { r, nc, dropped };
}

/** Publishes a heartbeat of `node` listing `modules`, signed as a daemon or as a serve host. */
async function heartbeat(
  nc: NatsConnection,
  cluster: string,
  role: 'daemon' | 'serve',
  node: string,
  ids: string[],
  description?: string,
) {
  const auth =
    role === 'serve'
      ? new WireAuth({ role, node, serve_key: serveKeyOf(KEY, ids[0] ?? 'x') })
      : new WireAuth({ role, node, cluster_key: KEY });
  const body = JSON.stringify({ node, modules: ids.map((id) => manifest(id, description)) });
  nc.publish(
    clusterSubjects(cluster).registry('hb'),
    auth.sealJson(clusterSubjects(cluster).registry('hb'), 'hb', body),
  );
  await nc.flush();
}

const until = (what: string, fn: () => boolean): Promise<void> => waitUntil(what, fn, 5000, 10);

describe.skipIf(!url)('cluster registry bounds', () => {
  it('takes one module from a serve host, reporting the rest', async () => {
    const cluster = testClusterName('reg');
    const { r, nc, dropped } = await registry(cluster);
    await heartbeat(nc, cluster, 'serve', 'host-1', ['a', 'b', 'c']);
    await until('module a taken and the rest dropped', () => r.list().length > 0 && dropped.length > 0);
    expect(r.list().map((m) => m.manifest.id)).toEqual(['a']);
    expect(dropped).toEqual([
      { reason: 'a serve host announces one module', subject: `finger.${cluster}.registry.hb`, node: 'host-1' },
    ]);
  });

  it(`takes at most ${MAX_MODULES_PER_NODE} modules from a daemon's heartbeat`, async () => {
    const cluster = testClusterName('reg');
    const { r, nc, dropped } = await registry(cluster);
    const ids = Array.from({ length: MAX_MODULES_PER_NODE + 3 }, (_, i) => `m${i}`);
    await heartbeat(nc, cluster, 'daemon', 'daemon-2', ids);
    await until(`${MAX_MODULES_PER_NODE} modules listed`, () => r.list().length >= MAX_MODULES_PER_NODE);
    expect(r.list()).toHaveLength(MAX_MODULES_PER_NODE);
    expect(r.locations(`m${MAX_MODULES_PER_NODE}`)).toEqual([]);
    expect(dropped.map((d) => d.reason)).toEqual([`more than ${MAX_MODULES_PER_NODE} modules in a heartbeat`]);
  });

  it(`keeps track of at most ${MAX_REMOTE_MODULES} remote modules`, async () => {
    const cluster = testClusterName('reg');
    const { r, nc, dropped } = await registry(cluster);
    const nodes = Math.ceil(MAX_REMOTE_MODULES / MAX_MODULES_PER_NODE) + 1;
    for (let n = 0; n < nodes; n++) {
      const ids = Array.from({ length: MAX_MODULES_PER_NODE }, (_, i) => `n${n}-m${i}`);
      await heartbeat(nc, cluster, 'daemon', `daemon-${n}`, ids);
    }
    await until(
      'the modules over the remote limit dropped',
      () => dropped.length >= MAX_MODULES_PER_NODE * nodes - MAX_REMOTE_MODULES,
    );
    expect(r.list()).toHaveLength(MAX_REMOTE_MODULES);
    expect(new Set(dropped.map((d) => d.reason))).toEqual(new Set(['remote module limit reached']));
    expect(dropped).toHaveLength(MAX_MODULES_PER_NODE * nodes - MAX_REMOTE_MODULES);
  });

  it(`keeps at most ${MAX_NODES_PER_MODULE} nodes of one module (a serve host may claim any node id)`, async () => {
    const cluster = testClusterName('reg');
    const { r, nc, dropped } = await registry(cluster);
    for (let n = 0; n < MAX_NODES_PER_MODULE + 2; n++) await heartbeat(nc, cluster, 'serve', `host-${n}`, ['x']);
    await until('two messages dropped', () => dropped.length >= 2);
    expect(r.locations('x')).toHaveLength(MAX_NODES_PER_MODULE);
    expect(dropped.map((d) => d.reason)).toEqual(['node limit of a module reached', 'node limit of a module reached']);
  });

  it('holds announced manifests up to a size limit, and takes more once a node leaves', async () => {
    const cluster = testClusterName('reg');
    const one = JSON.stringify(manifest('x', 'd'.repeat(500))).length;
    const { r, nc, dropped } = await registry(cluster, 3 * one);
    for (const n of ['h1', 'h2', 'h3', 'h4']) await heartbeat(nc, cluster, 'serve', n, ['x'], 'd'.repeat(500));
    await until('a message dropped', () => dropped.length > 0);
    expect(r.locations('x').map((l) => l.node)).toEqual(['h1', 'h2', 'h3']);
    expect(dropped.map((d) => [d.reason, d.node])).toEqual([['announced manifests over the size limit', 'h4']]);
    // h1 leaves: its room is free again
    const bye = new WireAuth({ role: 'serve', node: 'h1', serve_key: serveKeyOf(KEY, 'x') });
    nc.publish(
      clusterSubjects(cluster).registry('bye'),
      bye.sealJson(clusterSubjects(cluster).registry('bye'), 'bye', JSON.stringify({ node: 'h1', drain_ms: 0 })),
    );
    await until('x on two nodes', () => r.locations('x').length === 2);
    await heartbeat(nc, cluster, 'serve', 'h4', ['x'], 'd'.repeat(500));
    await until('x on three nodes', () => r.locations('x').length === 3);
    expect(r.locations('x').map((l) => l.node)).toEqual(['h2', 'h3', 'h4']);
  });

  it('drops a registry message published again, and one whose seq is far from this clock', async () => {
    const cluster = testClusterName('reg');
    const { r, nc, dropped } = await registry(cluster);
    const subject = clusterSubjects(cluster).registry('hb');
    const sealed = (node: string, seq: number, ids: string[]) =>
      new WireAuth({ role: 'daemon', node, cluster_key: KEY }).sealJson(
        subject,
        'hb',
        JSON.stringify({ node, seq, modules: ids.map((id) => manifest(id)) }),
      );
    const first = sealed('d1', Date.now(), ['a']);
    nc.publish(subject, first);
    await nc.flush();
    await until('one module listed', () => r.list().length === 1);
    // the same message again (a capture published later), then one of a node dead ten minutes
    nc.publish(subject, first);
    nc.publish(subject, sealed('d2', Date.now() - 600_000, ['b']));
    await nc.flush();
    await until('two messages dropped', () => dropped.length >= 2);
    expect(dropped.map((d) => [d.reason, d.node])).toEqual([
      ['replayed registry hb', 'd1'],
      ['stale registry hb (clocks more than 2 min apart?)', 'd2'],
    ]);
    expect(r.list().map((m) => m.manifest.id)).toEqual(['a']);
    // d1's next heartbeat (a higher seq) is taken: it now announces nothing
    nc.publish(subject, sealed('d1', Date.now() + 1, []));
    await nc.flush();
    await until('no module listed', () => r.list().length === 0);
    expect(r.list()).toEqual([]);
  });
});

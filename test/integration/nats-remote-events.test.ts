import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createRuntime, LocalEventBus, MessageHub } from '@finger/hub';
import { ClusterNode, connectNats, runtimeSwitch, WireAuth } from '@finger/hub/nats';
import type { FingerEvent } from '@finger/protocol';
import {
  binaryForTests,
  natsServerBinary,
  type NatsServerChild,
  startConfiguredNats,
  testClusterName,
  waitFor,
} from '@finger/testkit';

// The events a node sends in one turn leave in batches per type: on a server with a small
// max_payload a batch must be cut to fit (nats.js refuses a publish over it, and the whole batch
// was lost), and an event that alone does not fit is dropped and counted, not its neighbours.
const bin = binaryForTests(
  natsServerBinary(),
  'NATS remote event batch tests',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

const KEY = 'nats-remote-events-key-0123456789';
const MAX_PAYLOAD = 4096;

describe.skipIf(bin === undefined)('event batches under a small max_payload', () => {
  let server: NatsServerChild | undefined;
  const cleanup: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startConfiguredNats(bin!, `max_payload: ${MAX_PAYLOAD}\n`);
  });
  afterAll(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
    server?.stop();
  });

  async function member(cluster: string, name: string) {
    const rs = runtimeSwitch(createRuntime);
    const hub = new MessageHub({ createRuntime: rs.create, events: new LocalEventBus() });
    const nc = await connectNats({ url: server!.url });
    const node = new ClusterNode({
      hub,
      connection: nc,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: name, cluster_key: KEY }),
      importRemote: true,
      bridgeEvents: true,
      heartbeat_ms: 200,
      unhealthy_after_ms: 600,
    });
    rs.bind(node);
    await node.start();
    cleanup.push(async () => {
      await node.close();
      await hub.close(0);
      await nc.drain();
    });
    return { hub, node };
  }

  it('delivers every event of a turn whose batch is larger than max_payload, in order', async () => {
    const cluster = testClusterName('evbatch');
    const a = await member(cluster, 'ev-a');
    const b = await member(cluster, 'ev-b');
    const got: FingerEvent[] = [];
    b.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => {
      if (e.data.probe === cluster) got.push(e);
    });
    const pad = 'p'.repeat(300);
    // 40 events of ~500 bytes in one turn: ~20 KB, five times the server's max_payload
    for (let i = 0; i < 40; i++) a.hub.events.emit('DEGRADED', {}, { probe: cluster, i, pad });
    await waitFor('the events on the other node', async () => (got.length >= 40 ? true : undefined), 10_000);
    expect(got.map((e) => e.data.i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(a.node.bridge!.stats().dropped_outbound).toBe(0);
  });

  it('drops only an event that alone does not fit, and counts it', async () => {
    const cluster = testClusterName('evbig');
    const a = await member(cluster, 'big-a');
    const b = await member(cluster, 'big-b');
    const got: FingerEvent[] = [];
    b.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => {
      if (e.data.probe === cluster) got.push(e);
    });
    a.hub.events.emit('DEGRADED', {}, { probe: cluster, i: 0 });
    a.hub.events.emit('DEGRADED', {}, { probe: cluster, i: 1, pad: 'x'.repeat(MAX_PAYLOAD * 2) });
    a.hub.events.emit('DEGRADED', {}, { probe: cluster, i: 2 });
    await waitFor('the events that fit on the other node', async () => (got.length >= 2 ? true : undefined), 10_000);
    expect(got.map((e) => e.data.i)).toEqual([0, 2]);
    expect(a.node.bridge!.stats().dropped_outbound).toBe(1);
  });
});

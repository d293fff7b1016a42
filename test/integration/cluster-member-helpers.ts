// A hub joined to a cluster in this test process (a ClusterNode on its own NATS connection), and a
// poll-until helper: shared by the NATS suites that run several members side by side.
import type { NatsConnection } from 'nats';

import { type Clock, createRuntime, LocalEventBus, MessageHub, systemClock } from '@finger/hub';
import {
  ClusterNode,
  type ClusterNodeOptions,
  connectNats,
  type DroppedMessage,
  runtimeSwitch,
  serveKeyOf,
  WireAuth,
} from '@finger/hub/nats';
import { waitFor } from '@finger/testkit';

/** A member: its hub, cluster node, connection, signing auth and the messages it dropped. */
export interface ClusterMember {
  hub: MessageHub;
  node: ClusterNode;
  nc: NatsConnection;
  auth: WireAuth;
  dropped: DroppedMessage[];
}

/**
 * Starts a member `name` of `cluster` on `url`, signing as a daemon (cluster key `key`) or a serve
 * host (its serve key), with module `manifest` loaded when given, heartbeats every 200 ms unless
 * `extra` says otherwise; its close is pushed onto `cleanup`.
 */
export async function clusterMember(o: {
  url: string;
  cluster: string;
  name: string;
  key: string;
  cleanup: (() => Promise<void>)[];
  role?: 'daemon' | 'serve';
  manifest?: string;
  clock?: Clock;
  extra?: Partial<ClusterNodeOptions>;
}): Promise<ClusterMember> {
  const clock = o.clock ?? systemClock;
  const rs = runtimeSwitch(createRuntime);
  const hub = new MessageHub({ createRuntime: rs.create, events: new LocalEventBus({ clock }) });
  if (o.manifest) await hub.registry.loadFile(o.manifest);
  const nc = await connectNats({ url: o.url });
  const auth =
    o.role === 'serve'
      ? new WireAuth({
          role: 'serve',
          node: o.name,
          serve_key: serveKeyOf(o.key, hub.registry.list()[0]?.id ?? 'none'),
        })
      : new WireAuth({ role: 'daemon', node: o.name, cluster_key: o.key });
  const dropped: DroppedMessage[] = [];
  const node = new ClusterNode({
    hub,
    connection: nc,
    cluster: o.cluster,
    auth,
    importRemote: o.role !== 'serve',
    bridgeEvents: true,
    heartbeat_ms: 200,
    unhealthy_after_ms: 600,
    onDropped: (d) => dropped.push(d),
    ...o.extra,
  });
  rs.bind(node);
  await node.start();
  o.cleanup.push(async () => {
    await node.close();
    await hub.close(0);
    await nc.drain();
  });
  return { hub, node, nc, auth, dropped };
}

/** Polls `fn` every 20 ms until it returns something truthy (rejects after `ms`). */
export function until<T>(fn: () => T | undefined | false, ms = 5000): Promise<T> {
  return waitFor('the cluster condition', async () => fn() || undefined, ms, 20);
}

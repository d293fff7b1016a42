// A serve host whose serve key is not the cluster's: every daemon drops its messages. Both sides
// say so — the daemon's health is degraded and names the node the dropped frames claim, the serve
// host warns that the daemons' messages fail authentication — instead of running on in silence.
import { afterAll, describe, expect, it } from 'vitest';

import { type CliChild, natsUrlForTests, testClusterName, type TestDaemon, waitFor } from '@finger/testkit';

import { serveProbe, startClusterDaemon, untilServing } from './remote-probe-helpers.js';

const url = await natsUrlForTests();
const KEY = 'wrong-key-test-cluster-key-0123456789';
const OTHER = 'wrong-key-test-other-key-9876543210';

describe.skipIf(!url)('nodes with another cluster’s key', () => {
  let daemon: TestDaemon | undefined;
  let host: CliChild | undefined;
  const extra: TestDaemon[] = [];
  afterAll(async () => {
    for (const d of extra) await d.close();
    host?.kill('SIGTERM');
    await host?.done;
    await daemon?.close();
  });

  it('degrades the daemon’s health with the reason and the claimed node; the host warns', async () => {
    const cluster = testClusterName('wrongkey');
    daemon = await startClusterDaemon({ url: url!, cluster, clusterKey: KEY });
    host = serveProbe(cluster, OTHER, ['--nats', url!]);
    await untilServing(host);
    expect(host.running()).toBe(true);

    type Health = {
      status: string;
      reasons?: string[];
      nats: { remote_modules: number; last_unauthenticated?: string; last_unauthenticated_at?: string };
    };
    const health = await waitFor('the daemon to report the dropped heartbeats', async () => {
      const h = (await daemon!.http<Health>('GET', '/v1/health')).body;
      return h.nats.last_unauthenticated !== undefined ? h : undefined;
    });
    expect(health.status).toBe('degraded');
    expect(health.nats.remote_modules).toBe(0);
    expect(health.nats.last_unauthenticated).toMatch(
      /^bad signature from a node calling itself "serve-remote-probe-[0-9a-f]+" on finger\.\S+\.registry\.hb$/,
    );
    expect(health.reasons).toContainEqual(expect.stringMatching(/^NATS messages fail authentication \(bad signature/));

    // the host hears the daemon's heartbeats (signed with the cluster's serve key) and cannot verify them
    await waitFor('the serve host to warn', async () =>
      /fail authentication/.test(host!.out() + host!.err()) ? true : undefined,
    );
    expect(host.out() + host.err()).toMatch(
      /messages from node "daemon-[^"]+" fail authentication: this host's serve key, or that node's key, is not the cluster's/,
    );
  });
  it('reports a daemon with another cluster key without a storm: dropped event batches make no events', async () => {
    const cluster = testClusterName('wrongd');
    const a = await startClusterDaemon({ url: url!, cluster, clusterKey: KEY });
    extra.push(a);
    const other = await startClusterDaemon({ url: url!, cluster, clusterKey: OTHER });
    extra.push(other);
    type Degraded = { data: { kind?: string; subject?: string; claimed_node?: string; degraded?: boolean } };
    const dropped = async () =>
      (await a.http<{ events: Degraded[] }>('GET', '/v1/events?type=DEGRADED&limit=10000')).body.events.filter(
        (e) => e.data.kind === 'envelope_dropped',
      );
    // the other daemon's heartbeats are dropped and reported…
    await waitFor('a dropped heartbeat reported', async () =>
      (await dropped()).some((e) => /\.registry\.hb$/.test(e.data.subject ?? '')) ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const seen = await dropped();
    const hb = seen.find((e) => /\.registry\.hb$/.test(e.data.subject ?? ''));
    expect(hb?.data.claimed_node).toMatch(/^daemon-/);
    // the event says degraded, as /v1/health does for a minute after a message failing authentication
    expect(hb?.data.degraded).toBe(true);
    // …but not its event batches (each side's report of the other's would be the other's next drop)
    expect(seen.filter((e) => /\.events\./.test(e.data.subject ?? ''))).toEqual([]);
  });
});

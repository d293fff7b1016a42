// A cluster on NATS without Redis: each daemon keeps its own lockout, and the kill switch travels
// with the cluster's events — a halt on A halts B within 1 s, an unlock on B unlocks A, and the
// halt B emits in turn does not escalate A's graceful halt to an immediate one.
import { afterAll, describe, expect, it } from 'vitest';

import { natsUrlForTests, testClusterName, type TestDaemon, waitFor } from '@finger/testkit';

import { startClusterDaemon } from './remote-probe-helpers.js';

const url = await natsUrlForTests();
const KEY = 'halt-relay-test-cluster-key-0123456789';

describe.skipIf(!url)('the kill switch across a NATS-only cluster', () => {
  const daemons: TestDaemon[] = [];
  afterAll(async () => {
    for (const d of daemons) await d.close();
  });

  it('halts B within 1 s of a halt on A; an unlock on B unlocks A; each halt stays graceful', async () => {
    const cluster = testClusterName('relay');
    for (let i = 0; i < 2; i++) daemons.push(await startClusterDaemon({ url: url!, cluster, clusterKey: KEY }));
    const [a, b] = daemons as [TestDaemon, TestDaemon];
    const state = async (d: TestDaemon) =>
      (await d.http<{ safety: { state: string } }>('GET', '/v1/health')).body.safety.state;
    // both in the cluster (each has heard the other's heartbeat) before the halt
    await waitFor('the daemons to join', async () =>
      (await a.http<{ nats: { connected: boolean } }>('GET', '/v1/health')).body.nats.connected &&
      (await b.http<{ nats: { connected: boolean } }>('GET', '/v1/health')).body.nats.connected
        ? true
        : undefined,
    );
    await new Promise((r) => setTimeout(r, 300)); // the event subscriptions are flushed with the join

    expect((await a.http('POST', '/v1/halt', { reason: 'relay test' })).status).toBe(200);
    const seen = await waitFor(
      'B to leave the open state',
      async () => {
        const s = await state(b);
        return s === 'open' ? undefined : s;
      },
      3000,
      20,
    );
    expect(seen).toMatch(/^(halting|locked)$/);
    await waitFor('both halts to be done', async () =>
      (await state(a)) === 'locked' && (await state(b)) === 'locked' ? true : undefined,
    );
    // B's lockout names who halted it: daemon A, for the person who pressed the switch there
    const lockout = (await b.http<{ safety: { lockout?: { by: string; reason: string } } }>('GET', '/v1/health')).body
      .safety.lockout;
    expect(lockout?.by).toMatch(/^daemon:daemon-/);
    expect(lockout?.reason).toMatch(/^halted on daemon-\S+ by human:\S+: relay test$/);
    // A's halt was not escalated by the echo of B's: one graceful halt in A's audit
    const audit = await a.http<{ entries: { type: string; details?: { phase?: string } }[] }>(
      'GET',
      '/v1/audit?type=halt',
    );
    expect(audit.body.entries.map((e) => e.details?.phase)).toEqual(['graceful']);

    expect((await b.http('POST', '/v1/unlock', {})).body).toMatchObject({ unlocked: true });
    await waitFor('A to be unlocked by B', async () => ((await state(a)) === 'open' ? true : undefined));
  });
});

// A network observer (no key) captures a daemon's signed HALTED and UNLOCKED event batches and
// publishes them again later, to a daemon that has not seen their ids (one restarted since, or
// once 20,000 other events have pushed them out of its deduplication window). Without Redis each
// daemon acts on the kill switch events of the others: the replayed UNLOCKED undid a later halt.
// An UNLOCKED older than a minute is dropped and reported, not acted on; a HALTED never is (a
// replayed halt stops work an admin resumes; a lost one would leave a daemon running).
import type { Msg } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { type Clock, systemClock } from '@finger/hub';
import { connectNats } from '@finger/hub/nats';
import type { FingerEvent } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const KEY = 'attack-event-replay-key-0123456789';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function daemon(cluster: string, name: string, clock: Clock = systemClock) {
  const acted: FingerEvent[] = [];
  const m = await clusterMember({
    url: url!,
    cluster,
    name,
    key: KEY,
    cleanup,
    clock,
    extra: { onDaemonEvent: { types: ['HALTED', 'UNLOCKED'], handler: (e) => acted.push(e) } },
  });
  return { ...m, acted };
}

describe.skipIf(!url)('kill switch events captured on the wire and published again', () => {
  it('are not acted on by a daemon that has not seen them', async () => {
    const cluster = testClusterName('atk-replay');
    // daemon A's halt and unlock, ten minutes ago (its clock is set back to emit them)
    let offset = -10 * 60_000;
    const clock: Clock = { ...systemClock, now: () => Date.now() + offset };
    const a = await daemon(cluster, 'daemon-a', clock);
    const observer = await connectNats({ url: url! });
    cleanup.push(() => observer.drain());
    const captured: Msg[] = [];
    observer.subscribe(`finger.${cluster}.events.>`, { callback: (_e, m) => captured.push(m) });
    await observer.flush();
    a.hub.events.emit('HALTED', {}, { phase: 'graceful', by: 'human:bob', reason: 'incident' });
    a.hub.events.emit('UNLOCKED', {}, { by: 'human:bob' });
    await until(() => captured.length >= 2);

    // daemon C starts (a restart: nothing seen yet); the observer publishes the capture again
    offset = 0;
    const c = await daemon(cluster, 'daemon-c');
    const halts: FingerEvent[] = [];
    c.hub.events.subscribe({ types: ['HALTED'] }, (e) => halts.push(e));
    for (const m of captured) observer.publish(m.subject, m.data);
    // then an unsigned message on the same subscription: once C reports it, C has read the replays
    observer.publish(`finger.${cluster}.events.DEGRADED`, Buffer.from('not a frame'));
    await observer.flush();
    await until(() => c.dropped.find((d) => d.reason === 'unsigned message (no frame)'));

    // the old unlock is dropped; the old halt is not (a halt is never lost for its age: one
    // replayed stops work an admin resumes, one lost would leave a daemon running)
    expect(c.acted.map((e) => e.type)).toEqual(['HALTED']);
    expect(halts.map((e) => e.type)).toEqual(['HALTED']);
    expect(c.dropped).toContainEqual(expect.objectContaining({ reason: 'stale UNLOCKED event', node: 'daemon-a' }));
    expect(c.dropped.filter((d) => d.reason === 'stale HALTED event')).toEqual([]);

    // an unlock made now still reaches C
    const now = a.hub.events.emit('UNLOCKED', {}, { by: 'human:bob' });
    await until(() => c.acted.length > 1);
    expect(c.acted.map((e) => e.id).slice(1)).toEqual([now.id]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';

import { connectNats, serveKeyOf, WireAuth } from '@finger/hub/nats';
import { MAX_WIRE_JSON_DEPTH } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

// Issue 28 item 2 on the event bridge: an event a serve host signs is parsed and written back out
// (JSON.stringify recurses); one nested 20,000 levels deep is dropped and reported, naming the
// limit, instead of a RangeError in the subscription.

const url = await natsUrlForTests();
const KEY = 'deep-event-key-0123456789abcdef';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

describe.skipIf(!url)('a deep event from a serve host', () => {
  it('deep JSON: is dropped naming the nesting limit; a shallow one from the same host is delivered', async () => {
    const cluster = testClusterName('deep-event');
    const d = await clusterMember({ url: url!, cluster, name: 'daemon-d', key: KEY, cleanup });
    const seen: string[] = [];
    d.hub.events.subscribe({ types: ['DEGRADED'] }, (e) => seen.push(e.id));
    const nc = await connectNats({ url: url! });
    cleanup.push(() => nc.drain());
    const auth = new WireAuth({ role: 'serve', node: 'serve-s', serve_key: serveKeyOf(KEY, 'remote-probe') });
    const event = (id: string, data: string) =>
      `{"id":"${id}","type":"DEGRADED","ts":"${new Date().toISOString()}","data":${data}}`;
    const depth = 20_000;
    const deep = `{"reason":"x","k":${'['.repeat(depth)}1${']'.repeat(depth)}}`;
    const subject = `finger.${cluster}.events.DEGRADED`;
    nc.publish(subject, auth.sealJson(subject, 'events', event('01DEEPEVENT0000000000000001', deep), false));
    nc.publish(
      subject,
      auth.sealJson(subject, 'events', event('01DEEPEVENT0000000000000002', '{"reason":"y"}'), false),
    );
    await nc.flush();
    await until(() => seen.length > 0);
    expect(seen).toEqual(['01DEEPEVENT0000000000000002']);
    expect(d.dropped).toContainEqual({
      reason: `event nests deeper than the JSON nesting limit of ${MAX_WIRE_JSON_DEPTH} levels`,
      subject,
      node: 'serve-s',
    });
  });
});

import { createInbox, type NatsConnection } from 'nats';

import { permissionRefusal, subscribeChecked } from '../transport/nats-subscribe.js';
import { clusterSubjects, type WireAuth } from '../transport/nats-wire.js';

/**
 * What the NATS server refuses a daemon of `cluster` on connection `nc`, as lines such as
 * `subscription to "finger.prod.registry.*"`; empty when it may do all it needs. Subscribes (and
 * unsubscribes) to the subjects a daemon listens on — the registry, the events, the cancels, a
 * module's call subject in its queue group, a reply inbox — and publishes one empty message to
 * a call subject nobody serves and one to its own inbox, so no node receives anything. Given the
 * cluster's `auth` (a daemon's, signing as a node of its own), it also publishes what daemons
 * publish besides calls, each a signed message the nodes take and do nothing with: a registry
 * `bye` of a node that announced nothing, an empty events batch, a cancel of no call. Used by
 * `myfinger doctor`.
 */
export async function natsAccessProblems(nc: NatsConnection, cluster: string, auth?: WireAuth): Promise<string[]> {
  const s = clusterSubjects(cluster);
  const refusedPublishes: string[] = [];
  const status = nc.status();
  const watching = (async () => {
    for await (const st of status) {
      const r = permissionRefusal(st);
      if (r !== undefined && r.operation === 'publish') refusedPublishes.push(`publish to "${r.subject}"`);
    }
  })();
  const inbox = createInbox();
  const probe = `finger-doctor-${inbox.slice(inbox.lastIndexOf('.') + 1).toLowerCase()}`;
  const wanted: [string, string | undefined][] = [
    [s.registryAll, undefined],
    [s.events, undefined],
    [s.cancel, undefined],
    [s.call(probe), s.queue(probe)],
    [`${inbox}.*`, undefined],
  ];
  const subs = wanted.map(([subject, queue]) => ({
    subject,
    checked: subscribeChecked(nc, subject, () => undefined, queue !== undefined ? { queue } : {}),
  }));
  nc.publish(s.call(probe));
  nc.publish(`${inbox}.probe`);
  if (auth !== undefined) {
    nc.publish(s.registry('bye'), auth.sealJson(s.registry('bye'), 'bye', JSON.stringify({ node: auth.node })));
    nc.publish(s.event('DEGRADED'), auth.sealJson(s.event('DEGRADED'), 'events', '', false));
    nc.publish(s.cancel, auth.sealJson(s.cancel, 'cancel', JSON.stringify({ id: probe, reason: 'doctor probe' })));
  }
  await nc.flush();
  await new Promise((r) => setImmediate(r)); // the status events of the refusals reach the loop above
  const refusedSubs: string[] = [];
  for (const { subject, checked } of subs) {
    if (checked.refused() !== undefined) refusedSubs.push(`subscription to "${subject}"`);
    else checked.sub.unsubscribe();
  }
  (status as { stop?: () => void }).stop?.();
  await watching;
  return [...refusedSubs, ...refusedPublishes];
}

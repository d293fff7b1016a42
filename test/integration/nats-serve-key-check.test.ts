// A serve host holding a serve key that is not the cluster's (printed from another cluster key, or
// not renewed after the cluster key changed) must not join its module's queue group: it would
// take its share of the calls, fail to verify them and answer none, each caller waiting out its
// deadline. It serves only once a message of another node verified under its key, and says so
// when none has. A daemon missed when the cluster key changed is held to the same rule for the
// modules it has locally that other nodes serve too.
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import type { Logger } from '@finger/hub';
import type { Principal } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'serve-key-check-test-key-0123456789';
const OTHER_KEY = 'another-cluster-key-entirely-01234';
const human: Principal = { kind: 'human', id: 'alice', roles: ['operator'] };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

/** A logger keeping its warnings' messages. */
function warnings(): { logger: Logger; seen: string[] } {
  const seen: string[] = [];
  const quiet = () => undefined;
  const logger: Logger = {
    debug: quiet,
    info: quiet,
    warn: (_o: object | string, msg?: string) => void seen.push(msg ?? String(_o)),
    error: quiet,
    child: () => logger,
  };
  return { logger, seen };
}

describe.skipIf(!url)('a serve host whose serve key is not the cluster’s', () => {
  it('takes none of its module’s calls, and says it is not serving', async () => {
    const cluster = testClusterName('keycheck');
    const bad = warnings();
    const wrong = await clusterMember({
      url: url!,
      cluster,
      name: 'wrong-key-host',
      key: OTHER_KEY,
      cleanup,
      role: 'serve',
      manifest: PROBE,
      extra: { logger: bad.logger, key_check_warn_ms: 300 },
    });
    await clusterMember({ url: url!, cluster, name: 'good-host', key: KEY, cleanup, role: 'serve', manifest: PROBE });
    const a = await clusterMember({ url: url!, cluster, name: 'a', key: KEY, cleanup, role: 'daemon' });
    await until(() => a.hub.registry.get('remote-probe'));

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        a.hub.request({ target: 'remote-probe.where', payload: { n: i }, source: human, timeout_ms: 5000 }),
      ),
    );
    expect(results).toHaveLength(20);
    expect(wrong.node.transport.stats().serving).toBe(0);
    expect(a.node.placement('remote-probe').nodes.map((n) => n.node)).toEqual(['good-host']);
    await until(() => bad.seen.some((m) => m.startsWith('not serving remote-probe yet: no message of another node')));
    // it heard the daemon, and could verify nothing of it
    expect(wrong.dropped.some((d) => d.reason === 'bad signature')).toBe(true);
  });

  it('with the right key, serves once a daemon of the cluster is heard, however late it comes', async () => {
    const cluster = testClusterName('keycheck');
    const host = await clusterMember({
      url: url!,
      cluster,
      name: 'host',
      key: KEY,
      cleanup,
      role: 'serve',
      manifest: PROBE,
    });
    // no daemon yet: nothing verified, nothing served
    expect(host.node.transport.serves('remote-probe')).toBe(false);
    const a = await clusterMember({ url: url!, cluster, name: 'a', key: KEY, cleanup, role: 'daemon' });
    await until(() => a.hub.registry.get('remote-probe'));
    expect(host.node.transport.serves('remote-probe')).toBe(true);
    const r = (await a.hub.request({ target: 'remote-probe.where', payload: { n: 1 }, source: human })) as {
      echo: unknown;
    };
    expect(r.echo).toEqual({ n: 1 });
  });
});

describe.skipIf(!url)('a daemon whose cluster key is not the cluster’s', () => {
  it('takes none of the calls of a module it has that other nodes serve, until a peer proves its key', async () => {
    const cluster = testClusterName('keycheckd');
    const wrong = await clusterMember({
      url: url!,
      cluster,
      name: 'wrong-key-daemon',
      key: OTHER_KEY,
      cleanup,
      role: 'daemon',
      manifest: PROBE,
    });
    await clusterMember({ url: url!, cluster, name: 'good-host', key: KEY, cleanup, role: 'serve', manifest: PROBE });
    const a = await clusterMember({ url: url!, cluster, name: 'a', key: KEY, cleanup, role: 'daemon' });
    await until(() => a.hub.registry.get('remote-probe'));

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        a.hub.request({ target: 'remote-probe.where', payload: { n: i }, source: human, timeout_ms: 3000 }),
      ),
    );
    expect(results).toHaveLength(20);
    expect(wrong.node.transport.serves('remote-probe')).toBe(false);
    expect(wrong.dropped.some((d) => d.reason === 'bad signature')).toBe(true);
    // its own hub still runs the module
    expect(await wrong.hub.request({ target: 'remote-probe.where', payload: { n: 0 }, source: human })).toMatchObject({
      echo: { n: 0 },
    });

    // a daemon with the right key, alone at first, serves once a node joins
    const b = await clusterMember({ url: url!, cluster: `${cluster}b`, name: 'b', key: KEY, cleanup, manifest: PROBE });
    expect(b.node.transport.serves('remote-probe')).toBe(false);
    const c = await clusterMember({ url: url!, cluster: `${cluster}b`, name: 'c', key: KEY, cleanup });
    await until(() => c.hub.registry.get('remote-probe'));
    expect(b.node.transport.serves('remote-probe')).toBe(true);
    expect(await c.hub.request({ target: 'remote-probe.where', payload: { n: 2 }, source: human })).toMatchObject({
      echo: { n: 2 },
    });
  });
});

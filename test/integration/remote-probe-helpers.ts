// The remote-probe fixture served by a `myfinger module serve` child, a daemon of the cluster, and
// waiting for the daemon to list the module and calling it: shared by the NATS suites that run a
// serve host against a private server.
import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { serveKeyOf } from '@finger/hub/nats';
import { type CliChild, startCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

/** The remote-probe module.json (tools `where`, `whoami`, `slow`, …). */
export const REMOTE_PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));

/**
 * Starts `myfinger module serve` of the remote-probe module on `cluster` (heartbeat 200 ms), signing
 * with its serve key under `clusterKey`, with `args` (`--nats`, credentials) and `env` added; bounded
 * to 60 s. Does not wait: see {@link untilServing}.
 */
export function serveProbe(cluster: string, clusterKey: string, args: string[], env: Record<string, string> = {}) {
  return startCli(
    ['module', 'serve', REMOTE_PROBE, '--cluster', cluster, '--heartbeat-ms', '200', ...args],
    { FINGER_SERVE_KEY: serveKeyOf(clusterKey, 'remote-probe'), ...env },
    { timeout_ms: 60_000 },
  );
}

/** Until `host` says it serves its module (or has exited: the caller checks which). */
export function untilServing(host: CliChild): Promise<true> {
  return waitFor('module serve to start', async () =>
    /serving remote-probe on cluster/.test(host.out()) || !host.running() ? true : undefined,
  );
}

/** Until daemon `d` lists module `id` (imported from the cluster). */
export function untilListed(d: TestDaemon, id = 'remote-probe'): Promise<true> {
  return waitFor(`${id} on the daemon`, async () =>
    (await d.http<{ modules: { id: string }[] }>('GET', '/v1/modules')).body.modules.some((m) => m.id === id)
      ? true
      : undefined,
  );
}

/**
 * A daemon of `cluster` on `url` (cluster key `clusterKey`, heartbeat 200 ms, no modules of its
 * own) with `nats` added to its NATS config, and `files` copied into its home's `config/` (config
 * paths such as `config/client.pem` name them there).
 */
export function startClusterDaemon(o: {
  url: string;
  cluster: string;
  clusterKey: string;
  nats?: Record<string, unknown>;
  files?: string[];
}): Promise<TestDaemon> {
  return startTestDaemon({
    config: {
      nats: { url: o.url, cluster_key: o.clusterKey, heartbeat_ms: 200, unhealthy_after_ms: 800, ...o.nats },
      cluster: o.cluster,
      modules: { builtin: false, paths: [] },
    },
    prepareHome: async (home) => {
      mkdirSync(join(home, 'config'), { recursive: true });
      for (const f of o.files ?? []) copyFileSync(f, join(home, 'config', basename(f)));
    },
  });
}

/** A person's `/hub` call of `remote-probe.where` with payload `{"n": n}` on daemon `d`: the response body. */
export async function callProbe(d: TestDaemon, n: number, timeout_ms = 3000) {
  return (
    await d.http('POST', '/v1/input', { text: `/hub target=remote-probe.where timeout=${timeout_ms} {"n":${n}}` })
  ).body;
}

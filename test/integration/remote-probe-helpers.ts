// The remote-probe fixture served by a `myfinger module serve` child, and waiting for a daemon to
// list it: shared by the NATS suites that run a serve host against a private server.
import { fileURLToPath } from 'node:url';

import { serveKeyOf } from '@finger/hub/nats';
import { type CliChild, startCli, type TestDaemon, waitFor } from '@finger/testkit';

/** The remote-probe module.json (tools `where`, `whoami`, `slow`, …). */
export const REMOTE_PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));

/**
 * Starts `myfinger module serve` of the remote-probe module on `cluster` (heartbeat 200 ms), signing
 * with the serve key of `clusterKey`, with `args` (`--nats`, credentials) and `env` added; bounded
 * to 60 s. Does not wait: see {@link untilServing}.
 */
export function serveProbe(cluster: string, clusterKey: string, args: string[], env: Record<string, string> = {}) {
  return startCli(
    ['module', 'serve', REMOTE_PROBE, '--cluster', cluster, '--heartbeat-ms', '200', ...args],
    { FINGER_SERVE_KEY: serveKeyOf(clusterKey), ...env },
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

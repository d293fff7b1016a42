// Pieces the hub-nats bench and its profiling helpers share.

/** The cluster key every bench process signs with. */
export const KEY = 'bench-cluster-key-0123456789abcdef';

/** A request envelope to `echo.echo` as a daemon would build it (for the transport-alone rows). */
export function echoEnvelope(source, payload) {
  const now = Date.now();
  const id = `b${now}${Math.random()}`;
  return {
    id,
    kind: 'request',
    request_id: id,
    correlation_id: id,
    session_id: '',
    workflow_id: '',
    source,
    target: 'echo.echo',
    blocking: true,
    timestamp: new Date(now).toISOString(),
    deadline: now + 5000,
    execution_chain: [],
    nesting_depth: 0,
    payload,
  };
}

/** Two event buses bridged over NATS (A publishes, B receives), started. */
export async function startEventBridges(hubPkg, natsPkg, ncA, ncB, cluster) {
  const busA = new hubPkg.LocalEventBus();
  const busB = new hubPkg.LocalEventBus();
  const bridge = (bus, nc, node) =>
    new natsPkg.NatsEventBridge({
      bus,
      connection: nc,
      cluster,
      auth: new natsPkg.WireAuth({ role: 'daemon', node, cluster_key: KEY }),
      max_queue: 100_000,
    });
  const a = bridge(busA, ncA, 'ev-a');
  const b = bridge(busB, ncB, 'ev-b');
  await a.start();
  await b.start();
  return { busA, busB, a, b };
}

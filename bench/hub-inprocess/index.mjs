// hub-inprocess: a blocking call of a small payload to the in-process echo module through the
// finger MessageHub, side by side with Moleculer's local broker.call to an equivalent action —
// once with Moleculer's defaults, once with its fault-tolerance features on (the like-for-like
// peer: finger always runs its lease and guards). Sequential (c1) and 100 concurrent callers
// (c100). See bench/README.md.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { importBuilt, REPO_ROOT, requireBenchDep, requireBuilt, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round, runSuite } from '../lib/suite.mjs';

const BENCH = 'hub-inprocess';
const TARGET_RATIO = 2;
/** Issue 27: a tracked call (caller's request_id) at c100 keeps at least this share of the untracked c100 rate. */
const IDEM_TARGET_RATIO = 0.5;
const ECHO_MANIFEST = join(REPO_ROOT, 'modules', 'echo', 'module.json');
/** The principal an entry point would attach from the caller's token (one per connection). */
const SOURCE = Object.freeze({ kind: 'human', id: 'bench', roles: ['operator'] });
const PAYLOAD = { text: 'hi' };

/** Moleculer's fault-tolerance options, bulkhead wide enough not to throttle 100 callers. */
const MOLECULER_FT = {
  requestTimeout: 5000,
  retryPolicy: { enabled: true, retries: 3, delay: 100 },
  circuitBreaker: { enabled: true, threshold: 0.5, minRequestCount: 20, windowTime: 60, halfOpenTime: 10_000 },
  bulkhead: { enabled: true, concurrency: 1000, maxQueueSize: 100_000 },
};

/** A hub as the daemon builds it: events persisted to disk by a FileEventStore, echo loaded from its manifest. */
async function startHub(hubPkg, dirs, label) {
  const dir = await mkdtemp(join(tmpdir(), `finger-bench-${label}-`));
  dirs.push(dir);
  const events = new hubPkg.LocalEventBus({ store: new hubPkg.FileEventStore({ dir }) });
  const hub = new hubPkg.MessageHub({ events });
  await hub.registry.loadFile(ECHO_MANIFEST);
  return hub;
}

async function startBroker(ServiceBroker, nodeID, extra) {
  const broker = new ServiceBroker({
    nodeID,
    logger: false,
    transporter: null,
    metrics: false,
    tracing: false,
    ...extra,
  });
  broker.createService({
    name: 'echo',
    actions: {
      echo(ctx) {
        return ctx.params;
      },
    },
  });
  await broker.start();
  return broker;
}

async function expectEcho(label, fn) {
  const got = await fn();
  if (!isDeepStrictEqual(got, PAYLOAD))
    throw new Error(`${label}: expected ${JSON.stringify(PAYLOAD)}, got ${JSON.stringify(got)}`);
}

function find(rows, system, scenario) {
  const row = rows.find((r) => r.system === system && r.scenario === scenario);
  if (row === undefined) throw new Error(`no row ${system}/${scenario}`);
  return row;
}

function computeRatios(rows, cpuOf) {
  const f = find(rows, 'finger', 'c100');
  const ft = find(rows, 'moleculer-ft', 'c100');
  const def = find(rows, 'moleculer-default', 'c100');
  const f1 = find(rows, 'finger', 'c1');
  const ratios = {
    c100_ops_finger_over_moleculer_ft: round(f.ops_per_s / ft.ops_per_s),
    c100_ops_finger_over_moleculer_default: round(f.ops_per_s / def.ops_per_s),
    c100_p99_finger_over_moleculer_ft: round(f.p99_us / ft.p99_us),
    c100_p99_finger_over_moleculer_default: round(f.p99_us / def.p99_us),
    c1_ops_finger_over_moleculer_ft: round(f1.ops_per_s / find(rows, 'moleculer-ft', 'c1').ops_per_s),
    c1_ops_finger_over_moleculer_default: round(f1.ops_per_s / find(rows, 'moleculer-default', 'c1').ops_per_s),
    c100_ops_per_cpu_s_finger_over_moleculer_ft: round(cpuOf.get('finger/c100') / cpuOf.get('moleculer-ft/c100')),
    c100_ops_per_cpu_s_finger_over_moleculer_default: round(
      cpuOf.get('finger/c100') / cpuOf.get('moleculer-default/c100'),
    ),
    c100_idem_ops_over_c100: round(find(rows, 'finger', 'c100-idem').ops_per_s / f.ops_per_s),
    c100_idem_ops_per_cpu_s_over_c100: round(cpuOf.get('finger/c100-idem') / cpuOf.get('finger/c100')),
  };
  const target = {
    rule: `finger c100 ops/s ≥ ${TARGET_RATIO}× moleculer-ft c100 and finger c100 p99 ≤ moleculer-ft c100 p99`,
    ops_met: ratios.c100_ops_finger_over_moleculer_ft >= TARGET_RATIO,
    p99_met: f.p99_us <= ft.p99_us,
  };
  target.met = target.ops_met && target.p99_met;
  const idem_target = {
    rule: `finger c100-idem ops/s ≥ ${IDEM_TARGET_RATIO}× finger c100 ops/s (issue 27)`,
    met: ratios.c100_idem_ops_over_c100 >= IDEM_TARGET_RATIO,
  };
  return { ...ratios, target, idem_target };
}

function printRatios(r) {
  const yes = (b) => (b ? 'yes' : 'NO');
  process.stdout.write(
    [
      '',
      `finger c100 ÷ moleculer-ft c100:      ${r.c100_ops_finger_over_moleculer_ft}× ops/s, p99 ratio ${r.c100_p99_finger_over_moleculer_ft}`,
      `finger c100 ÷ moleculer-default c100: ${r.c100_ops_finger_over_moleculer_default}× ops/s, p99 ratio ${r.c100_p99_finger_over_moleculer_default}`,
      `finger c1   ÷ moleculer-ft / default: ${r.c1_ops_finger_over_moleculer_ft}× / ${r.c1_ops_finger_over_moleculer_default}× ops/s`,
      `per CPU-second, finger c100 ÷ moleculer-ft / default: ${r.c100_ops_per_cpu_s_finger_over_moleculer_ft}× / ${r.c100_ops_per_cpu_s_finger_over_moleculer_default}×`,
      `target (${r.target.rule}): ops ${yes(r.target.ops_met)}, p99 ${yes(r.target.p99_met)}`,
      `finger c100-idem ÷ c100: ${r.c100_idem_ops_over_c100}× ops/s, ${r.c100_idem_ops_per_cpu_s_over_c100}× per CPU-second; target (${r.idem_target.rule}): ${yes(r.idem_target.met)}`,
      '',
    ].join('\n'),
  );
}

runBench(BENCH, async () => {
  const hubPkg = await importBuilt('packages/hub');
  await requireBuilt('modules/echo');
  const { ServiceBroker, MOLECULER_VERSION: moleculerVersion } = requireBenchDep('moleculer');

  const dirs = [];
  const hub = await startHub(hubPkg, dirs, 'plain');
  const hubIdem = await startHub(hubPkg, dirs, 'idem');
  const hubIntercepted = await startHub(hubPkg, dirs, 'interceptor');
  hubIntercepted.use((call, next) => next());
  const molDefault = await startBroker(ServiceBroker, 'bench-default', {});
  const molFt = await startBroker(ServiceBroker, 'bench-ft', MOLECULER_FT);

  try {
    const runId = `bench-${Date.now().toString(36)}-`;
    let seq = 0;
    const finger = () => hub.request({ target: 'echo', payload: { text: 'hi' }, source: SOURCE });
    const fingerIdem = () =>
      hubIdem.request({ target: 'echo', payload: { text: 'hi' }, source: SOURCE, request_id: runId + ++seq });
    const fingerIntercepted = () => hubIntercepted.request({ target: 'echo', payload: { text: 'hi' }, source: SOURCE });
    const moleculerDefault = () => molDefault.call('echo.echo', { text: 'hi' });
    const moleculerFt = () => molFt.call('echo.echo', { text: 'hi' });

    await expectEcho('finger', finger);
    await expectEcho('finger c100-idem', fingerIdem);
    await expectEcho('finger c100-interceptor', fingerIntercepted);
    await expectEcho('moleculer-default', moleculerDefault);
    await expectEcho('moleculer-ft', moleculerFt);

    const opts = suiteOptions();
    process.stderr.write(
      `${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup, an event-loop turn every ~${opts.turnOps} ops\n`,
    );
    const baseline = () => Promise.resolve(PAYLOAD);
    const measured = await runSuite(
      [
        { system: 'baseline', scenario: 'c1', concurrency: 1, fn: baseline },
        { system: 'baseline', scenario: 'c100', concurrency: 100, fn: baseline },
        { system: 'finger', scenario: 'c1', concurrency: 1, fn: finger },
        { system: 'finger', scenario: 'c100', concurrency: 100, fn: finger },
        { system: 'finger', scenario: 'c100-idem', concurrency: 100, fn: fingerIdem },
        { system: 'finger', scenario: 'c100-interceptor', concurrency: 100, fn: fingerIntercepted },
        { system: 'moleculer-default', scenario: 'c1', concurrency: 1, fn: moleculerDefault },
        { system: 'moleculer-default', scenario: 'c100', concurrency: 100, fn: moleculerDefault },
        { system: 'moleculer-ft', scenario: 'c1', concurrency: 1, fn: moleculerFt },
        { system: 'moleculer-ft', scenario: 'c100', concurrency: 100, fn: moleculerFt },
      ],
      opts,
    );
    const { detail } = measured;
    const cpuOf = new Map(measured.rows.map((r, i) => [`${r.system}/${r.scenario}`, measured.opsPerCpuS[i]]));
    const rows = measured.rows.filter((r) => r.system !== 'baseline');
    const harness_baseline = measured.rows.filter((r) => r.system === 'baseline');

    const hubs = { plain: hub, idem: hubIdem, interceptor: hubIntercepted };
    const finger_stats = {};
    for (const [name, h] of Object.entries(hubs)) {
      const s = h.stats();
      const ev = typeof h.events.stats === 'function' ? h.events.stats() : undefined;
      finger_stats[name] = { ...s, events_emitted: ev?.emitted, events_persisted: ev?.persisted };
      if (s.calls_failed !== 0 || s.leases_expired !== 0)
        throw new Error(`finger ${name}: ${s.calls_failed} failed calls, ${s.leases_expired} expired leases`);
    }

    const ratios = computeRatios(rows, cpuOf);
    printTable(
      BENCH,
      rows.map((r) => ({ ...r, ops_per_cpu_s: cpuOf.get(`${r.system}/${r.scenario}`) })),
    );
    printRatios(ratios);
    process.stdout.write(
      `harness alone (op = Promise.resolve): ${harness_baseline.map((r) => `${r.scenario} ${r.ops_per_s.toLocaleString('en-US')} ops/s`).join(', ')}\n`,
    );
    const file = writeResults(BENCH, rows, {
      ratios,
      moleculer: moleculerVersion,
      options: { ...opts, moleculer_ft: MOLECULER_FT },
      notes: [
        'finger = MessageHub from packages/hub/dist with the real echo module (modules/echo/module.json, in-process runtime); every call takes a lease slot, runs the nesting-depth/cycle guards and the concurrency gate, and the hub has a LocalEventBus persisting to a FileEventStore in a temp dir.',
        'Envelope validation: none on this path by design — envelopes are validated where they enter the process (HTTP/WebSocket gateway, stdio/NATS runtimes), not on in-process calls.',
        'Events: the hub emits no event for a successful call (only module registration, health and LEASE_EXPIRED); per-call audit events come from the firewall, which is not in this bench. See finger_stats.events_emitted.',
        'c100-idem: every call carries a unique caller-supplied request_id, so idempotency tracking (request store entry, join map) is on. c100-interceptor: one pass-through interceptor (call, next) => next().',
        'moleculer-default: ServiceBroker({logger:false, transporter:null, metrics:false, tracing:false}); moleculer-ft adds options.moleculer_ft (request timeout, retry policy, circuit breaker, bulkhead).',
        'Each row is the median round by ops/s (its p50/p99 alongside); rounds are interleaved across systems with a rotating order; ops/s is ops ÷ round wall time including one hrtime.bigint() read per op.',
        "About every options.turnOps completed ops the callers park on one shared setImmediate barrier and resume together (so c100 stays 100 in flight), so timers (the hub's lease sweeper and event-bus flush, Moleculer's timeouts) fire as in a server; the yield counts in wall time, not in latency.",
        "harness_baseline: the same harness with an op that is just Promise.resolve(payload), measured in the same rounds — the ceiling of this harness on this machine; a system's own cost per call ≈ 1/ops_per_s − 1/baseline.",
        'ops/cpu-s (table, detail[].ops_per_cpu_s, ratios.*_per_cpu_s): ops ÷ CPU time of the bench process (all threads, median over rounds), unaffected by the bench being descheduled; rows[].ops_per_s stays the wall-clock figure.',
      ],
      harness_baseline,
      finger_stats,
      detail,
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await Promise.allSettled([
      hub.close(1000),
      hubIdem.close(1000),
      hubIntercepted.close(1000),
      molDefault.stop(),
      molFt.stop(),
    ]);
    await Promise.allSettled(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
});

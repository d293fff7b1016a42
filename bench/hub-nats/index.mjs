// hub-nats: request/reply over NATS between two processes — finger (the caller's MessageHub with
// the remote echo module imported as a {type:"nats"} module: lease, guards, signed envelopes,
// NatsTransport; the server process runs the echo module behind its own hub), finger's transport
// alone (NatsTransport.request, no hub), raw nats.js request/reply with noAsyncTraces (the floor)
// and Moleculer's NATS transporter (the peer); sequential (c1) and 100 concurrent callers (c100).
// Then events: finger's event bridge (one bus to another over NATS, batched, signed, deduplicated)
// against raw one-way publish→subscribe. See README.md.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import {
  BenchSetupError,
  importBuilt,
  REPO_ROOT,
  requireBenchDep,
  requireBuilt,
  runBench,
  suiteOptions,
} from '../lib/bench-main.mjs';
import { measureRound } from '../lib/measure.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { collectGarbage, median, round, runSuite } from '../lib/suite.mjs';
import { echoEnvelope, KEY, startEventBridges } from './setup.mjs';

const BENCH = 'hub-nats';
const NATS_URL = process.env.FINGER_BENCH_NATS_URL ?? process.env.FINGER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
// the server process inherits the caller's cluster (and Moleculer namespace)
const CLUSTER = process.env.BENCH_NATS_CLUSTER ?? `bench${process.pid}`;
const RAW_SUBJECT = `bench.${CLUSTER}.raw.echo`;
const ECHO_MANIFEST = join(REPO_ROOT, 'modules', 'echo', 'module.json');
const SOURCE = Object.freeze({ kind: 'human', id: 'bench', roles: ['operator'] });
const PAYLOAD = { text: 'hi' };
const EVENTS = Number(process.env.BENCH_NATS_EVENTS ?? 200_000);
const EVENT_ROUNDS = Number(process.env.BENCH_NATS_EVENT_ROUNDS ?? 3);
// BENCH_NATS_SYSTEMS / BENCH_NATS_SCENARIOS (comma lists): run only these rows (for probing; the
// ratios need all of them); BENCH_NATS_SCENARIOS=events runs only the two event rows
const ONLY_SYSTEMS = process.env.BENCH_NATS_SYSTEMS?.split(',');
const ONLY_SCENARIOS = process.env.BENCH_NATS_SCENARIOS?.split(',');

function moleculerBroker(nodeID) {
  const { ServiceBroker } = requireBenchDep('moleculer');
  return new ServiceBroker({
    nodeID,
    namespace: CLUSTER,
    logger: false,
    metrics: false,
    tracing: false,
    transporter: { type: 'NATS', options: { url: NATS_URL } },
  });
}

// ---- the server process ----

async function server() {
  const hubPkg = await importBuilt('packages/hub');
  const natsPkg = await importBuilt('packages/hub', 'nats.js');
  const hub = new hubPkg.MessageHub({});
  await hub.registry.loadFile(ECHO_MANIFEST);
  const nc = await natsPkg.connectNats({ url: NATS_URL });
  const node = new natsPkg.ClusterNode({
    hub,
    connection: nc,
    cluster: CLUSTER,
    auth: new natsPkg.WireAuth({ role: 'daemon', node: 'bench-server', cluster_key: KEY }),
    importRemote: false,
    bridgeEvents: false,
  });
  await node.start();
  // raw nats.js responder: the floor
  const raw = await natsPkg.connectNats({ url: NATS_URL });
  raw.subscribe(RAW_SUBJECT, { callback: (err, msg) => err === null && msg.respond(msg.data) });
  await raw.flush();
  const broker = moleculerBroker('bench-server');
  broker.createService({ name: 'echo', actions: { echo: (ctx) => ctx.params } });
  await broker.start();
  process.stdout.write('ready\n');
  const stop = async () => {
    await Promise.allSettled([node.close(), broker.stop()]);
    await hub.close(100);
    await Promise.allSettled([nc.drain(), raw.drain()]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
}

function startServer() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--server'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_NATS_CLUSTER: CLUSTER },
  });
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('ready')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`bench server exited ${code} before ready`)));
  });
  return { child, ready };
}

// ---- measuring both processes ----

/** CPU seconds (user + system) of process `pid`, from /proc (Linux); NaN elsewhere. */
function cpuSecondsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * runSuite (bench/lib/suite.mjs) plus the serving process's CPU: every case warmed up, then
 * `rounds` interleaved rounds (the order rotates), each case's median round reported. Besides
 * the caller's ops per CPU-second (`ops_per_cpu_s`), each row gets `ops_per_cpu_s_both`: ops ÷
 * the CPU both processes spent in the round — what a call costs in all, steadier than ops/s
 * on a machine shared with other work (the NATS server's own CPU is not counted).
 */
async function runSuiteBoth(cases, opts, serverPid) {
  const measure = async (c, ops) => {
    const s0 = cpuSecondsOf(serverPid);
    const m = await measureRound(c, ops);
    const serverS = cpuSecondsOf(serverPid) - s0;
    const callerS = m.ops / m.ops_per_cpu_s;
    return { ...m, ops_per_cpu_s_both: m.ops / (callerS + serverS) };
  };
  const suite = await runSuite(cases, { ...opts, measure });
  return cases.map((c, i) => {
    const rounds = suite.rounds[i];
    return {
      row: {
        ...suite.rows[i],
        ops_per_cpu_s: suite.opsPerCpuS[i],
        ops_per_cpu_s_both: Math.round(median(rounds.map((x) => x.ops_per_cpu_s_both))),
      },
      detail: {
        ...suite.detail[i],
        rounds: suite.detail[i].rounds.map((x, k) => ({
          ...x,
          ops_per_cpu_s_both: Math.round(rounds[k].ops_per_cpu_s_both),
        })),
      },
    };
  });
}

// ---- events ----

const turn = () => new Promise((r) => setImmediate(r));

async function measureEvents(label, emit, received, n) {
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i += 1000) {
    for (let k = 0; k < 1000 && i + k < n; k++) emit(i + k);
    await turn();
  }
  const deadline = Date.now() + 30_000;
  while (received() < n) {
    if (Date.now() > deadline) throw new Error(`${label}: only ${received()} of ${n} events arrived`);
    await new Promise((r) => setTimeout(r, 1));
  }
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { ops_per_s: n / s, ops_per_cpu_s: n / ((cpu.user + cpu.system) / 1e6) };
}

async function eventBench(hubPkg, natsPkg, n, roundCount) {
  const ncA = await natsPkg.connectNats({ url: NATS_URL });
  const ncB = await natsPkg.connectNats({ url: NATS_URL });
  const cluster = `${CLUSTER}ev`;
  const { busA, busB, a, b } = await startEventBridges(hubPkg, natsPkg, ncA, ncB, cluster);
  let got = 0;
  busB.subscribeJson({ types: ['DISPATCH_RESULT'] }, () => got++);
  const corr = { request_id: 'r', correlation_id: 'c', target: 'echo.echo' };
  let rawGot = 0;
  const subject = `bench.${cluster}.raw.events`;
  ncB.subscribe(subject, { callback: () => rawGot++ });
  await ncB.flush();
  const body = new TextEncoder().encode(
    JSON.stringify({
      id: '01J000000000000000000000000',
      type: 'DISPATCH_RESULT',
      ts: new Date().toISOString(),
      ...corr,
      data: { i: 0, ok: true },
    }),
  );
  const cases = [
    {
      label: 'finger-events',
      emit: (i) => busA.emit('DISPATCH_RESULT', corr, { i, ok: true }),
      reset: () => (got = 0),
      received: () => got,
    },
    { label: 'raw-pubsub', emit: () => ncA.publish(subject, body), reset: () => (rawGot = 0), received: () => rawGot },
  ];
  const rounds = cases.map(() => []);
  for (const c of cases) {
    c.reset();
    await measureEvents(c.label, c.emit, c.received, Math.min(n, 20_000)); // warmup
  }
  for (let r = 0; r < roundCount; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length; // alternate which goes first
      const c = cases[i];
      c.reset();
      collectGarbage();
      rounds[i].push(await measureEvents(c.label, c.emit, c.received, n));
    }
  }
  const rows = cases.map((c, i) => {
    const sorted = [...rounds[i]].sort((x, y) => x.ops_per_s - y.ops_per_s);
    return {
      system: c.label,
      scenario: 'events',
      ops_per_s: Math.round(sorted[Math.floor((sorted.length - 1) / 2)].ops_per_s),
      p50_us: null,
      p99_us: null,
      ops_per_cpu_s: Math.round(median(rounds[i].map((x) => x.ops_per_cpu_s))),
      ops_per_cpu_s_both: null,
    };
  });
  const stats = { sender: a.stats(), receiver: b.stats() };
  await a.close();
  await b.close();
  await Promise.allSettled([ncA.drain(), ncB.drain()]);
  return { rows, stats };
}

// ---- the caller process ----

function natsVersion() {
  try {
    return JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', 'nats', 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

const find = (rows, system, scenario) => rows.find((r) => r.system === system && r.scenario === scenario);

/** The median over rounds k of (p50 of `a` in round k) ÷ (p50 of `b` in round k). */
function pairedRatio(measured, a, b, scenario) {
  const rounds = (system) =>
    measured.find((m) => m.detail.system === system && m.detail.scenario === scenario).detail.rounds;
  const ra = rounds(a);
  const rb = rounds(b);
  return median(ra.map((x, k) => x.p50_us / rb[k].p50_us));
}

async function main() {
  const hubPkg = await importBuilt('packages/hub');
  const natsPkg = await importBuilt('packages/hub', 'nats.js');
  await requireBuilt('modules/echo');
  const probe = await natsPkg.connectNats({ url: NATS_URL, timeout_ms: 1000 }).catch(() => undefined);
  if (probe === undefined) throw new BenchSetupError(`no NATS server at ${NATS_URL} (set FINGER_BENCH_NATS_URL)`);
  await probe.close();

  if (ONLY_SCENARIOS?.length === 1 && ONLY_SCENARIOS[0] === 'events') {
    // a probe of the event rows alone (no serving process): both rows, their ratio, no results file
    const ev = await eventBench(hubPkg, natsPkg, EVENTS, EVENT_ROUNDS);
    printTable(BENCH, ev.rows);
    const fe = find(ev.rows, 'finger-events', 'events');
    const re = find(ev.rows, 'raw-pubsub', 'events');
    process.stdout.write(
      `events finger ÷ raw pub/sub: ${round(fe.ops_per_s / re.ops_per_s)}× ops/s, ${round(fe.ops_per_cpu_s / re.ops_per_cpu_s)}× per CPU-second\n`,
    );
    return;
  }

  const srv = startServer();
  process.once('exit', () => srv.child.kill('SIGKILL'));
  await srv.ready;
  const nc = await natsPkg.connectNats({ url: NATS_URL });
  const rawNc = await natsPkg.connectNats({ url: NATS_URL });
  let rs;
  rs = natsPkg.runtimeSwitch(hubPkg.createRuntime);
  const hub = new hubPkg.MessageHub({ createRuntime: rs.create });
  const node = new natsPkg.ClusterNode({
    hub,
    connection: nc,
    cluster: CLUSTER,
    auth: new natsPkg.WireAuth({ role: 'daemon', node: 'bench-caller', cluster_key: KEY }),
    importRemote: true,
    bridgeEvents: false,
  });
  rs.bind(node);
  await node.start();
  const broker = moleculerBroker('bench-caller');
  await broker.start();
  await broker.waitForServices('echo', 10_000);
  for (let i = 0; i < 200 && hub.registry.get('echo') === undefined; i++) await new Promise((r) => setTimeout(r, 50));
  if (hub.registry.get('echo')?.runtime !== 'nats') throw new Error('remote echo was not announced');

  const transport = node.transport;
  const env = () => echoEnvelope(SOURCE, PAYLOAD);
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const cases = {
    finger: () => hub.request({ target: 'echo', payload: PAYLOAD, source: SOURCE }),
    'finger-transport': () => transport.request(env()).then((r) => r.payload),
    'raw-nats': () =>
      rawNc
        .request(RAW_SUBJECT, enc.encode(JSON.stringify(PAYLOAD)), { timeout: 5000 })
        .then((m) => JSON.parse(dec.decode(m.data))),
    moleculer: () => broker.call('echo.echo', PAYLOAD),
  };
  for (const [label, fn] of Object.entries(cases)) {
    const got = await fn();
    if (!isDeepStrictEqual(got, PAYLOAD))
      throw new Error(`${label}: expected ${JSON.stringify(PAYLOAD)}, got ${JSON.stringify(got)}`);
  }
  try {
    const opts = suiteOptions();
    process.stderr.write(`${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case over ${NATS_URL}\n`);
    const list = [];
    for (const [system, fn] of Object.entries(cases)) {
      if (ONLY_SYSTEMS && !ONLY_SYSTEMS.includes(system)) continue;
      for (const [scenario, concurrency] of [
        ['c1', 1],
        ['c100', 100],
      ])
        if (!ONLY_SCENARIOS || ONLY_SCENARIOS.includes(scenario)) list.push({ system, scenario, concurrency, fn });
    }
    const measured = await runSuiteBoth(list, opts, srv.child.pid);
    if (ONLY_SYSTEMS || ONLY_SCENARIOS) {
      // a probe: the rows asked for and each round's p50, no events, ratios or results file
      printTable(
        BENCH,
        measured.map((m) => m.row),
      );
      for (const m of measured)
        process.stdout.write(
          `${m.detail.system} ${m.detail.scenario} p50 µs by round: ${m.detail.rounds.map((x) => Math.round(x.p50_us)).join(' ')}\n`,
        );
      const has = (system) => measured.some((m) => m.detail.system === system && m.detail.scenario === 'c1');
      if (has('finger') && has('raw-nats')) {
        const f1 = find(
          measured.map((m) => m.row),
          'finger',
          'c1',
        );
        const r1 = find(
          measured.map((m) => m.row),
          'raw-nats',
          'c1',
        );
        process.stdout.write(
          `c1 p50 finger ÷ raw: ${round(f1.p50_us / r1.p50_us)}; median of the per-round ratios: ${round(pairedRatio(measured, 'finger', 'raw-nats', 'c1'))}\n`,
        );
      }
      return;
    }
    const ev = await eventBench(hubPkg, natsPkg, EVENTS, EVENT_ROUNDS);
    const rows = [...measured.map((m) => m.row), ...ev.rows];
    const f100 = find(rows, 'finger', 'c100');
    const m100 = find(rows, 'moleculer', 'c100');
    const r100 = find(rows, 'raw-nats', 'c100');
    const f1 = find(rows, 'finger', 'c1');
    const r1 = find(rows, 'raw-nats', 'c1');
    const fe = find(rows, 'finger-events', 'events');
    const re = find(rows, 'raw-pubsub', 'events');
    const ratios = {
      c100_ops_finger_over_moleculer: round(f100.ops_per_s / m100.ops_per_s),
      c100_ops_finger_over_raw: round(f100.ops_per_s / r100.ops_per_s),
      c100_p99_finger_over_moleculer: round(f100.p99_us / m100.p99_us),
      c1_p50_finger_over_raw: round(f1.p50_us / r1.p50_us),
      // the same from the rounds run side by side (round k of both cases ran in one rotation, so a
      // change of machine load between rounds moves both): the median of the per-round ratios
      c1_p50_finger_over_raw_paired: round(pairedRatio(measured, 'finger', 'raw-nats', 'c1')),
      c100_ops_transport_over_raw: round(find(rows, 'finger-transport', 'c100').ops_per_s / r100.ops_per_s),
      events_finger_over_raw: round(fe.ops_per_s / re.ops_per_s),
      // per CPU-second of both processes (requests) or of this one (events): steadier under load
      c100_cpu_finger_over_moleculer: round(f100.ops_per_cpu_s_both / m100.ops_per_cpu_s_both),
      c100_cpu_finger_over_raw: round(f100.ops_per_cpu_s_both / r100.ops_per_cpu_s_both),
      events_cpu_finger_over_raw: round(fe.ops_per_cpu_s / re.ops_per_cpu_s),
    };
    const target = {
      rule: 'c100: finger ≥ 1.2× moleculer and ≥ 1.0× raw, p99 ≤ moleculer; c1 p50 ≤ 1.3× raw (issue 26: node:crypto HMAC-SHA256 frames); events ≥ 0.5× raw',
      c100_vs_moleculer: ratios.c100_ops_finger_over_moleculer >= 1.2,
      c100_vs_raw: ratios.c100_ops_finger_over_raw >= 1.0,
      c100_p99: f100.p99_us <= m100.p99_us,
      c1_p50: ratios.c1_p50_finger_over_raw <= 1.3,
      events: ratios.events_finger_over_raw >= 0.5,
    };
    printTable(BENCH, rows);
    const yes = (b) => (b ? 'yes' : 'NO');
    process.stdout.write(
      [
        '',
        `c100 finger ÷ moleculer: ${ratios.c100_ops_finger_over_moleculer}× ops/s (target 1.2: ${yes(target.c100_vs_moleculer)}), p99 ratio ${ratios.c100_p99_finger_over_moleculer} (≤ 1: ${yes(target.c100_p99)})`,
        `c100 finger ÷ raw nats.js: ${ratios.c100_ops_finger_over_raw}× ops/s (target 1.0: ${yes(target.c100_vs_raw)}); transport alone ÷ raw: ${ratios.c100_ops_transport_over_raw}×`,
        `c1 p50 finger ÷ raw nats.js: ${ratios.c1_p50_finger_over_raw} (target ≤ 1.3: ${yes(target.c1_p50)}); median of the per-round ratios: ${ratios.c1_p50_finger_over_raw_paired}`,
        `events finger ÷ raw pub/sub: ${ratios.events_finger_over_raw}× (target 0.5: ${yes(target.events)})`,
        `per CPU-second (ops_per_cpu_s_both: caller + serving process): c100 finger ÷ moleculer ${ratios.c100_cpu_finger_over_moleculer}×, ÷ raw ${ratios.c100_cpu_finger_over_raw}×; events finger ÷ raw ${ratios.events_cpu_finger_over_raw}× (this process)`,
        '',
      ].join('\n'),
    );
    const file = writeResults(BENCH, rows, {
      ratios: { ...ratios, target },
      moleculer: requireBenchDep('moleculer').MOLECULER_VERSION,
      nats_js: natsVersion(),
      options: { ...opts, nats_url: NATS_URL, events: EVENTS, event_rounds: EVENT_ROUNDS },
      notes: [
        'Two processes on one machine and one nats-server: this one calls, a child process serves (finger: MessageHub + ClusterNode with modules/echo; raw: a nats.js responder echoing the bytes; Moleculer: a broker with the NATS transporter and an echo action).',
        'finger = the caller hub.request(): the remote echo is a {type:"nats"} module in the local registry (lease, guards, concurrency gate), then NatsTransport: the envelope as a positional JSON array after a frame line with a timestamp and two signatures (the cluster key and the serve key of the called module; node:crypto HMAC-SHA256 over the frame version, key id, kind, node, timestamp, subject and body, the whole tag: wire FW6), verified and schema-validated on both ends; the reply carries id, source, timestamp, payload and error, signed once. finger-transport = NatsTransport.request() alone.',
        'All three request/reply systems send the same payload ({text:"hi"}). ops_per_cpu_s = ops ÷ CPU of this (calling) process; ops_per_cpu_s_both = ops ÷ CPU of both processes in the round (the NATS server not counted). Every case is warmed up, then the cases run interleaved in rotating order for BENCH_ROUNDS rounds; each row is the median round.',
        'raw-nats = nc.request() with noAsyncTraces, JSON encode/decode of the payload on the caller only.',
        "events: finger-events = LocalEventBus.emit on one connection → NatsEventBridge batches (≤ 256 per signed message) → the other connection → dedup → LocalEventBus.publish; raw-pubsub = nc.publish of a similar JSON event, counted by a subscriber on the other connection. Both in this process, 1000 emits per event-loop turn; ops/s = events ÷ time until the last one arrived; BENCH_NATS_EVENT_ROUNDS (3) alternating rounds after a warmup, the median reported; ops_per_cpu_s = events ÷ this process's CPU (both ends).",
      ],
      event_stats: ev.stats,
      detail: measured.map((m) => m.detail),
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    srv.child.kill('SIGTERM');
    await Promise.allSettled([node.close(), broker.stop()]);
    await hub.close(100);
    await Promise.allSettled([nc.drain(), rawNc.drain()]);
  }
}

if (process.argv[2] === '--server') {
  server().catch((e) => {
    process.stderr.write(`bench server failed: ${e?.stack ?? e}\n`);
    process.exit(1);
  });
} else {
  runBench(BENCH, main);
}

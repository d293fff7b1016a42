// Profiling driver for hub-nats: starts the serving process (index.mjs --server) and runs one
// case at a fixed concurrency for a fixed number of calls, so both processes can be profiled
// with `node --cpu-prof` (the serving process gets its flags from PROFILE_SERVER_ARGS). Prints
// calls/s, p50, the CPU µs per call of each process (from /proc, system part in brackets), and the
// caller's socket writes and bytes per call.
//
//   node bench/hub-nats/profile.mjs [finger|finger-transport|raw-nats|moleculer] [calls] [concurrency]
//   PROFILE_SERVER_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node --cpu-prof … profile.mjs finger
// Env: PAYLOAD_BYTES (a {text} payload of that size), PENDING_LIMIT (the caller connection's
// nats.js flush threshold), COUNT_EVENTS=1 (events the caller hub emits per call),
// PROFILE_SERVER_LOG (file for the serving process's stdout, e.g. with --trace-gc).

import { spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { importBuilt } from '../lib/bench-main.mjs';
import { echoEnvelope, KEY } from './setup.mjs';

const NATS_URL = process.env.FINGER_BENCH_NATS_URL ?? process.env.FINGER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const CLUSTER = `prof${process.pid}`;
const SOURCE = Object.freeze({ kind: 'human', id: 'bench', roles: ['operator'] });
const PAYLOAD = process.env.PAYLOAD_BYTES ? { text: 'x'.repeat(Number(process.env.PAYLOAD_BYTES)) } : { text: 'hi' };
const [label = 'finger', callsArg = '100000', concArg = '100'] = process.argv.slice(2);

/** CPU seconds (user + system) of process `pid` from /proc. */
function cpuOf(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
/** System CPU seconds of process `pid`. */
function sysOf(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[12]) / 100;
}

/** The pid of the local nats-server (its CPU per call is printed too), if one runs here. */
function natsServerPid() {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'nats-server') return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}
const natsPid = natsServerPid();

const hubPkg = await importBuilt('packages/hub');
const natsPkg = await importBuilt('packages/hub', 'nats.js');
const extra = (process.env.PROFILE_SERVER_ARGS ?? '').split(' ').filter(Boolean);
const child = spawn(process.execPath, [...extra, join(fileURLToPath(import.meta.url), '..', 'index.mjs'), '--server'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, BENCH_NATS_CLUSTER: CLUSTER },
});
// PROFILE_SERVER_LOG: a file the serving process's stdout goes to (e.g. with --trace-gc)
if (process.env.PROFILE_SERVER_LOG) child.stdout.pipe(createWriteStream(process.env.PROFILE_SERVER_LOG));
await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
  child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
});
const nc = await natsPkg.connectNats({ url: NATS_URL });
const rs = natsPkg.runtimeSwitch(hubPkg.createRuntime);
const hub = new hubPkg.MessageHub({ createRuntime: rs.create });
const node = new natsPkg.ClusterNode({
  hub,
  connection: nc,
  cluster: CLUSTER,
  auth: new natsPkg.WireAuth({ role: 'daemon', node: 'prof-caller', cluster_key: KEY }),
  importRemote: true,
  bridgeEvents: false,
});
rs.bind(node);
await node.start();
for (let i = 0; i < 200 && hub.registry.get('echo') === undefined; i++) await new Promise((r) => setTimeout(r, 50));
const enc = new TextEncoder();
const dec = new TextDecoder();
const env = () => echoEnvelope(SOURCE, PAYLOAD);
const fns = {
  finger: () => hub.request({ target: 'echo', payload: PAYLOAD, source: SOURCE }),
  'finger-transport': () => node.transport.request(env()),
  'raw-nats': () =>
    nc
      .request(`bench.${CLUSTER}.raw.echo`, enc.encode(JSON.stringify(PAYLOAD)), { timeout: 5000 })
      .then((m) => JSON.parse(dec.decode(m.data))),
};
let broker;
if (label === 'moleculer') {
  // the peer: Moleculer's broker.call over its NATS transporter (as index.mjs builds it)
  const { ServiceBroker } = createRequire(join(fileURLToPath(import.meta.url), '..', '..', 'package.json'))(
    'moleculer',
  );
  broker = new ServiceBroker({
    nodeID: 'prof-caller',
    namespace: CLUSTER,
    logger: false,
    metrics: false,
    tracing: false,
    transporter: { type: 'NATS', options: { url: NATS_URL } },
  });
  await broker.start();
  await broker.waitForServices('echo');
  fns.moleculer = () => broker.call('echo.echo', PAYLOAD);
}
const fn = fns[label];
const calls = Number(callsArg);
const conc = Number(concArg);
const lat = [];
async function run(n) {
  let issued = 0;
  lat.length = 0;
  const worker = async () => {
    while (issued < n) {
      issued++;
      const t = process.hrtime.bigint();
      await fn();
      lat.push(Number(process.hrtime.bigint() - t) / 1e3);
    }
  };
  await Promise.all(Array.from({ length: conc }, worker));
}
await run(Math.min(calls, 20_000)); // warmup
const evTypes = new Map();
if (process.env.COUNT_EVENTS) hub.events.subscribe({}, (e) => evTypes.set(e.type, (evTypes.get(e.type) ?? 0) + 1));
if (process.env.PENDING_LIMIT) nc.protocol.pendingLimit = Number(process.env.PENDING_LIMIT);
const tr = nc.protocol.transport;
const send0 = tr.send.bind(tr);
let writes = 0;
let bytes = 0;
tr.send = (d) => {
  writes++;
  bytes += d.length;
  return send0(d);
};
const st0 = nc.stats();
const c0 = cpuOf(process.pid);
const cs0 = sysOf(process.pid);
const ss0 = sysOf(child.pid);
const s0 = cpuOf(child.pid);
const n0 = natsPid === undefined ? 0 : cpuOf(natsPid);
const t0 = process.hrtime.bigint();
await run(calls);
const s = Number(process.hrtime.bigint() - t0) / 1e9;
const callerUs = ((cpuOf(process.pid) - c0) / calls) * 1e6;
const serverUs = ((cpuOf(child.pid) - s0) / calls) * 1e6;
const natsUs = natsPid === undefined ? NaN : ((cpuOf(natsPid) - n0) / calls) * 1e6;
const callerSys = ((sysOf(process.pid) - cs0) / calls) * 1e6;
const serverSys = ((sysOf(child.pid) - ss0) / calls) * 1e6;
const st1 = nc.stats();
lat.sort((x, y) => x - y);
process.stdout.write(
  `${label} c${conc}: ${Math.round(calls / s)} calls/s, p50 ${Math.round(lat[Math.floor(lat.length / 2)])} µs; CPU per call: caller ${callerUs.toFixed(1)} µs (sys ${callerSys.toFixed(1)}), server ${serverUs.toFixed(1)} µs (sys ${serverSys.toFixed(1)}), nats-server ${natsUs.toFixed(1)} µs; caller socket writes per call ${(writes / calls).toFixed(3)}, bytes per call ${Math.round(bytes / calls)}, NATS messages out/in per call ${((st1.outMsgs - st0.outMsgs) / calls).toFixed(3)}/${((st1.inMsgs - st0.inMsgs) / calls).toFixed(3)}\n`,
);
if (process.env.COUNT_EVENTS)
  process.stdout.write(
    `events per call: ${JSON.stringify(Object.fromEntries([...evTypes].map(([t, n]) => [t, n / calls])))}\n`,
  );
await broker?.stop();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await node.close();
await hub.close(100);
await nc.drain();

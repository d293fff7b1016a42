// Profiling driver for the events half of hub-nats: one LocalEventBus → NatsEventBridge → NATS →
// NatsEventBridge → LocalEventBus in this process; prints events/s and CPU µs per event.
//   node --cpu-prof bench/hub-nats/profile-events.mjs [events]
import { importBuilt } from '../lib/bench-main.mjs';
import { startEventBridges } from './setup.mjs';

const NATS_URL = process.env.FINGER_BENCH_NATS_URL ?? process.env.FINGER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const n = Number(process.argv[2] ?? 200_000);
const hubPkg = await importBuilt('packages/hub');
const natsPkg = await importBuilt('packages/hub', 'nats.js');
const ncA = await natsPkg.connectNats({ url: NATS_URL });
const ncB = await natsPkg.connectNats({ url: NATS_URL });
const cluster = `profev${process.pid}`;
const { busA, busB, a, b } = await startEventBridges(hubPkg, natsPkg, ncA, ncB, cluster);
let got = 0;
busB.subscribeJson({ types: ['DISPATCH_RESULT'] }, () => got++);
const corr = { request_id: 'r', correlation_id: 'c', target: 'echo.echo' };
const turn = () => new Promise((r) => setImmediate(r));
async function run(count) {
  got = 0;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < count; i += 1000) {
    for (let k = 0; k < 1000 && i + k < count; k++) busA.emit('DISPATCH_RESULT', corr, { i: i + k, ok: true });
    await turn();
  }
  while (got < count) await new Promise((r) => setTimeout(r, 1));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  return { eps: Math.round(count / s), cpu_us: ((cpu.user + cpu.system) / count).toFixed(2) };
}
await run(20_000);
const r = await run(n);
process.stdout.write(`events: ${r.eps}/s, CPU ${r.cpu_us} µs per event (both ends)\n`);
await a.close();
await b.close();
await Promise.allSettled([ncA.drain(), ncB.drain()]);

// One hub per process, as the daemon runs it: MessageHub + the echo module at c100 with no
// interceptor (`off`), a no-op interceptor (`noop`) or the firewall interceptor under the
// 200-rule admin policy (`on`). Run by index.mjs in interleaved child processes, so the rows do
// not share one process's JIT state (in index.mjs's own hub rows, five hubs with different
// interceptor chains make the hub's call sites polymorphic). Prints one JSON line.
//   node bench/firewall/isolated.mjs <off|noop|on> [seconds]

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT } from '../lib/bench-main.mjs';
import { AGENT, isolatedHub } from './setup.mjs';

const mode = process.argv[2] ?? 'on';
const seconds = Number(process.argv[3] ?? 3);
const fw = await importBuilt('packages/firewall');
const hubPkg = await importBuilt('packages/hub');
const home = await mkdtemp(join(tmpdir(), 'finger-fw-iso-'));
try {
  const hub = await isolatedHub(mode, home, fw, hubPkg, REPO_ROOT);
  const call = () =>
    hub.request({ target: 'echo', payload: { text: 'hi' }, source: AGENT, session_id: 'bench-session' });
  const run = async (ms) => {
    const end = Date.now() + ms;
    let n = 0;
    const worker = async () => {
      while (Date.now() < end) {
        for (let i = 0; i < 500; i++) {
          await call();
          n++;
        }
      }
    };
    await Promise.all(Array.from({ length: 100 }, worker));
    return n;
  };
  await run(500); // warm-up
  globalThis.gc?.();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const n = await run(seconds * 1000);
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const failed = hub.stats().calls_failed;
  if (failed !== 0) throw new Error(`${failed} failed calls`);
  process.stdout.write(
    `${JSON.stringify({ mode, calls: n, ops_per_s: Math.round(n / s), ops_per_cpu_s: Math.round(n / ((c.user + c.system) / 1e6)) })}\n`,
  );
  await hub.close(1000);
} finally {
  await rm(home, { recursive: true, force: true });
}

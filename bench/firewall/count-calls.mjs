// Driver for instructions.mjs (not part of `npm run bench`): MessageHub + echo at c100 as
// isolated.mjs builds it (off | noop | on), a fixed number of calls to warm up, a line "warm" on
// stdout, a pause (instructions.mjs switches callgrind's counting on then), then `calls` calls.
//   node bench/firewall/count-calls.mjs <off|noop|on> <calls> [warmup]

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT } from '../lib/bench-main.mjs';
import { AGENT, isolatedHub } from './setup.mjs';

const mode = process.argv[2] ?? 'on';
const calls = Number(process.argv[3] ?? 200_000);
const warmup = Number(process.argv[4] ?? 300_000);
const fw = await importBuilt('packages/firewall');
const hubPkg = await importBuilt('packages/hub');
const home = await mkdtemp(join(tmpdir(), 'finger-fw-count-'));
try {
  const hub = await isolatedHub(mode, home, fw, hubPkg, REPO_ROOT);
  let left = 0;
  const worker = async () => {
    while (left > 0) {
      left--;
      await hub.request({ target: 'echo', payload: { text: 'hi' }, source: AGENT, session_id: 'bench-session' });
    }
  };
  const run = async (n) => {
    left = n;
    await Promise.all(Array.from({ length: 100 }, worker));
  };
  await run(warmup);
  process.stdout.write('warm\n');
  await new Promise((r) => setTimeout(r, 3000));
  await run(calls);
  const failed = hub.stats().calls_failed;
  if (failed !== 0) throw new Error(`${failed} failed calls`);
  process.stdout.write(`done ${mode} ${calls}\n`);
  await hub.close(1000);
} finally {
  await rm(home, { recursive: true, force: true });
}

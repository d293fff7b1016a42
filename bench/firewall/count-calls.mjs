// Driver for instructions.mjs (not part of `npm run bench`): MessageHub + echo at c100 as
// isolated.mjs builds it (off | noop | on), a fixed number of calls to warm up, a line "warm" on
// stdout, a pause (instructions.mjs switches callgrind's counting on then), then `calls` calls.
//   node bench/firewall/count-calls.mjs <off|noop|on> <calls> [warmup]

import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT } from '../lib/bench-main.mjs';
import { advancingClock, AGENT, policy200 } from './setup.mjs';

const mode = process.argv[2] ?? 'on';
const calls = Number(process.argv[3] ?? 200_000);
const warmup = Number(process.argv[4] ?? 300_000);
const fw = await importBuilt('packages/firewall');
const hubPkg = await importBuilt('packages/hub');
const home = await mkdtemp(join(tmpdir(), 'finger-fw-count-'));
try {
  mkdirSync(join(home, 'config'));
  writeFileSync(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy200()));
  const hub = new hubPkg.MessageHub({
    events: new hubPkg.LocalEventBus({ store: new hubPkg.FileEventStore({ dir: join(home, 'events') }) }),
  });
  await hub.registry.loadFile(join(REPO_ROOT, 'modules', 'echo', 'module.json'));
  if (mode === 'noop') hub.use((_call, next) => next());
  if (mode === 'on') {
    const assessor = await fw.RiskAssessor.create();
    const store = fw.PolicyStore.load({ home, homeDir: home, assessor });
    const engine = new fw.FirewallEngine({
      policy: store,
      risk: assessor,
      sandbox: new fw.PathSandbox({ workspaceRoots: [home], home, homeDir: home }),
      clock: advancingClock(),
    });
    hub.use(
      fw.createFirewallInterceptor({ engine, tools: { get: (id) => hub.tools.metadata(id) }, events: hub.events }),
    );
  }
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

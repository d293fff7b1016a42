// Profiling helper (not part of `npm run bench`): drives MessageHub + echo at c100 through the
// firewall interceptor (as the `c100-firewall-on` row does) for a few seconds, so that
// `node --cpu-prof bench/firewall/profile.mjs [seconds] [on|off|noop]` shows where the time goes
// (`noop`: an interceptor that only calls next(), the hub's own cost of an interceptor chain).
// `node bench/firewall/profile.mjs --summary <file.cpuprofile>` prints self time per function.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT } from '../lib/bench-main.mjs';

function summary(file) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const self = new Map();
  const dt = prof.timeDeltas;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const hits = new Map();
  prof.samples.forEach((id, i) => hits.set(id, (hits.get(id) ?? 0) + (dt[i] ?? 0)));
  let total = 0;
  for (const [id, us] of hits) {
    const n = byId.get(id);
    const f = n.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.replace(/^.*\/(packages|modules|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
    total += us;
  }
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 40);
  for (const [k, us] of rows) process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}\n`);
}

async function drive(seconds, mode) {
  const withFirewall = mode === 'on';
  const fw = await importBuilt('packages/firewall');
  const hubPkg = await importBuilt('packages/hub');
  const home = await mkdtemp(join(tmpdir(), 'finger-fw-prof-'));
  try {
    const assessor = await fw.RiskAssessor.create();
    const store = fw.PolicyStore.load({ home, homeDir: home, assessor });
    let t = Date.now();
    const engine = new fw.FirewallEngine({
      policy: store,
      risk: assessor,
      sandbox: new fw.PathSandbox({ workspaceRoots: [home], home, homeDir: home }),
      clock: { now: () => (t += 61_000) },
    });
    const hub = new hubPkg.MessageHub({
      events: new hubPkg.LocalEventBus({ store: new hubPkg.FileEventStore({ dir: join(home, 'events') }) }),
    });
    await hub.registry.loadFile(join(REPO_ROOT, 'modules', 'echo', 'module.json'));
    if (mode === 'noop') hub.use((_call, next) => next());
    if (withFirewall)
      hub.use(
        fw.createFirewallInterceptor({ engine, tools: { get: (id) => hub.tools.metadata(id) }, events: hub.events }),
      );
    const AGENT = Object.freeze({ kind: 'agent', id: 'bench-agent', roles: ['agent:executor'] });
    const end = Date.now() + seconds * 1000;
    let n = 0;
    const worker = async () => {
      while (Date.now() < end) {
        for (let i = 0; i < 1000; i++) {
          await hub.request({ target: 'echo', payload: { text: 'hi' }, source: AGENT, session_id: 'bench-session' });
          n++;
        }
      }
    };
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await Promise.all(Array.from({ length: 100 }, worker));
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    const fmt = (x) => Math.round(x).toLocaleString('en-US');
    process.stdout.write(`${mode}: ${fmt(n / s)} calls/s, ${fmt(n / cpu)} calls/cpu-s\n`);
    await hub.close(1000);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--summary') summary(process.argv[3]);
else await drive(Number(process.argv[2] ?? 5), process.argv[3] ?? 'on');

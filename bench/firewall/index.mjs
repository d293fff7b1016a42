// firewall: what the firewall costs per tool call on the AUTO path — FirewallEngine.evaluate()
// under an admin policy of 200 rules, for shell commands of realistic length (with and without a
// cwd to resolve) and a file read — and what it costs the hub: dispatch throughput of the echo
// module at c100 with the firewall interceptor off and on (and on with the audit log, for scale:
// that row pays a group-committed fsync). See README.md in this folder.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { importBuilt, REPO_ROOT, requireBuilt, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round, runSuite } from '../lib/suite.mjs';
import { advancingClock, AGENT, policy200 } from './setup.mjs';

const BENCH = 'firewall';
const TARGET = { p50_us: 10, p99_us: 50, hub_on_over_off: 0.7 };

/** Everyday read-only agent commands (safe → AUTO): plain words take the fast path, the rest a cached parse. */
const COMMANDS = [
  'git status',
  'ls -la packages/firewall/src',
  'git log --oneline -n 20 -- packages/firewall/src/index.ts',
  'rg -n "TODO|FIXME" packages/hub/src',
  'git diff --stat HEAD~3 -- packages/firewall',
  'cat package.json',
  'grep -rn "export class" packages/firewall/src | head -n 40',
  'wc -l packages/firewall/src/engine/firewall-engine.ts',
  'find packages -name "*.test.ts" -newer package.json',
  'git show --stat HEAD',
];

function toolMeta(manifest, name) {
  const t = manifest.tools.find((x) => x.name === name);
  return {
    risk_level: t.risk_level,
    capability_level: t.capability_level,
    side_effects: t.side_effects,
    input_schema: t.input_schema,
  };
}

const ISOLATED = fileURLToPath(new URL('./isolated.mjs', import.meta.url));

/**
 * The hub rows again, one hub per child process as the daemon runs it (off / noop / on
 * interleaved, `rounds` times): medians of ops/s and ops per CPU-second per mode.
 */
function isolatedRows(rounds, seconds) {
  const runs = { off: [], noop: [], on: [] };
  for (let r = 0; r < rounds; r++)
    for (const mode of Object.keys(runs)) {
      const out = execFileSync(process.execPath, ['--expose-gc', ISOLATED, mode, String(seconds)], {
        encoding: 'utf8',
      });
      runs[mode].push(JSON.parse(out.trim().split('\n').pop()));
    }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return Object.fromEntries(
    Object.entries(runs).map(([mode, xs]) => [
      mode,
      {
        ops_per_s: median(xs.map((x) => x.ops_per_s)),
        ops_per_cpu_s: median(xs.map((x) => x.ops_per_cpu_s)),
        runs: xs.map((x) => x.ops_per_s),
      },
    ]),
  );
}

runBench(BENCH, async () => {
  const fw = await importBuilt('packages/firewall');
  const hubPkg = await importBuilt('packages/hub');
  await requireBuilt('modules/echo');
  const { readFileSync } = await import('node:fs');
  const shellManifest = JSON.parse(readFileSync(join(REPO_ROOT, 'modules', 'shell', 'module.json'), 'utf8'));
  const fsManifest = JSON.parse(readFileSync(join(REPO_ROOT, 'modules', 'fs', 'module.json'), 'utf8'));

  const dirs = [];
  const tmp = async (label) => {
    const d = await mkdtemp(join(tmpdir(), `finger-bench-fw-${label}-`));
    dirs.push(d);
    return d;
  };
  const home = await tmp('home');
  const ws = await tmp('ws');
  mkdirSync(join(ws, 'packages', 'firewall', 'src'), { recursive: true });
  writeFileSync(join(ws, 'packages', 'firewall', 'src', 'index.ts'), 'export {};\n');
  mkdirSync(join(home, 'config'));
  writeFileSync(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy200()));

  const assessor = await fw.RiskAssessor.create();
  const store = fw.PolicyStore.load({ home, homeDir: home, assessor });
  if (store.current().admin.rules.length !== 200) throw new Error('the policy does not hold 200 rules');
  const makeEngine = (over = {}) =>
    new fw.FirewallEngine({
      policy: store,
      risk: assessor,
      sandbox: new fw.PathSandbox({ workspaceRoots: [ws], home, homeDir: home }),
      clock: advancingClock(),
      ...over,
    });
  const engine = makeEngine();
  // the whole pipeline on every call, as for a call seen for the first time (the target)
  const uncached = makeEngine({ verdict_cache_size: 0 });
  const shellTool = toolMeta(shellManifest, 'exec');
  const fsRead = toolMeta(fsManifest, 'read');
  // the same shape (property order) as the facts the interceptor builds for the hub rows
  const facts = (tool_id, tool, args) => ({
    tool_id,
    args,
    principal: AGENT,
    session_id: 'bench-session',
    request_id: 'r',
    correlation_id: 'c',
    direct: false,
    tool,
  });
  const shellFacts = COMMANDS.map((command) => facts('shell.exec', shellTool, { command }));
  const cwdFacts = COMMANDS.map((command) => facts('shell.exec', shellTool, { command, cwd: 'packages/firewall' }));
  const readFacts = facts('fs.read', fsRead, { path: 'packages/firewall/src/index.ts' });
  for (const f of [...shellFacts, ...cwdFacts, readFacts]) {
    const ev = uncached.evaluate(f);
    if (ev.action !== 'allow')
      throw new Error(`not on the AUTO path: ${JSON.stringify(f.args)} → ${ev.level} (${ev.reasons.join('; ')})`);
  }

  // hubs: echo through the interceptor chain, firewall off / on / on with the audit log
  const startHub = async (label) => {
    const dir = await tmp(label);
    const hub = new hubPkg.MessageHub({
      events: new hubPkg.LocalEventBus({ store: new hubPkg.FileEventStore({ dir }) }),
    });
    await hub.registry.loadFile(join(REPO_ROOT, 'modules', 'echo', 'module.json'));
    return hub;
  };
  const hubOff = await startHub('off');
  const hubNoop = await startHub('noop');
  // the hub's own cost of an interceptor chain: one interceptor that only calls next()
  hubNoop.use((_call, next) => next());
  const hubOn = await startHub('on');
  const hubEvents = await startHub('events');
  const hubAudit = await startHub('audit');
  const engineOn = makeEngine();
  hubOn.use(
    fw.createFirewallInterceptor({
      engine: engineOn,
      tools: { get: (id) => hubOn.tools.metadata(id) },
      events: hubOn.events,
    }),
  );
  hubEvents.use(
    fw.createFirewallInterceptor({
      engine: makeEngine(),
      tools: { get: (id) => hubEvents.tools.metadata(id) },
      events: hubEvents.events,
      auto_events: true,
    }),
  );
  const audit = await fw.AuditLog.open({ dir: await tmp('auditlog') });
  hubAudit.use(
    fw.createFirewallInterceptor({
      engine: makeEngine(),
      tools: { get: (id) => hubAudit.tools.metadata(id) },
      events: hubAudit.events,
      audit,
    }),
  );
  const verdicts = { on: 0, events: 0 };
  hubOn.events.subscribe({ types: ['FIREWALL_VERDICT'] }, () => verdicts.on++);
  hubEvents.events.subscribe({ types: ['FIREWALL_VERDICT'] }, (e) => {
    if (e.data.action === 'allow') verdicts.events++;
  });
  const PAYLOAD = { text: 'hi' };
  const dispatch = (hub) => () =>
    hub.request({ target: 'echo', payload: { text: 'hi' }, source: AGENT, session_id: 'bench-session' });
  const HUBS = [
    ['off', hubOff],
    ['noop', hubNoop],
    ['on', hubOn],
    ['events', hubEvents],
    ['audit', hubAudit],
  ];
  for (const [name, hub] of HUBS) {
    const got = await dispatch(hub)();
    if (!isDeepStrictEqual(got, PAYLOAD)) throw new Error(`hub ${name}: unexpected result ${JSON.stringify(got)}`);
  }

  try {
    let i = 0;
    let j = 0;
    let k = 0;
    const opts = suiteOptions();
    process.stderr.write(
      `${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`,
    );
    const measured = await runSuite(
      [
        { system: 'baseline', scenario: 'noop', concurrency: 1, fn: () => undefined },
        {
          system: 'finger',
          scenario: 'auto-200-rules',
          concurrency: 1,
          fn: () => uncached.evaluate(shellFacts[i++ % shellFacts.length]),
        },
        {
          system: 'finger',
          scenario: 'auto-200-rules-cached',
          concurrency: 1,
          fn: () => engine.evaluate(shellFacts[k++ % shellFacts.length]),
        },
        {
          system: 'finger',
          scenario: 'auto-200-rules-cwd',
          concurrency: 1,
          fn: () => engine.evaluate(cwdFacts[j++ % cwdFacts.length]),
        },
        { system: 'finger', scenario: 'auto-fs-read', concurrency: 1, fn: () => engine.evaluate(readFacts) },
        { system: 'hub', scenario: 'c100-firewall-off', concurrency: 100, fn: dispatch(hubOff) },
        { system: 'hub', scenario: 'c100-noop-interceptor', concurrency: 100, fn: dispatch(hubNoop) },
        { system: 'hub', scenario: 'c100-firewall-on', concurrency: 100, fn: dispatch(hubOn) },
        { system: 'hub', scenario: 'c100-firewall-on-events', concurrency: 100, fn: dispatch(hubEvents) },
        { system: 'hub', scenario: 'c100-firewall-on-audit', concurrency: 100, fn: dispatch(hubAudit) },
      ],
      opts,
    );
    const cpuOf = new Map(measured.rows.map((r, x) => [`${r.system}/${r.scenario}`, measured.opsPerCpuS[x]]));
    const base = measured.rows.find((r) => r.system === 'baseline');
    const rows = measured.rows.filter((r) => r.system !== 'baseline');
    const row = (s) => rows.find((r) => r.scenario === s);
    const own = (r) => round(1e6 / r.ops_per_s - 1e6 / base.ops_per_s);
    for (const [name, hub] of HUBS) {
      const s = hub.stats();
      if (s.calls_failed !== 0) throw new Error(`hub ${name}: ${s.calls_failed} failed calls`);
    }
    const auto = row('auto-200-rules');
    // one process's throughput varies ±15% from run to run (JIT and heap layout): 9 rounds by default
    const isoRounds = Number(process.env.BENCH_FW_ISOLATED_ROUNDS ?? 9);
    process.stderr.write(
      `${BENCH}: hub rows again, one hub per child process (${isoRounds} interleaved rounds of off/noop/on)\n`,
    );
    const iso = isolatedRows(isoRounds, 2);
    const ratios = {
      isolated_on_over_off: round(iso.on.ops_per_s / iso.off.ops_per_s),
      isolated_on_over_off_cpu: round(iso.on.ops_per_cpu_s / iso.off.ops_per_cpu_s),
      isolated_noop_over_off: round(iso.noop.ops_per_s / iso.off.ops_per_s),
      hub_c100_on_over_off: round(row('c100-firewall-on').ops_per_s / row('c100-firewall-off').ops_per_s),
      hub_c100_on_events_over_off: round(row('c100-firewall-on-events').ops_per_s / row('c100-firewall-off').ops_per_s),
      hub_c100_on_audit_over_off: round(row('c100-firewall-on-audit').ops_per_s / row('c100-firewall-off').ops_per_s),
    };
    ratios.hub_c100_noop_interceptor_over_off = round(
      row('c100-noop-interceptor').ops_per_s / row('c100-firewall-off').ops_per_s,
    );
    ratios.hub_c100_on_over_off_cpu = round(cpuOf.get('hub/c100-firewall-on') / cpuOf.get('hub/c100-firewall-off'));
    ratios.hub_c100_chain_cost_us = round(
      1e6 / row('c100-noop-interceptor').ops_per_s - 1e6 / row('c100-firewall-off').ops_per_s,
    );
    ratios.hub_c100_firewall_cost_us = round(
      1e6 / row('c100-firewall-on').ops_per_s - 1e6 / row('c100-firewall-off').ops_per_s,
    );
    const target = {
      rule: `auto-200-rules p50 ≤ ${TARGET.p50_us} µs and p99 ≤ ${TARGET.p99_us} µs; hub c100 with the firewall on ≥ ${TARGET.hub_on_over_off} × off (at most 30% of throughput)`,
      p50_met: auto.p50_us <= TARGET.p50_us,
      p99_met: auto.p99_us <= TARGET.p99_us,
      // one hub per process, as in the daemon (the in-process rows share one JIT across five hubs)
      hub_met: ratios.isolated_on_over_off >= TARGET.hub_on_over_off,
    };
    target.met = target.p50_met && target.p99_met && target.hub_met;
    const yes = (b) => (b ? 'yes' : 'NO');
    printTable(
      BENCH,
      rows.map((r) => ({
        ...r,
        ops_per_cpu_s: cpuOf.get(`${r.system}/${r.scenario}`),
        own_us: r.system === 'finger' ? own(r) : null,
      })),
    );
    process.stdout.write(
      [
        '',
        `harness alone (op = noop): ${base.ops_per_s.toLocaleString('en-US')} ops/s, p50 ${base.p50_us} µs (own_us = 1/ops − 1/noop)`,
        `hub c100 firewall on ÷ off: ${ratios.hub_c100_on_over_off}× ops/s; with an event per AUTO verdict: ${ratios.hub_c100_on_events_over_off}×; with the audit log: ${ratios.hub_c100_on_audit_over_off}×`,
        `one hub per process (median of ${isoRounds} interleaved runs): off ${iso.off.ops_per_s.toLocaleString('en-US')}, noop ${iso.noop.ops_per_s.toLocaleString('en-US')}, on ${iso.on.ops_per_s.toLocaleString('en-US')} ops/s → on ÷ off ${ratios.isolated_on_over_off}× (per CPU-second ${ratios.isolated_on_over_off_cpu}×; noop ÷ off ${ratios.isolated_noop_over_off}×)`,
        `  per-round on ÷ off (one process each): ${iso.on.runs.map((on, i) => (on / iso.off.runs[i]).toFixed(2)).join(' ')}`,
        `firewall cost per dispatched call at c100 (1/on − 1/off): ${ratios.hub_c100_firewall_cost_us} µs, of which the hub's chain with a no-op interceptor (1/noop − 1/off): ${ratios.hub_c100_chain_cost_us} µs; on ÷ off per CPU-second: ${ratios.hub_c100_on_over_off_cpu}×`,
        `audit: ${audit.stats().appends} entries in ${audit.stats().batches} write+fsync batches`,
        `RiskAssessor: ${JSON.stringify(assessor.stats())}`,
        `verdict cache (hub c100-firewall-on): ${JSON.stringify(engineOn.cacheStats())}`,
        `target (${target.rule}): p50 ${yes(target.p50_met)}, p99 ${yes(target.p99_met)}, hub ${yes(target.hub_met)}`,
        '',
      ].join('\n'),
    );
    const file = writeResults(BENCH, rows, {
      ratios,
      isolated: iso,
      target,
      harness_baseline: base,
      own_us: Object.fromEntries(rows.filter((r) => r.system === 'finger').map((r) => [r.scenario, own(r)])),
      risk_stats: assessor.stats(),
      verdict_cache_stats: { hub_on: engineOn.cacheStats(), auto_200_rules_cached: engine.cacheStats() },
      audit_stats: audit.stats(),
      allow_verdicts: verdicts,
      options: opts,
      notes: [
        'auto-200-rules: FirewallEngine.evaluate() (packages/firewall/dist) of shell.exec {command} cycling 10 everyday read-only commands (plain-word fast path and cached parses), admin policy of 200 rules loaded by PolicyStore from <home>/config/admin-policy.json (80 deny/hold command rules, 20 exact-shape allow rules, 60 fs path rules, 20 web.fetch, 20 MCP), all five layers, a decision id per call, verdict cache off (verdict_cache_size: 0): what a call seen for the first time costs. Every call is allow/AUTO (checked before measuring).',
        'auto-200-rules-cached: the same with the verdict cache on (the default): layers 1, 3 and 4 come from the cache, the behaviour and metacognitive layers run, a full Evaluation with a decision id per call.',
        'auto-200-rules-cwd adds cwd (realpath of the directory: a syscall per call); auto-fs-read is fs.read of a workspace file (realpath per call).',
        "The engine's clock moves past the 60 s behaviour window on every read, so repeating the same 10 calls never trips the loop detector; the behaviour layer still counts every call.",
        "hub c100-*: MessageHub with the echo module (modules/echo), 100 concurrent agent callers; noop-interceptor = one interceptor that only calls next() (what any interceptor chain costs the hub); firewall-on = createFirewallInterceptor({engine, tools: {get: (id) => hub.tools.metadata(id)}, events: hub.events}) as the daemon wires it in the interceptor chain (the default: no event for a plain AUTO allow); firewall-on-events adds auto_events: true (a FIREWALL_VERDICT event per call, persisted by the hub's FileEventStore); firewall-on-audit adds an AuditLog (every verdict written and fdatasync'd, group-committed, before the call runs).",
        'Each row is the median round by ops/s with its p50/p99; latencies include the harness (see harness_baseline).',
      ],
      detail: measured.detail,
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await Promise.allSettled([...HUBS.map(([, h]) => h.close(1000)), audit.close()]);
    await Promise.allSettled(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
});

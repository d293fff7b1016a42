// cli-startup: whole `myfinger` processes, as a person types them — `myfinger --version`,
// `myfinger approve --help`, and `myfinger approvals` (the pending list, against the real daemon
// on a temp FINGER_HOME) — each spawned with node on the bin shim and timed from spawn to exit,
// sequential and interleaved, beside a bare `node -e 0` (the floor). Target: p50 ≤ 300 ms for each
// (issue 27). See bench/README.md.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchSetupError, REPO_ROOT, runBench } from '../lib/bench-main.mjs';
import { DAEMON_MAIN, daemonEnv, startDaemon, stopChild } from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round } from '../lib/suite.mjs';

const BENCH = 'cli-startup';
const BIN = process.env.BENCH_CLI_BIN ?? join(REPO_ROOT, 'packages', 'cli', 'bin', 'myfinger.js');
const WARMUP = 2;
const RUNS = Math.max(3, Number(process.env.BENCH_CLI_RUNS ?? 20));
const TARGET_P50_MS = 300;

/** One process to exit; resolves with its wall time (ms), exit code and output. */
function timed(argv, env) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, code, out }));
  });
}

function quantiles(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99) };
}

runBench(BENCH, async () => {
  if (!existsSync(join(REPO_ROOT, 'packages', 'cli', 'dist', 'main.js')) || !existsSync(DAEMON_MAIN))
    throw new BenchSetupError('packages/cli/dist or packages/daemon/dist is missing: build first with `npm run build`');
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-cli-'));
  let daemon;
  try {
    daemon = await startDaemon(home, { FINGER_LOG_LEVEL: 'warn' });
    // the CLI finds the daemon and the admin token through FINGER_HOME, as a person's shell does
    const env = { ...daemonEnv(home), NO_COLOR: '1' };
    delete env.FINGER_PORT;
    delete env.FINGER_HOST;
    const cases = [
      { scenario: 'myfinger --version', argv: [BIN, '--version'], ok: (r) => r.code === 0 && /\d+\.\d+/.test(r.out) },
      { scenario: 'myfinger approve --help', argv: [BIN, 'approve', '--help'], ok: (r) => r.code === 0 },
      { scenario: 'myfinger approvals', argv: [BIN, 'approvals'], ok: (r) => r.code === 0 },
      { scenario: 'node -e 0 (floor)', argv: ['-e', '0'], ok: (r) => r.code === 0, system: 'node' },
    ];
    const samples = cases.map(() => []);
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + i) % cases.length];
        const r = await timed(c.argv, env);
        if (!c.ok(r)) throw new Error(`${c.scenario}: exit ${r.code}: ${r.out.slice(0, 500)}`);
        if (i >= WARMUP) samples[cases.indexOf(c)].push(r.ms);
      }
    }
    const rows = cases.map((c, k) => {
      const q = quantiles(samples[k]);
      return {
        system: c.system ?? 'finger',
        scenario: c.scenario,
        ops_per_s: round(1000 / q.p50, 1),
        p50_us: round(q.p50 * 1000, 0),
        p99_us: round(q.p99 * 1000, 0),
      };
    });
    printTable(BENCH, rows);
    const p50ms = Object.fromEntries(cases.map((c, k) => [c.scenario, round(quantiles(samples[k]).p50, 1)]));
    const met = cases.every((c) => c.system === 'node' || p50ms[c.scenario] <= TARGET_P50_MS);
    process.stdout.write(
      `\np50 ms: ${Object.entries(p50ms)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; target p50 ≤ ${TARGET_P50_MS} ms: ${met ? 'yes' : 'NO'}\n`,
    );
    const file = writeResults(BENCH, rows, {
      target: { rule: `p50 of each whole myfinger process ≤ ${TARGET_P50_MS} ms`, met },
      p50_ms: p50ms,
      runs: RUNS,
      samples_ms: Object.fromEntries(cases.map((c, k) => [c.scenario, samples[k].map((x) => round(x, 1))])),
      notes: [
        `Each run spawns \`node ${BIN.replace(REPO_ROOT + '/', '')} …\` (the bin shim) and times spawn → exit, sequentially, the cases interleaved, after ${WARMUP} warm-up rounds.`,
        '`myfinger approvals` lists the pending approvals of a real daemon (packages/daemon/dist/main.js on a temp FINGER_HOME, found through FINGER_HOME as from a shell).',
        'ops_per_s is 1000 / p50 ms (processes per second one after another).',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    if (daemon) await stopChild(daemon.child);
    await rm(home, { recursive: true, force: true });
  }
});

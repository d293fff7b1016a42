// Running a set of cases side by side: warm each up, then interleave measured rounds (the order
// rotates every round) so that a noisy neighbour hurts every system alike, and report each
// case's median round.

import { calibrate, measureRound } from './measure.mjs';

/**
 * Options of a suite; defaults can be overridden by BENCH_ROUNDS, BENCH_ROUND_MS,
 * BENCH_WARMUP_MS and BENCH_TURN_OPS (read once in bench-main.mjs).
 * @typedef {object} SuiteOptions
 * @property {number} rounds    measured rounds per case (odd numbers give a true median)
 * @property {number} roundMs   target duration of one measured round
 * @property {number} warmupMs  warmup per case before calibration ends
 * @property {number} [turnOps] ops between event-loop turns (see measure.mjs), unless a case sets its own
 * @property {(line: string) => void} [log] progress output (stderr by default)
 */

/**
 * @typedef {object} Row
 * @property {string} system
 * @property {string} scenario
 * @property {number} ops_per_s
 * @property {number|null} p50_us
 * @property {number|null} p99_us
 */

/** Runs a full GC when the process was started with --expose-gc (bench/run.mjs does). */
export function collectGarbage() {
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

/** Rounds to `digits` decimals (results stay readable in JSON). */
export function round(x, digits = 2) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * Index of the median round by throughput (lower middle for an even count).
 * @param {import('./measure.mjs').RoundResult[]} results
 */
function medianRound(results) {
  const sorted = [...results].sort((a, b) => a.ops_per_s - b.ops_per_s);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Median of numbers (mean of the two middle ones for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Measures every case and returns one row per case (its median round: that round's ops/s, p50
 * and p99 together), the median ops per CPU-second of each case (same order as `rows`), and the
 * per-round detail.
 * @param {import('./measure.mjs').Case[]} cases
 * @param {SuiteOptions} opts
 * `opts.measure` (default measureRound) measures one round of a case; its extra fields are kept in
 * the returned `rounds` (per case, in order).
 * @returns {Promise<{rows: Row[], opsPerCpuS: number[], detail: object[], rounds: object[][]}>}
 */
export async function runSuite(cases, opts) {
  const log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  const results = cases.map(() => []);
  for (const c of cases) {
    if (opts.turnOps !== undefined) c.turnOps ??= opts.turnOps;
    collectGarbage();
    const ops = await calibrate(c, { warmupMs: opts.warmupMs, roundMs: opts.roundMs });
    log(`  warmed up ${c.system} ${c.scenario}: ${ops} ops per round`);
  }
  for (let r = 0; r < opts.rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length;
      const c = cases[i];
      collectGarbage();
      results[i].push(await (opts.measure ?? measureRound)(c, c.ops));
    }
    log(`  round ${r + 1}/${opts.rounds} done`);
  }
  const rows = cases.map((c, i) => {
    const m = medianRound(results[i]);
    return {
      system: c.system,
      scenario: c.scenario,
      ops_per_s: Math.round(m.ops_per_s),
      p50_us: round(m.p50_us),
      p99_us: round(m.p99_us),
    };
  });
  const opsPerCpuS = results.map((rs) => Math.round(median(rs.map((x) => x.ops_per_cpu_s))));
  const detail = cases.map((c, i) => ({
    system: c.system,
    scenario: c.scenario,
    concurrency: c.concurrency,
    ops_per_round: c.ops,
    ops_per_cpu_s: opsPerCpuS[i],
    rounds: results[i].map((x) => ({
      ops_per_s: Math.round(x.ops_per_s),
      ops_per_cpu_s: Math.round(x.ops_per_cpu_s),
      p50_us: round(x.p50_us),
      p99_us: round(x.p99_us),
    })),
  }));
  return { rows, opsPerCpuS, detail, rounds: results };
}

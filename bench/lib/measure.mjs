// Measuring one case: C concurrent callers issue N ops between them, every op's latency is
// sampled into a preallocated Float64Array (nanoseconds as plain numbers, no BigInt kept), and
// p50/p99 are computed after the round by sorting that buffer.
//
// One clock read per op: a caller issues its next op right after the previous one resolved, so
// the time between two consecutive completions seen by one caller IS the latency of the second
// op (the gap is a few loop statements). That halves the clock cost, which matters on VMs where
// a clock read costs 50–200 ns against ops of ~500 ns.
//
// Event-loop turns: an in-process call resolves in microtasks, so without help a whole round
// would run as one macrotask and no timer (lease sweeper, event-bus flush, a peer's timeouts)
// would ever fire. Like a server handling one socket read at a time, the round takes an
// event-loop turn about every `turnOps` completed ops: the caller that completes the
// turnOps-th op sets a shared barrier (resolved by one setImmediate), every caller parks on it
// after its current op, and all resume together in the same tick — so C calls are in flight
// again right after the turn (separate setImmediates per caller would resume them one at a
// time and silently turn c100 into c1). The turn is in the round's wall time, not in latency.

const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;

/** `process.hrtime.bigint` works detached (it does not use `this`). */
const hr = process.hrtime.bigint;

/**
 * A barrier that opens on the next check phase of the event loop (after timers and I/O) and
 * clears itself from `state`.
 * @param {RoundState} state
 */
function turnBarrier(state) {
  return new Promise((resolve) =>
    setImmediate(() => {
      state.barrier = null;
      resolve();
    }),
  );
}

const CALLER_BODY = `
  let prev = hr();
  while (state.issued < state.ops) {
    state.issued++;
    await fn();
    const t = hr();
    samples[state.done++] = Number(t - prev);
    prev = t;
    if (++state.sinceTurn >= state.turnOps) {
      state.sinceTurn = 0;
      state.barrier = turnBarrier(state);
    }
    if (state.barrier !== null) {
      await state.barrier;
      prev = hr();
    }
  }
`;

/**
 * Shared by the callers of one round.
 * @typedef {object} RoundState
 * @property {number} ops       ops to issue in the round
 * @property {number} issued
 * @property {number} done      ops completed (= samples written)
 * @property {number} turnOps   completed ops between event-loop turns (Infinity: never)
 * @property {number} sinceTurn
 * @property {Promise<void>|null} barrier pending turn every caller waits for
 */

let callerSeq = 0;

/**
 * Compiles a fresh caller loop for one case. Each case gets its own compiled function (the
 * unique comment defeats V8's eval cache), so the `fn()` call site stays monomorphic and one
 * system's type feedback never slows another's loop.
 * @returns {(fn: () => Promise<unknown>, samples: Float64Array, state: RoundState, hr: () => bigint, turnBarrier: (state: RoundState) => Promise<void>) => Promise<void>}
 */
export function createCaller(label = '') {
  const tag = `${++callerSeq} ${label}`.replace(/[^\w .:-]/g, '_');
  return new AsyncFunction('fn', 'samples', 'state', 'hr', 'turnBarrier', `// caller ${tag}\n${CALLER_BODY}`);
}

/**
 * Value at quantile `q` (0..1) of an ascending-sorted buffer, nearest-rank method.
 * @param {Float64Array} sorted
 * @param {number} n number of valid entries
 * @param {number} q
 */
export function quantile(sorted, n, q) {
  if (n === 0) return NaN;
  const rank = Math.min(n, Math.max(1, Math.ceil(q * n)));
  return sorted[rank - 1];
}

/**
 * @typedef {object} Case
 * @property {string} system
 * @property {string} scenario
 * @property {number} concurrency
 * @property {() => Promise<unknown>} fn  one operation
 * @property {ReturnType<typeof createCaller>} [caller]
 * @property {Float64Array} [samples]
 * @property {number} [ops] ops per measured round (set by calibrate)
 * @property {number} [turnOps] completed ops between event-loop turns (0: never yield); default 1000
 */

/** Default completed ops between two event-loop turns of a round. */
export const DEFAULT_TURN_OPS = 1000;

/**
 * @typedef {object} RoundResult
 * @property {number} ops        ops completed
 * @property {number} elapsed_ms wall time of the round
 * @property {number} ops_per_s
 * @property {number} ops_per_cpu_s ops ÷ CPU time of this process (all threads) — insensitive to
 *   other processes taking the CPU away, so steadier than ops_per_s on a shared machine
 * @property {number} p50_us
 * @property {number} p99_us
 */

/**
 * Runs one round of `ops` operations with `c.concurrency` callers and returns its throughput
 * (ops ÷ wall time, clock reads included; and ops ÷ process CPU time) and latency percentiles.
 * @param {Case} c
 * @param {number} ops
 * @returns {Promise<RoundResult>}
 */
export async function measureRound(c, ops) {
  c.caller ??= createCaller(`${c.system}/${c.scenario}`);
  if (c.samples === undefined || c.samples.length < ops) c.samples = new Float64Array(ops);
  const samples = c.samples;
  const turnOps = c.turnOps ?? DEFAULT_TURN_OPS;
  /** @type {RoundState} */
  const state = { ops, issued: 0, done: 0, turnOps: turnOps > 0 ? turnOps : Infinity, sinceTurn: 0, barrier: null };
  const callers = new Array(c.concurrency);
  const cpu0 = process.cpuUsage();
  const t0 = hr();
  for (let i = 0; i < c.concurrency; i++) callers[i] = c.caller(c.fn, samples, state, hr, turnBarrier);
  await Promise.all(callers);
  const elapsedNs = Number(hr() - t0);
  const cpu = process.cpuUsage(cpu0);
  const n = state.done;
  const view = samples.subarray(0, n);
  view.sort();
  return {
    ops: n,
    elapsed_ms: elapsedNs / 1e6,
    ops_per_s: n / (elapsedNs / 1e9),
    ops_per_cpu_s: n / ((cpu.user + cpu.system) / 1e6),
    p50_us: quantile(view, n, 0.5) / 1e3,
    p99_us: quantile(view, n, 0.99) / 1e3,
  };
}

/**
 * Warms a case up for about `warmupMs` (rounds of growing size, so the JIT tiers up on the real
 * loop) and sizes its measured rounds to last about `roundMs` at the warmed-up rate.
 * @param {Case} c
 * @param {{warmupMs: number, roundMs: number, maxOps?: number}} opts
 * @returns {Promise<number>} ops per round (also stored as `c.ops`)
 */
export async function calibrate(c, { warmupMs, roundMs, maxOps = 4_000_000 }) {
  let ops = Math.max(1000, c.concurrency * 20);
  let spent = 0;
  let rate = 0;
  for (;;) {
    const r = await measureRound(c, ops);
    spent += r.elapsed_ms;
    rate = r.ops_per_s;
    if (spent >= warmupMs && r.elapsed_ms >= Math.min(100, warmupMs / 4)) break;
    ops = Math.min(maxOps, ops * 2);
  }
  c.ops = Math.max(1000, Math.min(maxOps, Math.round((rate * roundMs) / 1000)));
  c.samples = new Float64Array(c.ops);
  return c.ops;
}

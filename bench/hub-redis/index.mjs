// hub-redis: what the Redis stores of distributed mode cost. Hub calls to the echo module with a
// fresh caller `request_id` each (so every call writes an idempotency record) over the memory
// store and the Redis store, c1 and c100, beside calls without a request_id; and the latency of a
// change notice from one daemon's store to another's (what a halt needs to reach the cluster).
// Redis: FINGER_BENCH_REDIS_URL, else redis://127.0.0.1:6379; skipped (exit 0) when unreachable.

import { join } from 'node:path';

import { importBuilt, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { REPO_ROOT } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { median, round, runSuite } from '../lib/suite.mjs';

const BENCH = 'hub-redis';
const HUMAN = Object.freeze({ kind: 'human', id: 'bench', roles: ['operator'] });
const PAYLOAD = { text: 'hi' };
const URL = process.env.FINGER_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

runBench(BENCH, async () => {
  const hubPkg = await importBuilt('packages/hub');
  const redisPkg = await importBuilt('packages/hub', 'redis.js');
  const prefix = `finger-bench:${Math.random().toString(36).slice(2, 10)}:`;
  const conns = [0, 1].map(() => new redisPkg.RedisConnection({ url: URL, cluster: 'bench', prefix }));
  if (!(await conns[0].ready(2000))) {
    process.stdout.write(`${BENCH}: SKIPPED — no Redis at ${URL} (set FINGER_BENCH_REDIS_URL)\n`);
    for (const c of conns) await c.close();
    return;
  }
  await conns[1].ready(2000);
  const hubMem = new hubPkg.MessageHub();
  // a short window: the records of the run expire by themselves
  const hubRedis = new hubPkg.MessageHub({
    requests: new redisPkg.RedisRequestStore(conns[0]),
    limits: { idempotency_window_ms: 60_000 },
  });
  const HUBS = [hubMem, hubRedis];
  for (const h of HUBS) await h.registry.loadFile(join(REPO_ROOT, 'modules', 'echo', 'module.json'));
  let n = 0;
  const call = (hub, withId) => () =>
    hub.request({ target: 'echo', payload: PAYLOAD, source: HUMAN, ...(withId ? { request_id: `b${n++}` } : {}) });
  try {
    const opts = suiteOptions();
    process.stderr.write(
      `${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`,
    );
    const measured = await runSuite(
      [
        { system: 'hub', scenario: 'c1-no-request-id', concurrency: 1, fn: call(hubMem, false) },
        { system: 'hub', scenario: 'c1-request-id-memory', concurrency: 1, fn: call(hubMem, true) },
        { system: 'hub', scenario: 'c1-request-id-redis', concurrency: 1, fn: call(hubRedis, true) },
        { system: 'hub', scenario: 'c100-no-request-id', concurrency: 100, fn: call(hubMem, false) },
        { system: 'hub', scenario: 'c100-request-id-memory', concurrency: 100, fn: call(hubMem, true) },
        { system: 'hub', scenario: 'c100-request-id-redis', concurrency: 100, fn: call(hubRedis, true) },
      ],
      opts,
    );
    for (const h of HUBS) if (h.stats().calls_failed !== 0) throw new Error(`${h.stats().calls_failed} failed calls`);

    // change notice latency: a JSON hash write with its notice on store A → listener on store B
    const kvA = new redisPkg.RedisKv(conns[0], 'bench');
    const kvB = new redisPkg.RedisKv(conns[1], 'bench');
    let wake;
    await kvB.subscribe(() => wake?.());
    const lat = [];
    for (let i = 0; i < 300; i++) {
      const heard = new Promise((r) => (wake = r));
      const t0 = process.hrtime.bigint();
      await kvA.hsetJson('lockouts', '', { i }, { type: 'lockout_set', i });
      await heard;
      lat.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    lat.sort((a, b) => a - b);
    const notice = { p50_us: round(median(lat)), p99_us: round(lat[Math.floor(lat.length * 0.99)]) };
    await kvA.close();
    await kvB.close();

    const rows = measured.rows;
    const row = (s) => rows.find((r) => r.scenario === s);
    const ratios = {
      c1_redis_over_memory: round(row('c1-request-id-redis').ops_per_s / row('c1-request-id-memory').ops_per_s),
      c100_redis_over_memory: round(row('c100-request-id-redis').ops_per_s / row('c100-request-id-memory').ops_per_s),
    };
    printTable(BENCH, rows);
    process.stdout.write(
      [
        '',
        `request_id over Redis ÷ memory: c1 ${ratios.c1_redis_over_memory}×, c100 ${ratios.c100_redis_over_memory}×`,
        `change notice store A → store B (write + pub/sub): p50 ${notice.p50_us} µs, p99 ${notice.p99_us} µs`,
        '',
      ].join('\n'),
    );
    const file = writeResults(BENCH, rows, { ratios, notice });
    process.stderr.write(`wrote ${file}\n`);
  } finally {
    for (const h of HUBS) await h.close(0);
    const keys = await conns[0].client.keys(`${prefix}*`).catch(() => []);
    for (let i = 0; i < keys.length; i += 500) await conns[0].client.del(...keys.slice(i, i + 500));
    for (const c of conns) await c.close();
  }
});

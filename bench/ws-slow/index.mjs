// ws-slow: the tax WebSocket watchers put on callers (issue 27). The real daemon (as shipped, with
// ws.max_sockets_per_token raised so one token may hold them all) under `/v1/input`
// `/hub target=echo blocking=true` load (50 keep-alive connections, admin token): rounds with no
// subscriber, then with BENCH_WS_SLOW_SOCKETS (500) sockets subscribed to everything, half of them
// paused (never reading). Rows: /hub calls/s and p50/p99 for each; the daemon's RSS idle and at
// its peak; how many paused sockets were cut off (close 4008) and events dropped. Compare ratios of
// one run (the machine may be loaded). See bench/README.md.

import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchSetupError, runBench } from '../lib/bench-main.mjs';
import { DAEMON_MAIN, rssMb, runLoad, startDaemon, stopChild } from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { median, round } from '../lib/suite.mjs';

const BENCH = 'ws-slow';
const SOCKETS = Number(process.env.BENCH_WS_SLOW_SOCKETS ?? 500);
const PAUSED = Number(process.env.BENCH_WS_SLOW_PAUSED ?? Math.floor(SOCKETS / 2));
const CONNECTIONS = 50;
const ROUND_MS = Number(process.env.BENCH_WS_ROUND_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET = 0.8;

function forkSubscribers(args) {
  const child = fork(join(import.meta.dirname, 'subscribers.mjs'), args, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const on = (m) => {
      if (m.error) return reject(new Error(`subscribers: ${m.error}`));
      if (m.ready) {
        child.off('message', on);
        resolve(child);
      }
    };
    child.on('message', on);
    child.once('exit', (code, signal) => reject(new Error(`subscribers exited (${code ?? signal})`)));
  });
}

function ask(child, msg, match) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (match(m)) {
        child.off('message', on);
        resolve(m);
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

function closeChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ cmd: 'close' });
  return exited;
}

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN))
    throw new BenchSetupError(`${DAEMON_MAIN} is missing: build first with \`npm run build\``);
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-ws-slow-'));
  let daemon;
  let subs;
  try {
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(
      join(home, 'config', 'config.json'),
      JSON.stringify({ ws: { max_sockets: SOCKETS + 100, max_sockets_per_token: SOCKETS + 100 } }),
    );
    daemon = await startDaemon(home);
    const run = Date.now().toString(36);
    const hub = {
      url: `${daemon.url}/v1/input`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.admin}` },
      body: (i) => JSON.stringify({ text: `/hub target=echo blocking=true {"text":"slow ${run}-${i}"}` }),
      ok: (s, b) => s === 200 && b.includes('"succeeded"'),
    };
    const load = async () => {
      const r = await runLoad(hub, { connections: CONNECTIONS, ms: ROUND_MS });
      if (r.errors > 0) throw new Error(`/hub: ${r.errors} wrong answers, first: ${r.first_error}`);
      return r;
    };
    await runLoad(hub, { connections: CONNECTIONS, ms: 1000 });
    const idleRss = rssMb(daemon.pid) ?? 0;
    const wsUrl = `${daemon.url.replace(/^http/, 'ws')}/v1/events`;
    // rounds alternate none / with sockets so both see the same machine load
    const none = [];
    const withSocks = [];
    let peakRss = idleRss;
    let last;
    for (let r = 0; r < ROUNDS; r++) {
      none.push(await load());
      subs = await forkSubscribers([wsUrl, String(SOCKETS), daemon.admin, String(PAUSED)]);
      const res = await load();
      peakRss = Math.max(peakRss, rssMb(daemon.pid) ?? 0);
      last = (await ask(subs, { cmd: 'read' }, (m) => m.counts !== undefined)).counts;
      withSocks.push({ ...res, delivered: last.events });
      await closeChild(subs);
      subs = undefined;
    }
    const med = (xs) => {
      const m = median(xs.map((x) => x.ops_per_s));
      return xs.find((x) => x.ops_per_s === m) ?? xs[0];
    };
    const n0 = med(none);
    const n1 = med(withSocks);
    const rows = [
      {
        system: 'finger',
        scenario: '/hub c50, 0 sockets',
        ops_per_s: n0.ops_per_s,
        p50_us: n0.p50_us,
        p99_us: n0.p99_us,
      },
      {
        system: 'finger',
        scenario: `/hub c50, ${SOCKETS} sockets (${PAUSED} paused)`,
        ops_per_s: n1.ops_per_s,
        p50_us: n1.p50_us,
        p99_us: n1.p99_us,
      },
    ];
    printTable(BENCH, rows);
    const ratio = round(n1.ops_per_s / n0.ops_per_s, 3);
    const gw = { cut_4008: last?.close_codes?.['4008'] ?? 0, refused_4429: last?.close_codes?.['4429'] ?? 0 };
    process.stdout.write(
      `\n/hub with ${SOCKETS} sockets (${PAUSED} paused) ÷ none: ${ratio} (target ≥ ${TARGET}); ` +
        `paused sockets cut off (4008) in the last round: ${gw.cut_4008}, refused (4429): ${gw.refused_4429}; ` +
        `daemon RSS ${round(idleRss, 1)} MB after warm-up, peak ${round(peakRss, 1)} MB (+${round(peakRss - idleRss, 1)})\n`,
    );
    const file = writeResults(BENCH, rows, {
      ratios: { hub_with_sockets_vs_none: ratio },
      target: {
        rule: `/hub with ${SOCKETS} sockets (half paused) ≥ ${TARGET}× none; RSS within 100 MB of idle`,
        met: ratio >= TARGET && peakRss - idleRss <= 100,
      },
      rss_mb: { idle: round(idleRss, 1), peak: round(peakRss, 1) },
      last_round: { ...gw, events_delivered_to_readers: last?.events ?? 0 },
      options: { sockets: SOCKETS, paused: PAUSED, connections: CONNECTIONS, round_ms: ROUND_MS, rounds: ROUNDS },
      notes: [
        'Rounds alternate: a round with no subscriber, then one with the sockets connected (a fresh subscriber process per round, so paused sockets start empty).',
        'Paused sockets stop reading at the TCP level right after subscribing; the daemon cuts each off (close 4008) once it is ws.max_slow_bytes behind.',
        'The machine may be shared: compare the two rows of one run.',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    if (subs) await closeChild(subs);
    if (daemon) await stopChild(daemon.child);
    await rm(home, { recursive: true, force: true });
  }
});

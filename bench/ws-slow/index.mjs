// ws-slow: the tax WebSocket watchers put on callers (issue 27). The real daemon (as shipped, with
// ws.max_sockets_per_token raised so one token may hold them all) under `/v1/input`
// `/hub target=echo blocking=true` load (50 keep-alive connections, admin token): rounds with no
// subscriber, then with BENCH_WS_SLOW_SOCKETS (500) sockets subscribed to everything, half of them
// paused (never reading). Rows: /hub calls/s and p50/p99 for each; the daemon's RSS idle and at
// its peak; how many paused sockets were cut off (close 4008) and events dropped. Compare ratios of
// one run (the machine may be loaded). See bench/README.md.

import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchSetupError, runBench } from '../lib/bench-main.mjs';
import {
  allowSockets,
  closeChild,
  DAEMON_MAIN,
  hubEchoTarget,
  rssMb,
  runLoad,
  startDaemon,
  stopChild,
} from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { median, round } from '../lib/suite.mjs';

const BENCH = 'ws-slow';
const SOCKETS = Number(process.env.BENCH_WS_SLOW_SOCKETS ?? 500);
const PAUSED = Number(process.env.BENCH_WS_SLOW_PAUSED ?? Math.floor(SOCKETS / 2));
const CONNECTIONS = 50;
const ROUND_MS = Number(process.env.BENCH_WS_ROUND_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET = 0.8;

/** CPU seconds (user + system) a process has used, from /proc (undefined off Linux). */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

/** A counter of the daemon's /metrics (its first sample). */
async function metric(daemon, name) {
  const res = await fetch(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${daemon.admin}` } });
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(await res.text());
  return m ? Number(m[1]) : NaN;
}

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

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN))
    throw new BenchSetupError(`${DAEMON_MAIN} is missing: build first with \`npm run build\``);
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-ws-slow-'));
  let daemon;
  let subs;
  try {
    await allowSockets(home, SOCKETS);
    daemon = await startDaemon(home);
    const run = Date.now().toString(36);
    const hub = hubEchoTarget(daemon, `slow ${run}`);
    // each round also says what the daemon's CPU paid per call and what the subscriber process used
    const load = async (sub) => {
      const c0 = cpuSeconds(daemon.pid);
      const s0 = sub ? cpuSeconds(sub.pid) : undefined;
      const t0 = process.hrtime.bigint();
      const r = await runLoad(hub, { connections: CONNECTIONS, ms: ROUND_MS });
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.errors > 0) throw new Error(`/hub: ${r.errors} wrong answers, first: ${r.first_error}`);
      const c1 = cpuSeconds(daemon.pid);
      const s1 = sub ? cpuSeconds(sub.pid) : undefined;
      return {
        ...r,
        daemon_cpu_us_per_call: c0 === undefined || r.ops === 0 ? null : Math.round(((c1 - c0) / r.ops) * 1e6),
        subscribers_cpu_cores: s0 === undefined ? null : round((s1 - s0) / secs, 2),
        subscribers_cpu_s: s0 === undefined ? null : s1 - s0,
      };
    };
    await runLoad(hub, { connections: CONNECTIONS, ms: 1000 });
    const idleRss = rssMb(daemon.pid) ?? 0;
    const wsUrl = `${daemon.url.replace(/^http/, 'ws')}/v1/events`;
    // rounds alternate none / with sockets so both see the same machine load
    const none = [];
    const withSocks = [];
    let peakRss = idleRss;
    // the same load without sockets grows the heap too: its peak says how much of the growth is theirs
    let peakNoneRss = idleRss;
    let last;
    for (let r = 0; r < ROUNDS; r++) {
      const noneSampler = setInterval(() => (peakNoneRss = Math.max(peakNoneRss, rssMb(daemon.pid) ?? 0)), 100);
      none.push(await load());
      clearInterval(noneSampler);
      subs = await forkSubscribers([wsUrl, String(SOCKETS), daemon.admin, String(PAUSED)]);
      const cut0 = await metric(daemon, 'finger_ws_slow_closed_total');
      const dropped0 = await metric(daemon, 'finger_ws_events_dropped_total');
      const sent0 = await metric(daemon, 'finger_ws_events_sent_total');
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(daemon.pid) ?? 0)), 100);
      const res = await load(subs);
      clearInterval(sampler);
      peakRss = Math.max(peakRss, rssMb(daemon.pid) ?? 0);
      last = (await ask(subs, { cmd: 'read' }, (m) => m.counts !== undefined)).counts;
      // a paused socket never reads its 4008 close: the daemon's counters say who was cut
      const eventsDropped = (await metric(daemon, 'finger_ws_events_dropped_total')) - dropped0;
      const eventsSent = (await metric(daemon, 'finger_ws_events_sent_total')) - sent0;
      // what reading costs the subscriber process (its CPU over the round ÷ the event frames its
      // sockets handled), and how many events a call offers each socket (sent + dropped)
      const read = last.events + last.paused_events;
      withSocks.push({
        ...res,
        delivered: last.events,
        cut_4008: (await metric(daemon, 'finger_ws_slow_closed_total')) - cut0,
        events_dropped: eventsDropped,
        subs_us_per_event:
          res.subscribers_cpu_s === null || read === 0 ? null : round((res.subscribers_cpu_s / read) * 1e6, 2),
        events_per_call_per_socket: res.ops === 0 ? null : round((eventsSent + eventsDropped) / res.ops / SOCKETS, 2),
      });
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
        cpu_us_per_call: n0.daemon_cpu_us_per_call,
      },
      {
        system: 'finger',
        scenario: `/hub c50, ${SOCKETS} sockets (${PAUSED} paused)`,
        ops_per_s: n1.ops_per_s,
        p50_us: n1.p50_us,
        p99_us: n1.p99_us,
        cpu_us_per_call: n1.daemon_cpu_us_per_call,
        subs_cpu_cores: n1.subscribers_cpu_cores,
        cut_4008: n1.cut_4008,
        events_dropped: n1.events_dropped,
      },
    ];
    printTable(BENCH, rows);
    const ratio = round(n1.ops_per_s / n0.ops_per_s, 3);
    // CPU the live readers would need to read every event of one call, against what the call costs the daemon
    const readAll =
      n1.subs_us_per_event === null || n1.events_per_call_per_socket === null
        ? null
        : Math.round(n1.subs_us_per_event * n1.events_per_call_per_socket * (SOCKETS - PAUSED));
    const lastRound = withSocks.at(-1);
    const gw = { cut_4008: lastRound?.cut_4008 ?? 0, refused_4429: last?.close_codes?.['4429'] ?? 0 };
    process.stdout.write(
      `\n/hub with ${SOCKETS} sockets (${PAUSED} paused) ÷ none: ${ratio} (target ≥ ${TARGET}); ` +
        `daemon CPU per call ${n0.daemon_cpu_us_per_call} → ${n1.daemon_cpu_us_per_call} µs; ` +
        `sockets cut off (4008) in the last round: ${gw.cut_4008}, refused (4429): ${gw.refused_4429}; ` +
        `daemon RSS ${round(idleRss, 1)} MB after warm-up, peak ${round(peakRss, 1)} MB (+${round(peakRss - idleRss, 1)}; ` +
        `the rounds without sockets peaked at ${round(peakNoneRss, 1)} MB)\n` +
        (readAll === null
          ? ''
          : `the subscriber process: ${n1.subscribers_cpu_cores} cores, ${n1.subs_us_per_event} µs a frame read; ` +
            `reading all ${n1.events_per_call_per_socket} events a call offers each of its ${SOCKETS - PAUSED} live sockets ` +
            `would take ${readAll} µs of its CPU per call, against the daemon's ${n1.daemon_cpu_us_per_call} µs ` +
            `(where readers share the daemon's cores they always have frames to read and take their share)\n`),
    );
    const file = writeResults(BENCH, rows, {
      ratios: { hub_with_sockets_vs_none: ratio },
      readers: {
        subs_cpu_cores: n1.subscribers_cpu_cores,
        subs_us_per_event: n1.subs_us_per_event,
        events_per_call_per_socket: n1.events_per_call_per_socket,
        readers_us_per_call_to_read_all: readAll,
        daemon_cpu_us_per_call: n1.daemon_cpu_us_per_call,
      },
      target: {
        rule: `/hub with ${SOCKETS} sockets (half paused) ≥ ${TARGET}× none; RSS within 100 MB of idle`,
        met: ratio >= TARGET && peakRss - idleRss <= 100,
      },
      rss_mb: { idle: round(idleRss, 1), peak: round(peakRss, 1), peak_without_sockets: round(peakNoneRss, 1) },
      last_round: {
        ...gw,
        events_delivered_to_readers: last?.events ?? 0,
        events_handled_by_paused: last?.paused_events ?? 0,
        events_dropped: lastRound?.events_dropped ?? 0,
      },
      detail: { none, with_sockets: withSocks },
      options: { sockets: SOCKETS, paused: PAUSED, connections: CONNECTIONS, round_ms: ROUND_MS, rounds: ROUNDS },
      notes: [
        'Rounds alternate: a round with no subscriber, then one with the sockets connected (a fresh subscriber process per round, so paused sockets start empty).',
        "Paused sockets stop reading (ws.pause(): their TCP socket is not read again) right after subscribing; the daemon cuts each off (close 4008) once it is ws.max_slow_bytes behind — counted from the daemon's finger_ws_slow_closed_total, since a paused socket never reads its close. Readers that fall that far behind are cut too.",
        "cpu_us_per_call: the daemon's CPU time (user + system, /proc) over the round ÷ calls completed — what each call cost the daemon, less sensitive to other load on the machine than ops/s; subs_cpu_cores: the subscriber process's CPU over the round (it shares the machine).",
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

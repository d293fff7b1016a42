// ws: event fan-out to 100 WebSocket subscribers (issue 27). Two questions, two parts:
//
// 1. The tax on callers — the real daemon (as shipped, its socket limits raised so one token may
//    hold every subscriber) on a temp FINGER_HOME under `/v1/input` `/hub target=echo
//    blocking=true` load (50 keep-alive connections, admin token); rounds alternate between no
//    subscriber and BENCH_WS_SUBSCRIBERS (100) `/v1/events` sockets subscribed to everything (a
//    fresh child process of `ws` clients per round). Rows: /hub calls/s, p50/p99 of each, the
//    events the daemon emitted per second and the frames its subscribers received per second.
// 2. Fan-out capacity — the same event stream (the frames part 1's subscribers received, replayed)
//    pushed as fast as the server can to 100 subscribers: finger's own event path (LocalEventBus with
//    its FileEventStore, and the EventGateway, from packages/*/dist: finger-broadcast.mjs) against a
//    raw `ws` broadcast of the very same frames (raw-broadcast.mjs), both emitting 50 events per
//    turn of the event loop, both read by the same subscriber process. Rounds alternate between
//    the two. Rows: frames delivered per second to all subscribers, frames dropped, clients cut.
//
// Part 1 alone cannot say how fast finger fans out: its event rate is bounded by how fast /hub
// calls make events, while a raw broadcast sends as fast as it can. See bench/README.md.

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

const BENCH = 'ws';
const SUBSCRIBERS = Number(process.env.BENCH_WS_SUBSCRIBERS ?? 100);
const CONNECTIONS = 50;
const ROUND_MS = Number(process.env.BENCH_WS_ROUND_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET = 0.8;

/** Forks `file` and resolves with the child and its first IPC message that `first` accepts. */
function forkUntil(file, args, first) {
  const child = fork(join(import.meta.dirname, file), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    const on = (m) => {
      if (m.error) return reject(new Error(`${file}: ${m.error}`));
      if (first(m)) {
        child.off('message', on);
        resolve({ child, message: m });
      }
    };
    child.on('message', on);
    child.once('exit', (code, signal) => reject(new Error(`${file} exited (${code ?? signal})`)));
  });
}

/** Sends `msg` to a child and resolves with its next answer that `match`es. */
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

const counts = (child) => ask(child, { cmd: 'read' }, (m) => m.counts !== undefined).then((m) => m.counts);
const log = (s) => process.env.BENCH_DEBUG && process.stderr.write(`ws: ${s}\n`);
const subscribers = (url, token) =>
  forkUntil('subscribers.mjs', [url, String(SUBSCRIBERS), token], (m) => m.ready).then((r) => r.child);

/**
 * Reads the subscribers' counts until they stop growing (three reads in a row unchanged: the
 * frames still in flight when the sender stopped are delivered too) and returns them with the
 * seconds from `t0` to the last growth seen.
 */
async function settle(child, t0) {
  let c = await counts(child);
  let at = process.hrtime.bigint();
  for (let same = 0; same < 3;) {
    await new Promise((resolve) => setImmediate(resolve));
    const next = await counts(child);
    if (next.events === c.events) same++;
    else {
      same = 0;
      at = process.hrtime.bigint();
    }
    c = next;
  }
  return { c, secs: Number(at - t0) / 1e9 };
}

/** CPU seconds (user + system) a process has used, from /proc (undefined off Linux). */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

/** finger_events_emitted_total of the daemon's /metrics. */
async function emittedTotal(daemon) {
  const res = await fetch(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${daemon.admin}` } });
  const m = /^finger_events_emitted_total(?:\{[^}]*\})? (\d+)/m.exec(await res.text());
  return m ? Number(m[1]) : NaN;
}

/** One row of a set of rounds: the median round by `key`. */
function med(xs, key) {
  const m = median(xs.map((x) => x[key]));
  return xs.find((x) => x[key] === m) ?? xs[0];
}

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN))
    throw new BenchSetupError(`${DAEMON_MAIN} is missing: build first with \`npm run build\``);
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-ws-'));
  let daemon;
  let subs;
  let finger;
  let raw;
  try {
    await allowSockets(home, SUBSCRIBERS);
    daemon = await startDaemon(home);
    const run = Date.now().toString(36);
    const hub = hubEchoTarget(daemon, `fan-out ${run}`);
    const load = async () => {
      const e0 = await emittedTotal(daemon);
      const c0 = cpuSeconds(daemon.pid);
      const t0 = process.hrtime.bigint();
      const r = await runLoad(hub, { connections: CONNECTIONS, ms: ROUND_MS });
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const c1 = cpuSeconds(daemon.pid);
      if (r.errors > 0) throw new Error(`/hub: ${r.errors} wrong answers, first: ${r.first_error}`);
      return {
        ...r,
        events_per_s: Math.round(((await emittedTotal(daemon)) - e0) / secs),
        // what a call cost the daemon's CPU: far less sensitive than ops/s to other load on the machine
        cpu_us_per_call: c0 === undefined || r.ops === 0 ? null : Math.round(((c1 - c0) / r.ops) * 1e6),
      };
    };
    await runLoad(hub, { connections: CONNECTIONS, ms: 1000 });
    log('warm');
    const idleRss = rssMb(daemon.pid);
    const wsUrl = `${daemon.url.replace(/^http/, 'ws')}/v1/events`;

    // part 1: the tax on callers, rounds alternating so both cases see the same machine load
    const none = [];
    const withSubs = [];
    let samples = [];
    let peakRss = 0;
    for (let r = 0; r < ROUNDS; r++) {
      none.push(await load());
      subs = await subscribers(wsUrl, daemon.admin);
      const t0 = process.hrtime.bigint();
      const res = await load();
      const { c, secs } = await settle(subs, t0);
      peakRss = Math.max(peakRss, rssMb(daemon.pid) ?? 0);
      if (samples.length === 0) samples = (await ask(subs, { cmd: 'samples' }, (m) => m.samples)).samples;
      withSubs.push({
        ...res,
        delivered_per_s: Math.round(c.events / secs),
        frame_bytes: c.events > 0 ? Math.round(c.bytes / c.events) : 0,
        dropped: c.dropped,
        cut_4008: c.close_codes['4008'] ?? 0,
      });
      log(`round ${r}: ${JSON.stringify(withSubs.at(-1))}`);
      await closeChild(subs);
      subs = undefined;
    }
    await stopChild(daemon.child);
    daemon = undefined;
    if (samples.length === 0) throw new Error('the subscribers received no event to replay');

    // part 2: capacity, the same stream replayed at full speed by finger's event path and by raw ws
    const stream = samples.map((s) => {
      const e = JSON.parse(s).event;
      const { request_id, correlation_id, session_id, workflow_id, target } = e;
      return {
        type: e.type,
        correlation: { request_id, correlation_id, session_id, workflow_id, target },
        data: e.data,
      };
    });
    const streamBytes = Math.round(samples.reduce((n, s) => n + s.length, 0) / samples.length);
    const fingerStarted = await forkUntil('finger-broadcast.mjs', [], (m) => m.url !== undefined);
    finger = fingerStarted.child;
    const rawStarted = await forkUntil('raw-broadcast.mjs', [], (m) => m.url !== undefined);
    raw = rawStarted.child;
    const capacity = { finger: [], ws: [] };
    const peers = [
      ['finger', finger, fingerStarted.message.url, { cmd: 'run', ms: ROUND_MS, events: stream }],
      ['ws', raw, rawStarted.message.url, { cmd: 'run', ms: ROUND_MS, frames: samples }],
    ];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, child, url, cmd] of peers) {
        subs = await subscribers(url, '-');
        const t0 = process.hrtime.bigint();
        const sent = await ask(child, cmd, (m) => m.sent !== undefined);
        const { c, secs } = await settle(subs, t0);
        capacity[name].push({
          delivered_per_s: Math.round(c.events / secs),
          sent: sent.sent,
          dropped: sent.dropped,
          cut_4008: c.close_codes['4008'] ?? 0,
          ...(sent.emitted !== undefined ? { emitted_per_s: Math.round(sent.emitted / (ROUND_MS / 1000)) } : {}),
        });
        log(`capacity ${name} ${r}: ${JSON.stringify(capacity[name].at(-1))}`);
        await closeChild(subs);
        subs = undefined;
      }
    }

    const n0 = med(none, 'ops_per_s');
    const n1 = med(withSubs, 'ops_per_s');
    const f = med(capacity.finger, 'delivered_per_s');
    const w = med(capacity.ws, 'delivered_per_s');
    const rows = [
      {
        system: 'finger',
        scenario: '/hub c50, 0 subscribers',
        ops_per_s: n0.ops_per_s,
        p50_us: n0.p50_us,
        p99_us: n0.p99_us,
        cpu_us_per_call: n0.cpu_us_per_call,
        events_per_s: n0.events_per_s,
      },
      {
        system: 'finger',
        scenario: `/hub c50, ${SUBSCRIBERS} subscribers`,
        ops_per_s: n1.ops_per_s,
        p50_us: n1.p50_us,
        p99_us: n1.p99_us,
        cpu_us_per_call: n1.cpu_us_per_call,
        events_per_s: n1.events_per_s,
        delivered_per_s: n1.delivered_per_s,
        dropped: n1.dropped,
      },
      {
        system: 'finger',
        scenario: `fan-out at full speed, ${SUBSCRIBERS} subscribers`,
        ops_per_s: f.delivered_per_s,
        p50_us: null,
        p99_us: null,
        events_per_s: f.emitted_per_s,
        delivered_per_s: f.delivered_per_s,
        dropped: f.dropped,
        cut_4008: f.cut_4008,
      },
      {
        system: 'ws',
        scenario: `raw broadcast at full speed, ${SUBSCRIBERS} subscribers`,
        ops_per_s: w.delivered_per_s,
        p50_us: null,
        p99_us: null,
        delivered_per_s: w.delivered_per_s,
        dropped: w.dropped,
      },
    ];
    printTable(BENCH, rows);
    const ratios = {
      hub_with_subscribers_vs_none: round(n1.ops_per_s / n0.ops_per_s, 3),
      delivered_vs_raw_ws: round(f.delivered_per_s / w.delivered_per_s, 3),
    };
    process.stdout.write(
      `
/hub with ${SUBSCRIBERS} subscribers ÷ none ${ratios.hub_with_subscribers_vs_none} ` +
        `(daemon CPU per call ${n0.cpu_us_per_call} → ${n1.cpu_us_per_call} µs); ` +
        `fan-out at full speed: finger frames delivered/s ÷ raw ws broadcast ${ratios.delivered_vs_raw_ws} (target ≥ ${TARGET}); ` +
        `mean frame ${streamBytes} B; finger dropped ${f.dropped}, cut ${f.cut_4008}; daemon RSS ${round(idleRss ?? 0, 1)} MB after warm-up, ` +
        `peak seen ${round(peakRss, 1)} MB\n`,
    );
    const file = writeResults(BENCH, rows, {
      ratios,
      target: {
        rule: `finger's event frames delivered/s at full speed ≥ ${TARGET}× a raw ws broadcast of the same frames to ${SUBSCRIBERS} subscribers`,
        met: ratios.delivered_vs_raw_ws >= TARGET,
      },
      frame_bytes: streamBytes,
      daemon_rss_mb: { after_warmup: round(idleRss ?? 0, 1), peak_seen: round(peakRss, 1) },
      options: { subscribers: SUBSCRIBERS, connections: CONNECTIONS, round_ms: ROUND_MS, rounds: ROUNDS },
      detail: { none, with_subscribers: withSubs, capacity },
      notes: [
        'Part 1 (tax): packages/daemon/dist/main.js as shipped on a temp FINGER_HOME (ws.max_sockets and ws.max_sockets_per_token raised to hold the subscribers); /v1/input `/hub target=echo blocking=true` from 50 keep-alive connections (admin token); rounds alternate no subscriber / a fresh process of subscribers on /v1/events each subscribed to everything. events_per_s is finger_events_emitted_total over the round.',
        "Part 2 (capacity): the first 64 event frames part 1's subscribers received, replayed at full speed (50 per turn of the event loop) by finger's event path — LocalEventBus + FileEventStore + EventGateway from dist, on a ws server (@fastify/websocket only does the upgrade), ws.max_slow_bytes 0 so that, like the raw peer, it drops for a client behind but never cuts it off — and by a raw ws broadcast of the same frames (each encoded once, one Buffer to every client, a client with > 1 MiB buffered skipped and counted); rounds alternate, a fresh subscriber process each.",
        'Delivered counts include the frames in flight when the sender stopped (read until they stop growing); rows are the median round of each case.',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await closeChild(subs).catch(() => undefined);
    await closeChild(finger).catch(() => undefined);
    await closeChild(raw).catch(() => undefined);
    if (daemon) await stopChild(daemon.child);
    await rm(home, { recursive: true, force: true });
  }
});

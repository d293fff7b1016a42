// ws: event fan-out to 100 WebSocket subscribers (issue 27). The real daemon (as shipped) on a
// temp FINGER_HOME under `/v1/input` `/hub target=echo blocking=true` load (50 keep-alive
// connections, admin token) with 0 and then 100 subscribers of `/v1/events` (each subscribed to
// everything, in one child process), against a raw `ws` server broadcasting a frame of the same
// size to 100 clients as fast as it can. Rows: /hub calls/s with 0 and 100 subscribers (the tax the
// fan-out puts on callers), and event frames delivered per second to all subscribers, finger vs
// raw ws. See bench/README.md.

import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchSetupError, runBench } from '../lib/bench-main.mjs';
import { DAEMON_MAIN, rssMb, runLoad, startDaemon, stopChild } from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { median, round } from '../lib/suite.mjs';

const BENCH = 'ws';
const SUBSCRIBERS = Number(process.env.BENCH_WS_SUBSCRIBERS ?? 100);
const CONNECTIONS = 50;
const ROUND_MS = Number(process.env.BENCH_WS_ROUND_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET = 0.8;

/** Forks `file` and resolves with the child and its first IPC message (after `ready`-like setup). */
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
    child.once('exit', (code, signal) => {
      log(`${file} exited (${code ?? signal})`);
      reject(new Error(`${file} exited (${code ?? signal})`));
    });
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

/** Tells a child to close and waits for its exit. */
function closeChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ cmd: 'close' });
  return exited;
}

const counts = (child) => ask(child, { cmd: 'read' }, (m) => m.counts !== undefined).then((m) => m.counts);
const log = (s) => process.env.BENCH_DEBUG && process.stderr.write(`ws: ${s}\n`);
const reset = (child) => ask(child, { cmd: 'reset' }, (m) => m.reset === true);

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN))
    throw new BenchSetupError(`${DAEMON_MAIN} is missing: build first with \`npm run build\``);
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-ws-'));
  let daemon;
  let subs;
  let raw;
  let rawSubs;
  try {
    daemon = await startDaemon(home);
    const run = Date.now().toString(36);
    const hub = {
      url: `${daemon.url}/v1/input`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.admin}` },
      body: (i) => JSON.stringify({ text: `/hub target=echo blocking=true {"text":"fan-out ${run}-${i}"}` }),
      ok: (s, b) => s === 200 && b.includes('"succeeded"'),
    };
    const load = async () => {
      const r = await runLoad(hub, { connections: CONNECTIONS, ms: ROUND_MS });
      if (r.errors > 0) throw new Error(`/hub: ${r.errors} wrong answers, first: ${r.first_error}`);
      return r;
    };
    await runLoad(hub, { connections: CONNECTIONS, ms: 1000 });
    log('warm');
    const idleRss = rssMb(daemon.pid);
    const none = [];
    for (let r = 0; r < ROUNDS; r++) none.push(await load());

    log('no-subscriber rounds done');
    const wsUrl = `${daemon.url.replace(/^http/, 'ws')}/v1/events`;
    subs = (await forkUntil('subscribers.mjs', [wsUrl, String(SUBSCRIBERS), daemon.admin], (m) => m.ready)).child;
    log('subscribers ready');
    const withSubs = [];
    let frameBytes = 0;
    let dropped = 0;
    let peakRss = 0;
    for (let r = 0; r < ROUNDS; r++) {
      await reset(subs);
      log('reset');
      const t0 = process.hrtime.bigint();
      const res = await load();
      log('loaded');
      const c = await counts(subs);
      log(`counts ${JSON.stringify(c)}`);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      peakRss = Math.max(peakRss, rssMb(daemon.pid) ?? 0);
      frameBytes = c.events > 0 ? c.bytes / c.events : frameBytes;
      dropped += c.dropped;
      withSubs.push({ ...res, delivered_per_s: Math.round(c.events / secs), dropped: c.dropped });
    }
    await closeChild(subs);

    log('with-subscriber rounds done');
    // the raw peer: a frame of the mean size finger delivered, to as many clients
    const started = await forkUntil('raw-broadcast.mjs', [], (m) => m.url !== undefined);
    raw = started.child;
    rawSubs = (await forkUntil('subscribers.mjs', [started.message.url, String(SUBSCRIBERS), '-'], (m) => m.ready))
      .child;
    log('raw ready');
    const pad = Math.max(0, Math.round(frameBytes) - 80);
    const frame = JSON.stringify({
      type: 'event',
      event: { id: '01J0000000000000000000000', type: 'HUB_CALL', data: { pad: 'x'.repeat(pad) } },
    });
    const rawRounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      await reset(rawSubs);
      const t0 = process.hrtime.bigint();
      const sent = await ask(raw, { cmd: 'run', ms: ROUND_MS, frame }, (m) => m.sent !== undefined);
      // what was sent and is still in flight counts when it arrives: wait until the counts settle
      let c = await counts(rawSubs);
      for (let k = 0; k < 100 && c.events < sent.sent; k++) {
        await new Promise((resolve) => setImmediate(resolve));
        c = await counts(rawSubs);
      }
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      rawRounds.push({ delivered_per_s: Math.round(c.events / secs), sent: sent.sent, skipped: sent.dropped });
    }

    log('raw rounds done');
    const med = (xs, k) => {
      const m = median(xs.map((x) => x[k]));
      return xs.find((x) => x[k] === m) ?? xs[0];
    };
    const n0 = med(none, 'ops_per_s');
    const n1 = med(withSubs, 'ops_per_s');
    const r1 = med(rawRounds, 'delivered_per_s');
    const rows = [
      {
        system: 'finger',
        scenario: '/hub c50, 0 subscribers',
        ops_per_s: n0.ops_per_s,
        p50_us: n0.p50_us,
        p99_us: n0.p99_us,
      },
      {
        system: 'finger',
        scenario: `/hub c50, ${SUBSCRIBERS} subscribers`,
        ops_per_s: n1.ops_per_s,
        p50_us: n1.p50_us,
        p99_us: n1.p99_us,
        delivered_per_s: n1.delivered_per_s,
        dropped: n1.dropped,
      },
      {
        system: 'ws',
        scenario: `raw broadcast, ${SUBSCRIBERS} subscribers`,
        ops_per_s: r1.delivered_per_s,
        p50_us: null,
        p99_us: null,
        delivered_per_s: r1.delivered_per_s,
        dropped: r1.skipped,
      },
    ];
    printTable(BENCH, rows);
    const ratios = {
      hub_with_subscribers_vs_none: round(n1.ops_per_s / n0.ops_per_s, 3),
      delivered_vs_raw_ws: round(n1.delivered_per_s / r1.delivered_per_s, 3),
    };
    process.stdout.write(
      `
/hub with ${SUBSCRIBERS} subscribers ÷ none ${ratios.hub_with_subscribers_vs_none}; ` +
        `finger event frames delivered/s ÷ raw ws broadcast ${ratios.delivered_vs_raw_ws} (target ≥ ${TARGET}); ` +
        `mean frame ${Math.round(frameBytes)} B; dropped ${dropped}; daemon RSS ${round(idleRss ?? 0, 1)} MB after warm-up, ` +
        `peak seen ${round(peakRss, 1)} MB\n`,
    );
    const file = writeResults(BENCH, rows, {
      ratios,
      target: {
        rule: `finger's delivered event frames/s ≥ ${TARGET}× a raw ws broadcast to ${SUBSCRIBERS} subscribers`,
        met: ratios.delivered_vs_raw_ws >= TARGET,
      },
      frame_bytes: Math.round(frameBytes),
      daemon_rss_mb: { after_warmup: round(idleRss ?? 0, 1), peak_seen: round(peakRss, 1) },
      options: { subscribers: SUBSCRIBERS, connections: CONNECTIONS, round_ms: ROUND_MS, rounds: ROUNDS },
      detail: { none, with_subscribers: withSubs, raw: rawRounds },
      notes: [
        'finger: packages/daemon/dist/main.js as shipped on a temp FINGER_HOME; the load is /v1/input `/hub target=echo blocking=true` from 50 keep-alive connections (admin token); subscribers are one child process of `ws` clients on /v1/events with the admin token, each subscribed to everything.',
        "finger's delivered rate is bounded by the events the calls produce: the ratio to the raw broadcast (which sends as fast as its clients take frames, skipping a client with > 1 MiB buffered) says how far finger's fan-out is from what ws itself delivers to the same subscriber process, not the fan-out's own ceiling.",
        'Rows: the median round (by ops/s, or delivered/s for the raw row) of each case.',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    if (subs && subs.exitCode === null) subs.kill();
    if (rawSubs && rawSubs.exitCode === null) rawSubs.kill();
    if (raw && raw.exitCode === null) raw.kill();
    if (daemon) await stopChild(daemon.child);
    await rm(home, { recursive: true, force: true });
  }
});

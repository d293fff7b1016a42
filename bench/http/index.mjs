// http: finger's HTTP front as an integrator uses it — `POST /v1/messages` (operator token) and
// `POST /v1/input` with `/hub target=echo blocking=true {…}` (admin token) against the real daemon
// (packages/daemon/dist/main.js as shipped: firewall, audit with fsync, event files, info logs),
// beside a bare fastify `POST /echo` in its own process, in the same run. 100 keep-alive
// connections from this process (a node:http Agent: autocannon is not installed), every payload
// unique. Rounds are interleaved and the median round per case is reported, with the CPU time the
// serving process spent per request (robust to this shared machine's descheduling). See bench/README.md.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { BenchSetupError, runBench } from '../lib/bench-main.mjs';
import {
  api,
  DAEMON_MAIN,
  dirBytes,
  eventFilesPerCall,
  hubEchoTarget,
  runLoad,
  startDaemon,
  stopChild,
} from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { median, round } from '../lib/suite.mjs';

const BENCH = 'http';
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 100);
const ROUND_MS = Number(process.env.BENCH_HTTP_ROUND_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1500);
const TARGETS = { messages: 0.5, input: 0.4, p99_factor: 3 };

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux Node runs on). */
const USER_HZ = 100;

/** CPU time (user + system, µs) process `pid` has used so far (Linux /proc); undefined elsewhere. */
function cpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / USER_HZ;
  } catch {
    return undefined;
  }
}

async function startEcho() {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'echo-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`echo server exited (${code})`)));
  });
  return { child, url: JSON.parse(line).url };
}

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN))
    throw new BenchSetupError(`${DAEMON_MAIN} is missing: build first with \`npm run build\``);
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-http-'));
  const echo = await startEcho();
  let daemon;
  try {
    daemon = await startDaemon(home);
    const { token: operator } = await api(daemon.url, daemon.admin, 'POST', '/v1/tokens', {
      name: 'bench-operator',
      role: 'operator',
    });
    const run = Date.now().toString(36);
    const json = { 'content-type': 'application/json' };
    const cases = {
      'fastify-echo': {
        system: 'fastify',
        scenario: 'POST /echo',
        target: {
          url: `${echo.url}/echo`,
          headers: json,
          body: (i) => JSON.stringify({ target: 'echo', payload: { text: `hello ${run}-${i}` } }),
        },
      },
      messages: {
        system: 'finger',
        scenario: 'POST /v1/messages',
        target: {
          url: `${daemon.url}/v1/messages`,
          headers: { ...json, authorization: `Bearer ${operator}` },
          body: (i) => JSON.stringify({ target: 'echo', payload: { text: `hello ${run}-m${i}` } }),
          ok: (s, b) => s === 200 && b.includes('"succeeded"'),
        },
      },
      input: {
        system: 'finger',
        scenario: 'POST /v1/input /hub',
        target: hubEchoTarget(daemon, `hello ${run}`),
      },
    };
    const names = Object.keys(cases);
    for (const name of names) {
      const w = await runLoad(cases[name].target, { connections: CONNECTIONS, ms: WARMUP_MS });
      if (w.errors > 0) throw new Error(`${name} warmup: ${w.errors} wrong answers, first: ${w.first_error}`);
    }
    const auditBefore = dirBytes(join(home, 'audit'));
    let fingerCalls = 0;
    const rounds = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + r) % names.length];
        globalThis.gc?.();
        const pid = name === 'fastify-echo' ? echo.child.pid : daemon.pid;
        const cpu0 = cpuUs(pid);
        const res = await runLoad(cases[name].target, { connections: CONNECTIONS, ms: ROUND_MS });
        const cpu1 = cpuUs(pid);
        if (cpu0 !== undefined && cpu1 !== undefined && res.ops > 0)
          res.server_cpu_us_per_req = round((cpu1 - cpu0) / res.ops, 1);
        if (res.errors > 0) throw new Error(`${name}: ${res.errors} wrong answers, first: ${res.first_error}`);
        if (name !== 'fastify-echo') fingerCalls += res.ops;
        rounds[name].push(res);
      }
    }
    // the event bus writes every 50 ms and packs a closed segment after the write that closed it
    await new Promise((r) => setTimeout(r, 500));
    const eventFiles = eventFilesPerCall(join(home, 'events'));
    const auditBytes = dirBytes(join(home, 'audit')) - auditBefore;
    const pick = (name) => {
      const xs = rounds[name];
      const m = median(xs.map((x) => x.ops_per_s));
      return xs.find((x) => x.ops_per_s === m) ?? xs[0];
    };
    const rows = names.map((name) => {
      const m = pick(name);
      return {
        system: cases[name].system,
        scenario: cases[name].scenario,
        ops_per_s: m.ops_per_s,
        p50_us: m.p50_us,
        p99_us: m.p99_us,
      };
    });
    printTable(BENCH, rows);
    const bare = pick('fastify-echo');
    const ratio = (name) => round(pick(name).ops_per_s / bare.ops_per_s, 3);
    const p99 = (name) => round(pick(name).p99_us / bare.p99_us, 2);
    // CPU per request of the serving process, median over rounds: what one CPU-second buys, which
    // other work on the machine does not move as much as wall-clock throughput
    const cpuPerReq = (name) => {
      const xs = rounds[name].map((x) => x.server_cpu_us_per_req).filter((x) => x !== undefined);
      return xs.length === 0 ? null : median(xs);
    };
    const cpuRatio = (name) => {
      const f = cpuPerReq('fastify-echo');
      const c = cpuPerReq(name);
      return f === null || c === null || c === 0 ? null : round(f / c, 3);
    };
    const ratios = {
      messages_per_server_cpu_vs_fastify: cpuRatio('messages'),
      input_per_server_cpu_vs_fastify: cpuRatio('input'),
      messages_vs_fastify: ratio('messages'),
      input_vs_fastify: ratio('input'),
      messages_p99_vs_fastify: p99('messages'),
      input_p99_vs_fastify: p99('input'),
    };
    const met = {
      messages: ratios.messages_vs_fastify >= TARGETS.messages,
      input: ratios.input_vs_fastify >= TARGETS.input,
      p99: ratios.messages_p99_vs_fastify <= TARGETS.p99_factor && ratios.input_p99_vs_fastify <= TARGETS.p99_factor,
    };
    const perCall = {
      event_bytes: eventFiles.disk_per_call,
      audit_bytes: fingerCalls > 0 ? Math.round(auditBytes / fingerCalls) : null,
      // over the files as they are at the end (pruned segments do not skew it): on disk, and as plain lines
      event_files: eventFiles,
    };
    process.stdout.write(
      `\n/v1/messages ÷ fastify ${ratios.messages_vs_fastify} (target ≥ ${TARGETS.messages}), ` +
        `/v1/input /hub ÷ fastify ${ratios.input_vs_fastify} (target ≥ ${TARGETS.input}), ` +
        `p99 ÷ fastify's ${ratios.messages_p99_vs_fastify} / ${ratios.input_p99_vs_fastify} (target ≤ ${TARGETS.p99_factor}); ` +
        `met: ${Object.values(met).every(Boolean) ? 'yes' : 'NO'}\n` +
        `server CPU per request (median round): fastify ${cpuPerReq('fastify-echo')} µs, /v1/messages ${cpuPerReq('messages')} µs, ` +
        `/v1/input ${cpuPerReq('input')} µs — per server CPU-second ${ratios.messages_per_server_cpu_vs_fastify}× / ` +
        `${ratios.input_per_server_cpu_vs_fastify}× fastify's (reported, not the target)\n` +
        `audit written per finger call: ${perCall.audit_bytes} B (${fingerCalls} calls)\n` +
        `event files per call: ${eventFiles.disk_per_call} B on disk, ${eventFiles.lines_per_call} B as plain lines ` +
        `(${eventFiles.calls} calls in the files; on disk ÷ plain ${eventFiles.lines_per_call > 0 ? round(eventFiles.disk_per_call / eventFiles.lines_per_call, 3) : '-'})\n`,
    );
    const file = writeResults(BENCH, rows, {
      ratios,
      target: {
        rule: `/v1/messages ≥ ${TARGETS.messages}× and /v1/input /hub ≥ ${TARGETS.input}× bare fastify echo ops/s, p99 ≤ ${TARGETS.p99_factor}× fastify's`,
        met,
      },
      per_call_bytes: perCall,
      options: { connections: CONNECTIONS, round_ms: ROUND_MS, rounds: ROUNDS, warmup_ms: WARMUP_MS },
      detail: Object.fromEntries(names.map((n) => [n, rounds[n]])),
      notes: [
        'Load generator: node:http Agent with keep-alive, 100 connections in the bench process, each sending its next request when the previous answered; latency per request; the median round (by ops/s) per case with its own p50/p99.',
        'finger: packages/daemon/dist/main.js as `myfinger daemon start` runs it (--max-semi-space-size=8), default config (firewall, fsync audit, event files, info logs to a discarded pipe), built-in echo module; /v1/messages with an operator token, /v1/input with the admin token.',
        'fastify: a bare fastify 5 POST /echo returning the parsed body, in its own process.',
        'Every answer is checked (200 and status succeeded for finger); a wrong answer fails the bench.',
        'detail[].server_cpu_us_per_req: user+system CPU of the serving process (the daemon, or the fastify echo) during the round ÷ requests answered (/proc/<pid>/stat, 10 ms ticks); ratios.*_per_server_cpu_vs_fastify = fastify CPU per request ÷ finger CPU per request (medians over rounds).',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    if (daemon) await stopChild(daemon.child);
    await stopChild(echo.child);
    await rm(home, { recursive: true, force: true });
  }
});

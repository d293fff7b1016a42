// A small loopback HTTP load generator (autocannon is not a dependency here): C connections of
// one keep-alive node:http Agent, each issuing its next request as soon as the previous answered,
// for a fixed time. Per-request latency goes into a preallocated Float64Array; ops/s is completed
// requests ÷ wall time. Also starts the real daemon as a child process (as shipped) for the
// HTTP and WebSocket benches.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';

import { REPO_ROOT } from './bench-main.mjs';

const MAX_SAMPLES = 2_000_000;

/**
 * @typedef {object} LoadTarget
 * @property {string} url full URL of the endpoint
 * @property {Record<string, string>} headers
 * @property {(i: number) => string} body request body of the i-th request
 * @property {(status: number, body: string, i: number) => boolean} [ok] is the answer right (default 2xx)
 */

/**
 * Runs `target` with `connections` concurrent keep-alive connections for `ms` milliseconds.
 * Returns {ops, ops_per_s, p50_us, p99_us, errors, first_error}.
 * @param {LoadTarget} target
 * @param {{connections: number, ms: number}} o
 */
export async function runLoad(target, o) {
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections, maxFreeSockets: o.connections });
  const lat = new Float64Array(MAX_SAMPLES);
  let n = 0;
  let seq = 0;
  let errors = 0;
  let firstError;
  const u = new URL(target.url);
  const base = { host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', agent };
  const one = (i) =>
    new Promise((resolve) => {
      const data = target.body(i);
      const req = request(
        { ...base, headers: { ...target.headers, 'content-length': Buffer.byteLength(data) } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', (e) => resolve({ status: 0, body: String(e) }));
        },
      );
      req.on('error', (e) => resolve({ status: 0, body: String(e) }));
      req.end(data);
    });
  const ok = target.ok ?? ((status) => status >= 200 && status < 300);
  const t0 = process.hrtime.bigint();
  const end = Number(t0) / 1e6 + o.ms;
  const worker = async () => {
    while (Number(process.hrtime.bigint()) / 1e6 < end) {
      const i = seq++;
      const s = process.hrtime.bigint();
      const r = await one(i);
      const us = Number(process.hrtime.bigint() - s) / 1000;
      if (!ok(r.status, r.body, i)) {
        errors++;
        firstError ??= `${r.status} ${r.body.slice(0, 300)}`;
        if (errors > 100) return;
        continue;
      }
      if (n < MAX_SAMPLES) lat[n++] = us;
    }
  };
  await Promise.all(Array.from({ length: o.connections }, worker));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  const sorted = lat.subarray(0, n).sort();
  const q = (p) => (n === 0 ? null : Math.round(sorted[Math.min(n - 1, Math.floor(p * n))] * 100) / 100);
  return { ops: n, ops_per_s: Math.round(n / wall), p50_us: q(0.5), p99_us: q(0.99), errors, first_error: firstError };
}

/** Environment of a daemon: ours without any FINGER_* setting, plus the temp home and port 0. */
export function daemonEnv(home, extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FINGER_')) env[k] = v;
  return { ...env, FINGER_HOME: home, FINGER_PORT: '0', FINGER_HOST: '127.0.0.1', ...extra };
}

/** The daemon the benches start; `BENCH_DAEMON_MAIN` names another build's main.js (before/after). */
export const DAEMON_MAIN = process.env.BENCH_DAEMON_MAIN ?? join(REPO_ROOT, 'packages', 'daemon', 'dist', 'main.js');

/**
 * Starts the real daemon (`node --max-semi-space-size=8 --heap-growing-percent=100 packages/daemon/dist/main.js`, the flags
 * `myfinger daemon start` uses) on `home`; resolves with {child, url, admin, pid} once daemon.json
 * names it. Its output is discarded (kept in `output` for a failure message).
 */
export async function startDaemon(home, env = {}) {
  const child = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=100', DAEMON_MAIN], {
    env: daemonEnv(home, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  const keep = (d) => {
    output.push(String(d));
    if (output.length > 50) output.shift();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const file = join(home, 'daemon.json');
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`daemon exited (${child.exitCode}):\n${output.join('')}`);
    if (existsSync(file)) {
      try {
        const info = JSON.parse(readFileSync(file, 'utf8'));
        if (info.pid === child.pid) {
          const admin = readFileSync(join(home, 'token'), 'utf8').trim();
          return { child, url: info.url, admin, pid: child.pid };
        }
      } catch {
        // being written
      }
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`daemon did not start within 30 s:\n${output.join('')}`);
}

/** Stops a child with SIGTERM (SIGKILL after 15 s) and waits for its exit. */
export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Bytes of the files under `dir` (recursively), 0 when it does not exist. */
export function dirBytes(dir) {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

/**
 * What a daemon's event files hold per call: the bytes they take on disk, the bytes of their
 * lines (gzip'd segments decoded), and the calls they record (distinct request ids of
 * DISPATCH_RESULT events: one per finished gateway call). Counted over the files as they are, so
 * segments the store pruned do not skew it.
 */
export function eventFilesPerCall(dir) {
  let disk = 0;
  let lines = 0;
  const calls = new Set();
  if (existsSync(dir))
    for (const name of readdirSync(dir)) {
      if (!/^events-\d+\.jsonl(\.gz)?$/.test(name)) continue;
      const bytes = readFileSync(join(dir, name));
      disk += bytes.length;
      const text = (
        name.endsWith('.gz') ? gunzipSync(bytes, { finishFlush: zlibConstants.Z_SYNC_FLUSH }) : bytes
      ).toString('utf8');
      lines += Buffer.byteLength(text);
      for (const line of text.split('\n')) {
        if (!line.includes('"DISPATCH_RESULT"')) continue;
        const m = /"request_id":"([^"]+)"/.exec(line);
        if (m) calls.add(m[1]);
      }
    }
  const n = calls.size;
  return {
    calls: n,
    disk_bytes: disk,
    line_bytes: lines,
    disk_per_call: n > 0 ? Math.round(disk / n) : 0,
    lines_per_call: n > 0 ? Math.round(lines / n) : 0,
  };
}

/** JSON request to the daemon with a bearer token; resolves with the parsed body. */
export async function api(url, token, method, path, body) {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** VmRSS of a process in MB (Linux), undefined when unreadable. */
export function rssMb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `/v1/input` `/hub target=echo blocking=true` target of the benches (admin token): `tag` makes
 * each call's text distinct (the behaviour layer's repeat limit never sees the same call twice).
 */
export function hubEchoTarget(daemon, tag) {
  return {
    url: `${daemon.url}/v1/input`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.admin}` },
    body: (i) => JSON.stringify({ text: `/hub target=echo blocking=true {"text":"${tag}-${i}"}` }),
    ok: (s, b) => s === 200 && b.includes('"succeeded"'),
  };
}

/** Writes a config.json into `home` letting one token hold `sockets` WebSockets (plus 100 spare). */
export async function allowSockets(home, sockets) {
  await mkdir(join(home, 'config'), { recursive: true });
  await writeFile(
    join(home, 'config', 'config.json'),
    JSON.stringify({ ws: { max_sockets: sockets + 100, max_sockets_per_token: sockets + 100 } }),
  );
}

/** Tells a forked child (`{cmd: 'close'}` over IPC) to close and waits for its exit; at once when it is gone. */
export function closeChild(child) {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ cmd: 'close' });
  return exited;
}

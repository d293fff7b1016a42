// daemon-rss: resident memory of the real daemon at idle. Starts `node packages/daemon/dist/main.js`
// on a temp FINGER_HOME with port 0, waits for daemon.json, idles 3 s, reads VmRSS from
// /proc/<pid>/status, then stops it with SIGTERM. Target: ≤ 100 MB. See bench/README.md.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { REPO_ROOT, runBench } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round } from '../lib/suite.mjs';

const BENCH = 'daemon-rss';
const MAIN = join(REPO_ROOT, 'packages', 'daemon', 'dist', 'main.js');
const IDLE_MS = 3000;
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;
const TARGET_MB = 100;

/** A field of /proc/<pid>/status in MB (the kernel reports kB), or undefined when unreadable. */
function procStatusMb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Pids of the descendants of `pid` (via /proc/<pid>/task/<tid>/children), empty when unsupported. */
function descendants(pid) {
  const out = [];
  let tids = [];
  try {
    tids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return out;
  }
  for (const child of tids) out.push(child, ...descendants(child));
  return out;
}

/** Environment of the daemon: ours without any FINGER_* setting, plus the temp home and port 0. */
function daemonEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FINGER_')) env[k] = v;
  return { ...env, FINGER_HOME: home, FINGER_PORT: '0', FINGER_HOST: '127.0.0.1', FINGER_LOG_LEVEL: 'warn' };
}

async function waitForDaemonFile(file, child, output) {
  const until = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `daemon exited (${child.exitCode ?? child.signalCode}) before writing daemon.json:\n${output.join('')}`,
      );
    }
    if (existsSync(file)) {
      try {
        const info = JSON.parse(readFileSync(file, 'utf8'));
        if (info.pid === child.pid) return info;
      } catch {
        // being written; retry
      }
    }
    await sleep(50);
  }
  throw new Error(`daemon did not write ${file} within ${START_TIMEOUT_MS} ms:\n${output.join('')}`);
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

runBench(BENCH, async () => {
  if (!existsSync(MAIN)) {
    process.stdout.write(`\n== ${BENCH} ==\nskipped: daemon not built (${MAIN} missing; \`npm run build\`)\n`);
    return;
  }
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-rss-'));
  const output = [];
  // the flags `myfinger daemon start` runs the daemon with (packages/cli/src/commands/daemon.ts)
  const child = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=100', MAIN], {
    env: daemonEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d) => output.push(String(d)));
  child.stderr.on('data', (d) => output.push(String(d)));
  try {
    const info = await waitForDaemonFile(join(home, 'daemon.json'), child, output);
    await sleep(IDLE_MS);
    const rss = procStatusMb(child.pid, 'VmRSS');
    const hwm = procStatusMb(child.pid, 'VmHWM');
    if (rss === undefined) throw new Error(`cannot read /proc/${child.pid}/status (Linux only)`);
    const kids = descendants(child.pid);
    const treeRss = kids.reduce((sum, pid) => sum + (procStatusMb(pid, 'VmRSS') ?? 0), rss);
    const rows = [
      { system: 'finger', scenario: 'idle-rss', ops_per_s: 0, p50_us: null, p99_us: null, rss_mb: round(rss, 1) },
    ];
    printTable(BENCH, rows);
    const met = rss <= TARGET_MB;
    process.stdout.write(
      `\nidle RSS ${round(rss, 1)} MB (peak ${round(hwm ?? 0, 1)} MB, with ${kids.length} child process(es) ${round(treeRss, 1)} MB); target ≤ ${TARGET_MB} MB: ${met ? 'yes' : 'NO'}\n`,
    );
    const file = writeResults(BENCH, rows, {
      target: { rule: `idle daemon VmRSS ≤ ${TARGET_MB} MB`, met },
      rss_peak_mb: round(hwm ?? 0, 1),
      rss_tree_mb: round(treeRss, 1),
      child_processes: kids.length,
      daemon_version: info.version,
      notes: [
        `The daemon (packages/daemon/dist/main.js) on a fresh FINGER_HOME with port 0, idle ${IDLE_MS / 1000} s after daemon.json appeared; rss_mb is VmRSS of the daemon process from /proc/<pid>/status.`,
        'ops_per_s is 0 and p50_us/p99_us are null for this row: it measures memory, not calls.',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await stop(child);
    await rm(home, { recursive: true, force: true });
  }
});

// Machine instructions per hub call with the firewall off, a no-op interceptor, and on — counted
// by valgrind's callgrind, after a warm-up, so the figures do not move with the load of a shared
// machine the way ops/s do (not part of `npm run bench`: each mode takes about two minutes).
// Needs valgrind (callgrind_control) and a build (`npm run build`).
//   node bench/firewall/instructions.mjs [calls=200000] [modes=off,noop,on] [runs=2]
// Prints instructions per call for each run, the median per mode and on ÷ off (as off ÷ on: the
// throughput ratio the instruction counts predict). The optimizer's inlining decisions differ from
// process to process (±3 % here), hence several runs.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../lib/bench-main.mjs';

const calls = Number(process.argv[2] ?? 200_000);
const modes = (process.argv[3] ?? 'off,noop,on').split(',');
const runs = Number(process.argv[4] ?? 2);
if (spawnSync('valgrind', ['--version']).status !== 0) {
  process.stderr.write('valgrind is not installed (apt-get install -y valgrind)\n');
  process.exit(2);
}

function once(mode, i) {
  const out = join(tmpdir(), `finger-fw-callgrind-${process.pid}-${mode}-${i}.out`);
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        `--callgrind-out-file=${out}`,
        process.execPath,
        join(REPO_ROOT, 'bench', 'firewall', 'count-calls.mjs'),
        mode,
        String(calls),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('warm\n') && !stdout.includes('\u0000')) {
        stdout += '\u0000';
        spawnSync('callgrind_control', ['-i', 'on', String(child.pid)]);
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      try {
        const m = /Collected : (\d+)/.exec(stderr) ?? /summary: (\d+)/.exec(readFileSync(out, 'utf8'));
        if (code !== 0 || m === null) return reject(new Error(`${mode}: exit ${code}\n${stderr.slice(-2000)}`));
        resolve(Number(m[1]) / calls);
      } finally {
        rmSync(out, { force: true });
      }
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const results = {};
for (const mode of modes) {
  results[mode] = [];
  // two at a time: callgrind runs one thread of the machine each
  for (let i = 0; i < runs; i += 2) {
    const batch = [once(mode, i)];
    if (i + 1 < runs) batch.push(once(mode, i + 1));
    results[mode].push(...(await Promise.all(batch)));
  }
  process.stdout.write(
    `${mode.padEnd(5)} ${results[mode].map((x) => Math.round(x).toLocaleString('en-US')).join('  ')} instructions/call (median ${Math.round(median(results[mode])).toLocaleString('en-US')})\n`,
  );
}
const off = results.off ? median(results.off) : undefined;
for (const mode of modes)
  if (mode !== 'off' && off !== undefined)
    process.stdout.write(
      `${mode} ÷ off (throughput the counts predict): ${(off / median(results[mode])).toFixed(3)}\n`,
    );

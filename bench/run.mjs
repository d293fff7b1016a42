// `npm run bench [-- <name>...]`: runs every bench (each folder bench/<name>/ holding an
// index.mjs), or only the named ones, each in a fresh `node --expose-gc` child process with the
// output passed through. Exits 1 when a bench fails, 2 on an unknown name.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const NOT_BENCHES = new Set(['lib', 'results', 'node_modules']);

/** Names of the benches: folders of bench/ with an index.mjs, sorted. */
function discover() {
  return readdirSync(BENCH_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !NOT_BENCHES.has(e.name) && existsSync(join(BENCH_DIR, e.name, 'index.mjs')))
    .map((e) => e.name)
    .sort();
}

function runOne(name) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(BENCH_DIR, name, 'index.mjs')], { stdio: 'inherit' });
    child.on('error', (e) => {
      process.stderr.write(`bench ${name}: cannot start: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function main() {
  const all = discover();
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`usage: npm run bench [-- <name>...]\nbenches: ${all.join(', ')}\n`);
    return 0;
  }
  if (args.includes('--list')) {
    process.stdout.write(`${all.join('\n')}\n`);
    return 0;
  }
  const unknown = args.filter((a) => !all.includes(a));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench: ${unknown.join(', ')} (have: ${all.join(', ')})\n`);
    return 2;
  }
  const selected = args.length > 0 ? args : all;
  const failed = [];
  for (const name of selected) {
    process.stderr.write(`\n>> bench ${name}\n`);
    const code = await runOne(name);
    if (code !== 0) failed.push(`${name} (exit ${code})`);
  }
  if (failed.length > 0) {
    process.stderr.write(`\nfailed: ${failed.join(', ')}\n`);
    return 1;
  }
  process.stderr.write(`\n${selected.length} bench(es) done; results in bench/results/\n`);
  return 0;
}

main().then((code) => process.exit(code));

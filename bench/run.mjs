// `npm run bench [-- <name>...]`: runs every bench (each folder bench/<name>/ holding an
// index.mjs), or only the named ones, each in a fresh `node --expose-gc` child process with the
// output passed through. Exits 1 when a bench fails, 2 on an unknown name.
//
// bench/ is not a workspace of the root package: its own dependencies (the peers finger is measured
// against, e.g. Moleculer, which declares Node >= 22) live in bench/package.json and
// bench/package-lock.json and are installed on demand into bench/node_modules with `npm ci --prefix
// bench` the first time a bench runs, or again when bench/package-lock.json changed since. Finger's
// own packages and the root's dev dependencies (ws, fastify, playwright-core…) are resolved from the
// root node_modules, by Node's lookup upward from bench/ or through importBuilt (lib/bench-main.mjs).

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
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

/** Why bench/node_modules must be (re)installed, or null when it is up to date with the lock. */
function depsOutOfDate() {
  const lock = join(BENCH_DIR, 'package-lock.json');
  // npm writes this hidden lockfile into node_modules after every install.
  const installed = join(BENCH_DIR, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return 'bench/node_modules is missing';
  if (statSync(lock).mtimeMs > statSync(installed).mtimeMs)
    return 'bench/package-lock.json is newer than bench/node_modules';
  return null;
}

/**
 * Installs the bench's own dependencies with `npm ci --prefix bench` when they are missing or
 * older than the lock, saying so on stderr. Resolves to the exit code of npm (0 when nothing to do).
 */
function ensureDeps() {
  const why = depsOutOfDate();
  if (why === null) return Promise.resolve(0);
  // Under `npm run`, npm_execpath is the npm that runs us: use the same one.
  const npmCli = process.env.npm_execpath;
  const [cmd, args] =
    npmCli !== undefined && /npm-cli\.js$/.test(npmCli)
      ? [process.execPath, [npmCli]]
      : [process.platform === 'win32' ? 'npm.cmd' : 'npm', []];
  args.push('ci', '--prefix', BENCH_DIR, '--no-audit', '--no-fund');
  process.stderr.write(
    `${why}: installing the bench's own dependencies (npm ci --prefix bench; moleculer declares Node >= 22, ` +
      `an EBADENGINE warning from it is expected on Node 20, the bench runs it anyway)\n`,
  );
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (e) => {
      process.stderr.write(`cannot run npm: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
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
  const npmCode = await ensureDeps();
  if (npmCode !== 0) {
    process.stderr.write(`installing the bench's dependencies failed (npm exit ${npmCode}); no bench ran\n`);
    return 1;
  }
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

// What every bench's index.mjs shares: the repo root, the suite options, importing a built
// workspace package with a clear message when it is not built, and a main wrapper that turns a
// thrown error into exit code 1 (bench/run.mjs reports it).

import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { DEFAULT_TURN_OPS } from './measure.mjs';

/** Absolute path of the repository root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Thrown for a missing prerequisite (unbuilt package…): printed without a stack trace. */
export class BenchSetupError extends Error {}

function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new BenchSetupError(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/**
 * Suite options: 9 rounds of ~300 ms after ~1 s of warmup per case, an event-loop turn every
 * ~1000 ops; overridable with BENCH_ROUNDS, BENCH_ROUND_MS, BENCH_WARMUP_MS and BENCH_TURN_OPS.
 * @returns {import('./suite.mjs').SuiteOptions}
 */
export function suiteOptions() {
  return {
    rounds: Math.max(1, envInt('BENCH_ROUNDS', 9)),
    roundMs: Math.max(10, envInt('BENCH_ROUND_MS', 300)),
    warmupMs: envInt('BENCH_WARMUP_MS', 1000),
    turnOps: envInt('BENCH_TURN_OPS', DEFAULT_TURN_OPS),
  };
}

/** Newest modification time of the files under `dir` whose name ends with `ext`. */
async function newestMtime(dir, ext) {
  let newest = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, await newestMtime(p, ext));
    else if (e.name.endsWith(ext) && !e.name.endsWith('.d.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Checks that a workspace package is built (`<pkgDir>/dist/<entry>` exists) and warns on stderr
 * when a file under `src` is newer than everything under `dist`. Throws BenchSetupError
 * with the build command when it is missing.
 * @param {string} pkgDir package folder relative to the repo root, e.g. 'packages/hub'
 * @param {string} [entry] file under dist, default 'index.js'
 * @returns {Promise<string>} absolute path of the built entry
 */
export async function requireBuilt(pkgDir, entry = 'index.js') {
  const file = join(REPO_ROOT, pkgDir, 'dist', entry);
  if (!existsSync(file)) {
    throw new BenchSetupError(
      `${relative(REPO_ROOT, file)} is missing: build first with \`npm run build\` (or \`npx tsc -b ${pkgDir}\`)`,
    );
  }
  const src = join(REPO_ROOT, pkgDir, 'src');
  if (existsSync(src)) {
    const built = await newestMtime(join(REPO_ROOT, pkgDir, 'dist'), '.js');
    if ((await newestMtime(src, '.ts')) > built) {
      process.stderr.write(
        `warning: ${pkgDir}/src is newer than its dist; results may be stale (\`npx tsc -b ${pkgDir}\`)\n`,
      );
    }
  }
  return file;
}

/**
 * Imports a built workspace package (see {@link requireBuilt}).
 * @param {string} pkgDir
 * @param {string} [entry]
 */
export async function importBuilt(pkgDir, entry = 'index.js') {
  return import(pathToFileURL(await requireBuilt(pkgDir, entry)).href);
}

const benchRequire = createRequire(join(REPO_ROOT, 'bench', 'package.json'));

/**
 * Requires one of the bench's own dependencies (bench/package.json: the peers finger is measured
 * against), installed into bench/node_modules by `npm run bench`. Throws BenchSetupError with the
 * install command when it is not installed (a bench started alone with `node bench/<name>/index.mjs`).
 * @param {string} name package name, e.g. 'moleculer'
 */
export function requireBenchDep(name) {
  try {
    return benchRequire(name);
  } catch (e) {
    if (e?.code !== 'MODULE_NOT_FOUND') throw e;
    throw new BenchSetupError(
      `${name} is not installed: it is a dependency of bench/ only; \`npm run bench\` installs them, or \`npm ci --prefix bench\``,
    );
  }
}

/**
 * Runs a bench's body; a BenchSetupError prints its message, any other error its stack; both
 * exit with code 1. The process exits explicitly when the body is done so a stray handle
 * (a peer's timer) cannot keep it alive.
 * @param {string} name
 * @param {() => Promise<void>} body
 */
export function runBench(name, body) {
  if (typeof globalThis.gc !== 'function') {
    process.stderr.write(`note: run with \`node --expose-gc\` (npm run bench does) for a GC between rounds\n`);
  }
  body().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(
        `bench ${name} failed: ${e instanceof BenchSetupError ? e.message : (e?.stack ?? String(e))}\n`,
      );
      process.exit(1);
    },
  );
}

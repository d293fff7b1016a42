import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Path of the built `myfinger` executable shim. */
export const MYFINGER_BIN = fileURLToPath(new URL('../../cli/bin/myfinger.js', import.meta.url));

/** Outcome of one CLI run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `myfinger` child still running: its outcome, its output so far, its pid. */
export interface CliChild {
  done: Promise<CliRun>;
  out(): string;
  err(): string;
  /** True until the process has exited. */
  running(): boolean;
  pid: number | undefined;
  /** Sends `signal` (SIGKILL by default; SIGTERM for a clean shutdown). */
  kill(signal?: NodeJS.Signals): void;
}

/** Children still running: killed when the test process exits (its timers never fire then). */
const live = new Set<ChildProcess>();
let exitHook = false;

/**
 * Starts the built `myfinger` as a child process with `env` (in `cwd` when given), killed after
 * `timeout_ms`, or when the test process exits first (a failed test's afterAll may not have
 * stopped it). For commands a test follows while they run (`myfinger run`, `events tail`).
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeout_ms?: number } = {},
): CliChild {
  const child = spawn(process.execPath, [MYFINGER_BIN, ...args], {
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  // a bound for a loaded machine, not an expectation (a CLI child took over 20 s at load 16)
  const t = setTimeout(() => child.kill('SIGKILL'), options.timeout_ms ?? 60_000);
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
  let running = true;
  live.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  child.on('exit', () => {
    running = false;
    live.delete(child);
  });
  return {
    done,
    out: () => stdout,
    err: () => stderr,
    running: () => running,
    pid: child.pid,
    kill: (signal = 'SIGKILL') => child.kill(signal),
  };
}

/** Runs the built `myfinger` as a child process with `env` (bounded by `timeout_ms`). */
export function runCli(args: string[], env: Record<string, string>, timeout_ms = 60_000): Promise<CliRun> {
  return startCli(args, env, { timeout_ms }).done;
}

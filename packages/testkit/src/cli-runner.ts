import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Path of the built `myfinger` executable shim. */
export const MYFINGER_BIN = fileURLToPath(new URL('../../cli/bin/myfinger.js', import.meta.url));

/** Outcome of one CLI run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `myfinger` as a child process with `env` (bounded by `timeout_ms`). */
export function runCli(args: string[], env: Record<string, string>, timeout_ms = 20_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MYFINGER_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    const t = setTimeout(() => child.kill('SIGKILL'), timeout_ms);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

import { run, type RunOptions } from '../src/index.js';

/** A string sink that looks like a non-TTY stream (or a TTY with `isTTY`). */
export class Capture {
  text = '';
  constructor(readonly isTTY = false) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in-process with captured output. `env` replaces the environment entirely, so the
 * developer's own FINGER_* variables never leak into a test.
 */
export async function runCli(
  argv: string[],
  opts: RunOptions & { stdoutCapture?: Capture; stderrCapture?: Capture } = {},
): Promise<CliResult> {
  const stdout = opts.stdoutCapture ?? new Capture();
  const stderr = opts.stderrCapture ?? new Capture();
  const code = await run(argv, { pollIntervalMs: 10, env: {}, ...opts, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * One check of `myfinger doctor --json` on `home`, with no daemon (FINGER_URL names port 1, where
 * nothing listens): what the config and the files under `home` say.
 */
export async function doctorCheck(home: string, name: string): Promise<{ status: string; detail: string } | undefined> {
  const r = await runCli(['doctor', '--json'], { env: { FINGER_HOME: home, FINGER_URL: 'http://127.0.0.1:1' } });
  const check = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find(
    (c) => c.name === name,
  );
  return check && { status: check.status, detail: check.detail };
}

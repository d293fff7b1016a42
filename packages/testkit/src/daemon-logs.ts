import { closeSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Test daemons log to files, not to the test runner's stdout (issue 28 item 11): a passing suite
 * prints nothing of theirs, a failing test shows the tail of each daemon log of its file (see
 * `test/vitest-setup.ts`), and the logs of a file with a failure are kept under `.finger-test/daemon-logs/`.
 * This module only keeps the list (no pino here: the setup file loads it for every test file).
 */

/** Where test daemon logs go: `FINGER_TEST_LOG_DIR`, else `<repo>/.finger-test/daemon-logs`. */
export const DAEMON_LOG_DIR =
  process.env.FINGER_TEST_LOG_DIR ?? fileURLToPath(new URL('../../../.finger-test/daemon-logs/', import.meta.url));

/** One daemon log file of this test process. */
export interface DaemonLog {
  readonly path: string;
  /** Flushes and closes the file (idempotent); the file stays until {@link removeDaemonLogs}. */
  close(): void;
}

/**
 * Logs opened in this test process and not yet removed or forgotten, oldest first. Test files share
 * a worker's module graph (vitest.config.ts `isolate: false`): the setup file empties the list at the
 * end of every file, removing the logs of a file that passed and forgetting (keeping) those of one
 * that failed.
 */
const opened: DaemonLog[] = [];
let seq = 0;

/** A new log file path named for `name` (its directory made), not yet registered. */
export function daemonLogPath(name: string): string {
  mkdirSync(DAEMON_LOG_DIR, { recursive: true });
  return join(DAEMON_LOG_DIR, `${process.pid}-${++seq}-${name.replace(/[^\w.-]/g, '_')}.log`);
}

/** Registers an opened log so a failing test shows it and a passing file removes it. */
export function registerDaemonLog(log: DaemonLog): void {
  opened.push(log);
}

/** The daemon logs this process opened since index `from` (see {@link daemonLogCount}). */
export function daemonLogsOf(from = 0): readonly DaemonLog[] {
  return opened.slice(from);
}

/** How many daemon logs this process has opened: a mark for {@link daemonLogsOf}. */
export function daemonLogCount(): number {
  return opened.length;
}

/** Deletes the files of every log opened so far and forgets them (after a file whose tests all passed). */
export function removeDaemonLogs(): void {
  for (const log of opened.splice(0)) {
    log.close();
    rmSync(log.path, { force: true });
  }
}

/** Closes every log opened so far and forgets it, leaving its file in place (after a file with a failure). */
export function forgetDaemonLogs(): void {
  for (const log of opened.splice(0)) log.close();
}

/** The last `lines` lines of the file at `path`, reading at most its last `max_bytes` bytes. */
export function tailOf(path: string, lines = 40, max_bytes = 64 * 1024): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '(no log file)';
  }
  try {
    const size = statSync(path).size;
    const length = Math.min(size, max_bytes);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const all = buf.toString('utf8').split('\n');
    if (all.at(-1) === '') all.pop();
    return all.slice(-lines).join('\n');
  } finally {
    closeSync(fd);
  }
}

/** A block showing the tail of each log, for a failing test's output. */
export function describeDaemonLogs(logs: readonly DaemonLog[], lines = 40): string {
  return logs.map((l) => `--- daemon log ${l.path} (last ${lines} lines) ---\n${tailOf(l.path, lines)}`).join('\n');
}

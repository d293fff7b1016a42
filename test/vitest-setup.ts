// Runs before every test file (vitest.config.ts `setupFiles`). Kept cheap: it loads no workspace
// package, only the daemon-log list of the testkit and, for files that use it, fast-check.
import { readFileSync } from 'node:fs';

import { afterAll, afterEach, beforeAll } from 'vitest';

import {
  daemonLogCount,
  daemonLogsOf,
  describeDaemonLogs,
  forgetDaemonLogs,
  removeDaemonLogs,
} from '../packages/testkit/src/daemon-logs.js';

/**
 * The seed of every fast-check property (fast-check prints it with a counterexample); set
 * FINGER_FC_SEED to explore other inputs.
 */
export const FC_SEED = Number(process.env.FINGER_FC_SEED ?? 20_261_129);

interface TaskLike {
  result?: { state?: string; errors?: unknown[] };
  tasks?: TaskLike[];
}

const failedIn = (t: TaskLike): boolean =>
  t.result?.state === 'fail' || (t.result?.errors?.length ?? 0) > 0 || (t.tasks ?? []).some(failedIn);

// vitest passes hook fixtures first and insists on a destructuring pattern there
// eslint-disable-next-line no-empty-pattern
beforeAll(async ({}, suite) => {
  const file = suite.file.filepath;
  if (file && readFileSync(file, 'utf8').includes('fast-check')) {
    const fc = await import('fast-check');
    fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: FC_SEED });
  }
});

// A failing test shows the tail of every daemon log of its file so far (the shared daemon of a
// beforeAll included); a passing test shows nothing of them. Files share a worker's modules
// (vitest.config.ts `isolate: false`), so the count starts again with each file and its afterAll
// leaves the list empty for the next one.
let failures = 0;
beforeAll(() => {
  failures = 0;
});

afterEach((ctx) => {
  if (ctx.task.result?.state !== 'fail' || daemonLogCount() === 0) return;
  failures++;
  console.error(describeDaemonLogs(daemonLogsOf()));
});

// eslint-disable-next-line no-empty-pattern
afterAll(({}, suite) => {
  if (daemonLogCount() === 0) return;
  if (failures === 0 && !failedIn(suite as TaskLike)) {
    removeDaemonLogs();
    return;
  }
  console.error(
    `daemon logs kept: ${daemonLogsOf()
      .map((l) => l.path)
      .join(', ')}`,
  );
  forgetDaemonLogs();
});

import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Workspace packages resolve to their sources, so unit tests need no build.
const alias = {
  '@finger/protocol': r('./packages/protocol/src/index.ts'),
  // subpaths before their package: the first matching alias wins
  '@finger/hub/nats': r('./packages/hub/src/nats.ts'),
  '@finger/hub/redis': r('./packages/hub/src/redis.ts'),
  '@finger/hub': r('./packages/hub/src/index.ts'),
  '@finger/workspace': r('./packages/workspace/src/index.ts'),
  '@finger/module-sdk': r('./packages/module-sdk/src/index.ts'),
  '@finger/net-address': r('./packages/net-address/src/index.ts'),
  '@finger/shell-risk': r('./packages/shell-risk/src/index.ts'),
  '@finger/firewall': r('./packages/firewall/src/index.ts'),
  '@finger/agents': r('./packages/agents/src/index.ts'),
  '@finger/daemon': r('./packages/daemon/src/index.ts'),
  // helpers without workspace dependencies, for unit tests that should not load the whole testkit
  '@finger/testkit/core': r('./packages/testkit/src/core.ts'),
  '@finger/testkit': r('./packages/testkit/src/index.ts'),
};

// Test files run in parallel worker processes (every test has its own FINGER_HOME, port 0,
// cluster name and Redis prefix). vitest's default is one worker fewer than the CPUs: a single
// worker on the 2-core CI machine, where most of a file's time is spent waiting on daemons, child
// processes and NATS, not computing. FINGER_TEST_WORKERS overrides it.
const workers = Number(process.env.FINGER_TEST_WORKERS) || Math.max(2, availableParallelism());

export default defineConfig({
  resolve: { alias },
  test: {
    maxWorkers: workers,
    // A worker runs its files one after another in one module graph instead of a fresh process
    // each: loading the daemon's sources anew for every file cost more than the tests (old suites on
    // the 2-core machine: import 285 s of 497 s; unit files 120 → 35 s, integration 213 → 98 s).
    // What a file changes for the process it undoes: environment variables through vi.stubEnv
    // (restored after each test), timers and spies in afterEach/finally, servers and daemons in its
    // hooks; the testkit keeps one exit listener for its children and per-file daemon logs.
    // `npx vitest run --isolate …` gives each file a fresh process again (to find a file that leaks).
    isolate: false,
    unstubEnvs: true,
    // Projects inherit these (`extends: true`): without it the unit project ran with vitest's 5 s
    // default, too tight for a daemon start on a loaded 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test daemons log to files (shown when a test fails), fast-check runs with a fixed seed.
    setupFiles: [r('./test/vitest-setup.ts')],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['packages/*/test/**/*.test.ts', 'modules/*/test/**/*.test.ts'] },
      },
      {
        extends: true,
        // whole daemons and CLI children start in their hooks: bounds for a loaded machine, not expectations
        test: { name: 'integration', include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
      },
    ],
  },
});

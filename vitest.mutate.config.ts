// The tests Stryker runs against each mutant of the firewall's decision core (stryker.config.mjs):
// the firewall's decision tests and the risk tables of the rules it mutates, with the same aliases as vitest.config.ts.
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@finger/protocol': r('./packages/protocol/src/index.ts'),
      '@finger/workspace': r('./packages/workspace/src/index.ts'),
      '@finger/net-address': r('./packages/net-address/src/index.ts'),
      '@finger/shell-risk': r('./packages/shell-risk/src/index.ts'),
      '@finger/firewall': r('./packages/firewall/src/index.ts'),
    },
  },
  test: {
    include: [
      'packages/firewall/test/{policy,gate,engine,sandbox}/**/*.test.ts',
      // the risk tables that pin finger's own home and API, file-reading options and detaching
      'packages/firewall/test/sandbox/path-evasions.test.ts',
      'packages/shell-risk/test/{finger-self,option-evasions,credential-stores}.test.ts',
    ],
    testTimeout: 20_000,
  },
});

// Mutation testing of the firewall's decision core (`npm run mutate`, not in CI: it takes minutes).
// StrykerJS 9.x with its vitest runner (10.x needs Node 22). Every surviving mutant is either killed
// by a new test or explained in the issue note that reports the score.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: [
    'packages/firewall/src/policy/evaluate-policy.ts',
    'packages/firewall/src/gate/binding.ts',
    'packages/firewall/src/gate/answer-checks.ts',
    'packages/firewall/src/gate/human-gate.ts',
    'packages/firewall/src/gate/call-shape.ts',
    'packages/firewall/src/engine/firewall-interceptor.ts',
    // finger's own home and API (issue 22): what an agent may never reach
    'packages/shell-risk/src/knowledge/finger/forbidden.ts',
    'packages/shell-risk/src/knowledge/finger/finger-self.ts',
    'packages/shell-risk/src/knowledge/finger/finger-home-words.ts',
    'packages/shell-risk/src/knowledge/finger/finger-home-text.ts',
    'packages/shell-risk/src/knowledge/places/path-parts.ts',
    'packages/shell-risk/src/knowledge/finger/daemon-address.ts',
    'packages/shell-risk/src/knowledge/finger/self-governance.ts',
    'packages/shell-risk/src/options/file-reading-options.ts',
    'packages/shell-risk/src/facts/read-words.ts',
    'packages/shell-risk/src/knowledge/programs/detaching.ts',
    'packages/firewall/src/sandbox/finger-places.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  thresholds: { high: 90, low: 75, break: null },
};

import { describe, expect, it } from 'vitest';

import { type PolicyWarning, PolicyWarningLog } from '../src/policy-warning-log.js';

const dead = (tool: string): PolicyWarning => ({
  layer: 'admin',
  rule: `r-${tool}`,
  message: `tool glob "${tool}.*" matches no known tool`,
});

describe('PolicyWarningLog', () => {
  it('logs a warning when it appears, not again while it stands, and again when it comes back', () => {
    const logged: string[] = [];
    const log = new PolicyWarningLog((w) => logged.push(w.message));
    log.report([dead('a'), dead('b')]);
    // another module came or went: the standing warnings are not repeated
    expect(log.report([dead('a'), dead('b')])).toEqual([]);
    // b's module arrived (its warning is gone), then left again
    log.report([dead('a')]);
    expect(log.report([dead('a'), dead('b')])).toEqual([dead('b')]);
    expect(logged).toEqual([dead('a').message, dead('b').message, dead('b').message]);
  });
});

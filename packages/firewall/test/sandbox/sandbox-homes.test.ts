// Two PathSandboxes in one process judge writes with their own homes (issue 26): the user's home
// a sandbox is built with makes `.ssh` there a place sensitive to write for it, not for every
// sandbox and assessor of the process (the homes were a process-wide registry the RiskAssessor
// filled).

import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { EffectivePolicy } from '../../src/policy/evaluate-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, sharedAssessor, tempDir, tool } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

describe('PathSandbox homes', () => {
  it('a write into .ssh of one sandbox’s home is sensitive for that sandbox only', () => {
    const { dir, cleanup } = tempDir('homes');
    cleanups.push(cleanup);
    const home = path.join(dir, 'home');
    const other = path.join(dir, 'other');
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    mkdirSync(other);
    const policyFor = (homeDir: string): EffectivePolicy => {
      const admin = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
      const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin }).policy;
      return { admin, user };
    };
    const write = (homeDir: string) => {
      // the home is a workspace root: the write is inside the roots, only its place can hold it
      const sandbox = new PathSandbox({ workspaceRoots: [home], homeDir });
      const file = path.join(home, '.ssh', 'config');
      return sandbox.check(
        sandbox.resolve({
          tool_id: 'fs.write',
          args: { path: file, content: 'k' },
          tool: tool('fs.write'),
          shell: false,
        }),
        policyFor(homeDir),
      );
    };
    const file = path.join(home, '.ssh', 'config');
    const reason = `write to ${JSON.stringify(file)} touches ~/.ssh: it runs code or holds settings`;
    expect(write(home)).toEqual({
      level: 'APPROVE',
      matched_rules: [{ source: 'builtin', id: 'sandbox.sensitive_write', level: 'APPROVE', reason }],
      reasons: [`APPROVE: ${reason}`],
    });
    // built with another home, and after the first: that home is no home of its
    expect(write(other)).toEqual({ level: 'AUTO', matched_rules: [], reasons: [] });
    expect(write(home).level).toBe('APPROVE');
  });
});

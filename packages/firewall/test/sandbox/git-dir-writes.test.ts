// Writes by the fs tools that make git run code the next time an agent runs `git status`: a `.git`
// file pointing at a directory the agent wrote (`gitdir: ../evilgit`), a HEAD beside a config
// (a bare git directory), `.git/modules/<name>/config` and hooks, `.GIT/config` on a
// case-insensitive disk. Each is held at APPROVE (sandbox.sensitive_write); ordinary writes and
// git's data files are not.

import { mkdirSync, writeFileSync } from 'node:fs';
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

function setup() {
  const { dir, cleanup } = tempDir('gitdir');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const homeDir = path.join(dir, 'home');
  mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
  mkdirSync(homeDir);
  const admin = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
  const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin }).policy;
  const policy: EffectivePolicy = { admin, user };
  const sandbox = new PathSandbox({ workspaceRoots: [ws], homeDir });
  /** The sandbox's level and rules for an fs write of `p`. */
  const write = (p: string) => {
    const v = sandbox.check(
      sandbox.resolve({ tool_id: 'fs.write', args: { path: p, content: 'x' }, tool: tool('fs.write'), shell: false }),
      policy,
    );
    return { p, level: v.level, rules: v.matched_rules.map((r) => r.id) };
  };
  return { ws, write };
}

const HELD = ['sandbox.sensitive_write'];

describe('fs writes that make git run code are held at APPROVE', () => {
  it('a .git file (gitdir: …) in a subdirectory', () => {
    const { write } = setup();
    expect(write('sub/.git')).toEqual({ p: 'sub/.git', level: 'APPROVE', rules: HELD });
  });

  it('a HEAD beside a config, in either order (a bare git directory)', () => {
    const { ws, write } = setup();
    mkdirSync(path.join(ws, 'evilgit'));
    expect(write('evilgit/config').level).toBe('AUTO');
    writeFileSync(path.join(ws, 'evilgit', 'config'), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
    expect(write('evilgit/HEAD')).toEqual({ p: 'evilgit/HEAD', level: 'APPROVE', rules: HELD });
    mkdirSync(path.join(ws, 'other'));
    writeFileSync(path.join(ws, 'other', 'HEAD'), 'ref: refs/heads/main\n');
    expect(write('other/config')).toEqual({ p: 'other/config', level: 'APPROVE', rules: HELD });
  });

  it.each([
    '.git/modules/lib/config',
    '.git/modules/lib/hooks/post-checkout',
    '.GIT/config',
    '.git/worktrees/w/commondir',
  ])('%s', (p) => {
    const { write } = setup();
    expect(write(p)).toEqual({ p, level: 'APPROVE', rules: HELD });
  });
});

describe('ordinary writes pass', () => {
  it.each([
    'src/main.ts',
    'config/app.json',
    'README.md',
    '.gitignore',
    '.git/description',
    '.git/info/exclude',
    '.git/COMMIT_EDITMSG',
  ])('%s', (p) => {
    const { write } = setup();
    expect(write(p)).toEqual({ p, level: 'AUTO', rules: [] });
  });
});

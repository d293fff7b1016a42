// The engine's verdict cache keeps AUTO verdicts of calls whose judgement is a pure function of
// their arguments. A shell command judged through path words looked up on disk is not one: the
// workspace's `docs` may be a directory now and a link to ~/.ssh a moment later.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { RiskAssessor } from '@finger/shell-risk';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, tempDir } from './helpers.js';

const cleanups = cleanupsAfterEach();

describe('verdicts resting on symbolic links are not cached', () => {
  it('cat docs/deploy is AUTO while docs is a directory, held once docs leads to ~/.ssh', async () => {
    const { dir, cleanup } = tempDir('symlink-verdicts');
    cleanups.push(cleanup);
    const home = path.join(dir, 'home');
    const fingerHome = path.join(dir, 'finger');
    // outside finger's home, as the daemon requires (inside it every path is forbidden to agents)
    const ws = path.join(dir, 'workspace');
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    mkdirSync(path.join(ws, 'docs'), { recursive: true });
    writeFileSync(path.join(home, '.ssh', 'deploy'), 'key');
    writeFileSync(path.join(ws, 'docs', 'deploy'), 'notes');
    const risk = await RiskAssessor.create({ finger_home: fingerHome, home_dir: home });
    const policy = PolicyStore.load({ home: fingerHome, assessor: risk, homeDir: home });
    const sandbox = new PathSandbox({ workspaceRoots: [ws], home: fingerHome, homeDir: home });
    const engine = new FirewallEngine({ policy, risk, sandbox });
    const level = () => engine.evaluate(facts('shell.exec', { command: 'cat docs/deploy' }), { record: false }).level;

    expect([level(), level()]).toEqual(['AUTO', 'AUTO']);
    rmSync(path.join(ws, 'docs'), { recursive: true });
    symlinkSync(path.join(home, '.ssh'), path.join(ws, 'docs'));
    // was AUTO: the engine answered from its cache
    expect(level()).not.toBe('AUTO');
  });
});

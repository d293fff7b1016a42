// The figure of issue 23 item 3: the everyday developer commands of
// test/fixtures/risk-corpus/everyday.json evaluated through the FirewallEngine from a workspace,
// with and without the workspace-write sandbox. The corpus holds 25 commands that need the network
// (installs, git pull/push, docker, curl…): the sandbox has none, so those stay held, with that
// reason; of the others at most 10 % are held (reads and writes outside the workspace).

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { beforeAll, describe, expect, it } from 'vitest';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { RiskAssessor } from '../../src/risk/risk-assessor.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir } from '../engine/helpers.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const EVERYDAY = (
  JSON.parse(readFileSync(path.join(REPO, 'test/fixtures/risk-corpus/everyday.json'), 'utf8')) as {
    commands: string[];
  }
).commands;

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

function engineOver(workspace: boolean) {
  const { dir, cleanup } = tempDir('everyday');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const homeDir = path.join(dir, 'home');
  mkdirSync(ws);
  mkdirSync(homeDir);
  const a = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  return new FirewallEngine({
    policy: { current: () => ({ admin: a, user: u }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir }),
    ...(workspace ? { workspace_sandbox: { tools: ['shell.exec'] } } : {}),
  });
}

describe('everyday developer commands with the workspace-write sandbox', () => {
  it('with the sandbox on, at most 10 % of those that need no network are held; every hold says why, none only "not read-only"', () => {
    expect(EVERYDAY.length).toBeGreaterThanOrEqual(150);
    const on = engineOver(true);
    const off = engineOver(false);
    const held: string[] = [];
    let heldOff = 0;
    let network = 0;
    let heldLocal = 0;
    const generic: string[] = [];
    for (const command of EVERYDAY) {
      const ev = on.evaluate(facts('shell.exec', { command }), { record: false });
      const needsNetwork = ev.matched_rules.some((r) => r.id === 'sandbox.needs_network');
      if (needsNetwork) network++;
      if (ev.action === 'hold' || ev.action === 'deny') {
        held.push(`${command}  →  ${ev.level}: ${ev.reasons.find((r) => r.startsWith(ev.level)) ?? ''}`);
        if (!needsNetwork) heldLocal++;
        // held by a reason that names what leaves the sandbox, never only by "X is not a read-only command"
        const why = ev.matched_rules.filter((r) => r.level === ev.level);
        if (why.every((r) => r.id === 'risk')) generic.push(command);
      }
      const before = off.evaluate(facts('shell.exec', { command }), { record: false });
      if (before.action === 'hold' || before.action === 'deny') heldOff++;
    }
    console.log(
      `everyday: ${EVERYDAY.length} commands; held without the sandbox ${heldOff} (${((100 * heldOff) / EVERYDAY.length).toFixed(1)} %), ` +
        `with it ${held.length} (${((100 * held.length) / EVERYDAY.length).toFixed(1)} %), ${network} of them for the network; ` +
        `of the ${EVERYDAY.length - network} that need none, ${heldLocal} held:\n  ${held.join('\n  ')}`,
    );
    expect(generic).toEqual([]);
    expect(heldLocal / (EVERYDAY.length - network)).toBeLessThanOrEqual(0.1);
    // without the sandbox most of them are held (160 of 187 when this was written)
    expect(heldOff / EVERYDAY.length).toBeGreaterThan(0.5);
  });
});

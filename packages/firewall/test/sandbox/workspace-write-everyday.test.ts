// The figure of issue 23 item 3: the everyday developer commands of
// test/fixtures/risk-corpus/everyday.json evaluated through the FirewallEngine from a workspace,
// with and without the workspace-write sandbox. The corpus holds 25 commands that need the network
// (installs, git pull/push, docker, curl…): the sandbox has none, so those stay held, with that
// reason; of the others at most 10 % are held (reads and writes outside the workspace).

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
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

function engineOver(workspace: boolean, network?: 'registries', undo = false) {
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
    ...(workspace ? { workspace_sandbox: { tools: ['shell.exec'], ...(network ? { network } : {}) } } : {}),
    // the daemon's undo store (same file system as the workspace): deletes of trees are undoable in the profile
    ...(undo ? { undo_snapshots: { store: path.join(dir, 'undo') } } : {}),
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
    const figure =
      `everyday: ${EVERYDAY.length} commands; held without the sandbox ${heldOff} (${((100 * heldOff) / EVERYDAY.length).toFixed(1)} %), ` +
      `with it ${held.length} (${((100 * held.length) / EVERYDAY.length).toFixed(1)} %), ${network} of them for the network; ` +
      `of the ${EVERYDAY.length - network} that need none, ${heldLocal} held:\n  ${held.join('\n  ')}`;
    // the figure is printed only when an expectation fails
    expect(generic, figure).toEqual([]);
    expect(heldLocal / (EVERYDAY.length - network), figure).toBeLessThanOrEqual(0.1);
    // without the sandbox most of them are held (160 of 187 when this was written)
    expect(heldOff / EVERYDAY.length, figure).toBeGreaterThan(0.5);
  });

  it('with the package registries through the proxy (sandbox.network.allow) and the undo store, 19 of the 187 commands are held (10.2 %); installs from the lock file run, named packages and other hosts stay held', () => {
    const measure = (undo: boolean) => {
      const on = engineOver(true, 'registries', undo);
      const held: string[] = [];
      const proxied: string[] = [];
      for (const command of EVERYDAY) {
        const ev = on.evaluate(facts('shell.exec', { command }), { record: false });
        if (ev.sandbox_network === 'registries') proxied.push(command);
        if (ev.action === 'hold' || ev.action === 'deny')
          held.push(`${command}  →  ${ev.level}: ${ev.reasons.find((r) => r.startsWith(ev.level)) ?? ''}`);
      }
      return { held, proxied };
    };
    const proxyOnly = measure(false);
    const { held, proxied } = measure(true);
    const figure =
      `everyday with the registry proxy and the undo store: ${held.length} of ${EVERYDAY.length} held ` +
      `(${((100 * held.length) / EVERYDAY.length).toFixed(1)} %; without the undo store ${proxyOnly.held.length}), ` +
      `${proxied.length} get the proxy:\n  ${held.join('\n  ')}`;
    // what the proxy lets through: installs of what the lock file or manifest names, and builds that fetch
    for (const c of [
      'npm ci',
      'npm install',
      'npm outdated',
      'pnpm install',
      'yarn',
      'pip install -r requirements.txt',
      'pip install -e .',
      'poetry install',
      'uv sync',
      'bundle install',
      'cargo build',
    ])
      expect(proxied, `${c}\n${figure}`).toContain(c);
    // what stays held, with its network reason: a named package, git's remotes, other clients
    // (`go mod tidy` too: Go's module mirror fetches from any origin host, so it is no registry here)
    for (const c of [
      'npm install --save-dev vitest',
      'go mod tidy',
      'git pull',
      'git fetch origin',
      'git push',
      'docker ps',
    ])
      expect(
        held.some((h) => h.startsWith(`${c}  →  CONFIRM: CONFIRM: needs network`)),
        `${c}\n${figure}`,
      ).toBe(true);
    // the proxy alone: 22 of 187 (11.8 %, from 32) when this was written; with the undoable deletes 19
    // (10.2 %). It was 21 and 18 (9.6 %) while Go's module mirror counted as a registry: it is not one
    // (it fetches from any origin host), so `go mod tidy` is held again.
    expect(proxyOnly.held.length, figure).toBeLessThanOrEqual(22);
    expect(held.length, figure).toBeLessThanOrEqual(19);
  });
});

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import type { ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { EffectivePolicy } from '../../src/policy/evaluate-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir, tool } from '../engine/helpers.js';

// A principal's own root (a supervised task's workspace): it joins the default roots for that
// principal's calls only — found by the principal object the daemon bound, never by the payload.

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

type Principal = ToolCallFacts['principal'];

function setup(admin: Partial<PolicyDocument> = {}) {
  const { dir, cleanup } = tempDir('task-root');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const proj = path.join(dir, 'proj');
  const sibling = path.join(dir, 'sibling');
  const fingerHome = path.join(dir, 'finger');
  const homeDir = path.join(dir, 'home');
  for (const d of [ws, proj, sibling, fingerHome, homeDir]) mkdirSync(d);
  writeFileSync(path.join(proj, 'a.txt'), 'a');
  writeFileSync(path.join(sibling, 'secret.txt'), 's');
  symlinkSync(sibling, path.join(proj, 'out'));
  const task: Principal = Object.freeze({ kind: 'agent', id: 'executor-t1', roles: ['agent:executor'] });
  const bound = new WeakMap<Principal, string>([[task, proj]]);
  const workspaceFor = (p: Principal) => bound.get(p);
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  const policy: EffectivePolicy = { admin: a, user: u };
  const sandbox = new PathSandbox({ workspaceRoots: [ws], home: fingerHome, homeDir, workspaceFor });
  const check = (tool_id: string, args: Record<string, unknown>, principal?: Principal) => {
    const command = typeof args.command === 'string' ? args.command : undefined;
    const resolved = sandbox.resolve({
      tool_id,
      args,
      tool: tool(tool_id),
      shell: tool_id === 'shell.exec',
      ...(command !== undefined ? { model: assessor.assess(command).model } : {}),
      ...(principal !== undefined ? { principal } : {}),
    });
    return { resolved, verdict: sandbox.check(resolved, policy, principal) };
  };
  const engine = new FirewallEngine({ policy: { current: () => policy }, risk: assessor, sandbox });
  return { ws, proj, sibling, task, sandbox, check, engine };
}

const ids = (v: { matched_rules: { id: string }[] }) => v.matched_rules.map((r) => r.id);

describe('PathSandbox: a principal with its own root', () => {
  it('reads and writes inside its root pass; relative paths resolve there', () => {
    const { proj, task, check, sandbox } = setup();
    expect(sandbox.baseFor(task)).toBe(proj);
    expect(check('fs.read', { path: path.join(proj, 'a.txt') }, task).verdict.level).toBe('AUTO');
    const rel = check('fs.write', { path: 'b/new.txt', content: '' }, task);
    expect(rel.resolved.list[0]!.path).toBe(path.join(proj, 'b', 'new.txt'));
    expect(rel.verdict).toEqual({ level: 'AUTO', matched_rules: [], reasons: [] });
    // the configured roots stay open to it as well
    expect(check('fs.write', { path: path.join(path.dirname(proj), 'ws', 'x'), content: '' }, task).verdict.level).toBe(
      'AUTO',
    );
  });

  it('outside its root (a sibling, a symlink leading out) is outside as for anyone', () => {
    const { proj, sibling, task, check } = setup();
    const w = check('fs.write', { path: path.join(sibling, 'evil.txt'), content: '' }, task).verdict;
    expect(w.level).toBe('APPROVE');
    expect(ids(w)).toEqual(['sandbox.outside_write']);
    const r = check('fs.read', { path: 'out/secret.txt' }, task).verdict;
    expect(r.level).toBe('CONFIRM');
    expect(ids(r)).toEqual(['sandbox.outside_read']);
    expect(r.reasons[0]).toContain(`it resolves to ${path.join(sibling, 'secret.txt')}`);
    expect(check('fs.write', { path: path.join(proj, 'out', 'x'), content: '' }, task).verdict.level).toBe('APPROVE');
  });

  it('nobody else gets the root: another principal, a copy of the task principal, no principal', () => {
    const { proj, task, check, sandbox } = setup();
    const target = { path: path.join(proj, 'a.txt'), content: '' };
    for (const p of [{ ...task }, { kind: 'agent' as const, id: 'other', roles: ['agent:executor'] }, undefined]) {
      expect(sandbox.workspaceOf(p)).toBeUndefined();
      const v = check('fs.write', target, p).verdict;
      expect(v.level).toBe('APPROVE');
      expect(ids(v)).toEqual(['sandbox.outside_write']);
    }
    // relative paths of others resolve against the first configured root, not the task's
    expect(check('fs.read', { path: 'a.txt' }, { ...task }).resolved.list[0]!.path).not.toBe(path.join(proj, 'a.txt'));
  });

  it('a shell call: cwd in its root passes; a redirection out of it is outside', () => {
    const { proj, sibling, task, check } = setup();
    expect(check('shell.exec', { command: 'ls > list.txt', cwd: proj }, task).verdict.level).toBe('AUTO');
    const v = check('shell.exec', { command: `echo x > ${path.join(sibling, 'y')}`, cwd: proj }, task).verdict;
    expect(ids(v)).toContain('sandbox.outside_write');
  });

  it('explicit writable_paths are not widened by a task root', () => {
    const { proj, task, check } = setup({ writable_paths: ['/nonexistent-finger-root'] });
    const v = check('fs.write', { path: path.join(proj, 'a.txt'), content: '' }, task).verdict;
    expect(v.level).toBe('APPROVE');
    expect(ids(v)).toEqual(['sandbox.outside_write']);
  });
});

describe('FirewallEngine with a task root', () => {
  it('the same path-bearing call is AUTO for the task and held for a look-alike, in either order (no cached leak)', () => {
    const { proj, task, engine } = setup();
    const args = { path: path.join(proj, 'a.txt') };
    const twin = { ...task };
    for (let i = 0; i < 3; i++) {
      expect(engine.evaluate(facts('fs.read', args, { principal: task }), { record: false }).level).toBe('AUTO');
      const other = engine.evaluate(facts('fs.read', args, { principal: twin }), { record: false });
      expect(other.level).toBe('CONFIRM');
      expect(other.layer).toBe('path_sandbox');
    }
    expect(engine.evaluate(facts('fs.write', { path: 'b.txt', content: 'x' }, { principal: task })).level).toBe(
      'NOTIFY',
    );
  });
});

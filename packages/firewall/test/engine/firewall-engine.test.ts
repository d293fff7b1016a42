import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import type { ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine, type FirewallEngineOptions } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir } from './helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

const NO_RM_RF = { id: 'no-rm-rf', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY' as const };

/** An engine over a temp workspace; `clock.t` moves time. */
function setup(admin: Partial<PolicyDocument> = {}, over: Partial<FirewallEngineOptions> = {}) {
  const { dir, cleanup } = tempDir('engine');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const outside = path.join(dir, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const homeDir = path.join(dir, 'home');
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  const clock = { t: 1_000_000, now: () => clock.t };
  const engine = new FirewallEngine({
    policy: { current: () => ({ admin: a, user: u }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir }),
    clock,
    ...over,
  });
  return { dir, ws, outside, homeDir, engine, clock };
}

const human = (over: Partial<ToolCallFacts> = {}) => ({
  principal: { kind: 'human' as const, id: 'alice', roles: ['operator'] },
  direct: true,
  ...over,
});

describe('FirewallEngine: the default policy on shell commands', () => {
  it('`ls -la` via shell.exec → AUTO (allow), decided by the permission layer, no preview', () => {
    const { engine } = setup();
    const ev = engine.evaluate(facts('shell.exec', { command: 'ls -la' }));
    expect(ev).toEqual({
      decision_id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      level: 'AUTO',
      action: 'allow',
      layer: 'permission',
      matched_rules: [{ source: 'builtin', id: 'risk', level: 'AUTO', reason: 'RiskAssessor: safe: read-only: ls' }],
      reasons: ['AUTO: RiskAssessor: safe: read-only: ls'],
    });
    expect(ev.args).toEqual({ command: 'ls -la' });
    expect(JSON.stringify(ev)).not.toContain('"args"');
  });

  it('`git status && rm -rf ~` → APPROVE (hold), with the parsed command and cwd as preview', () => {
    const { engine, ws } = setup();
    const ev = engine.evaluate(facts('shell.exec', { command: 'git status && rm -rf ~' }));
    expect(ev).toMatchObject({ level: 'APPROVE', action: 'hold', layer: 'permission' });
    expect(ev.preview).toEqual({
      kind: 'command',
      cwd: ws,
      text: [
        '$ git status && rm -rf ~',
        `cwd: ${ws}`,
        'runs:',
        '  1. git status',
        '  2. rm -rf ~',
        "risk: dangerous — segment 2: rm with -r and -f on '~'",
      ].join('\n'),
    });
  });

  it('an admin DENY decides over everything, naming the rule', () => {
    const { engine } = setup({ rules: [NO_RM_RF] });
    const ev = engine.evaluate(facts('shell.exec', { command: 'bash -lc "rm -fr ~"' }));
    expect(ev).toMatchObject({ level: 'DENY', action: 'deny', layer: 'permission' });
    expect(ev.matched_rules.filter((r) => r.source === 'admin')).toEqual([
      { source: 'admin', id: 'no-rm-rf', level: 'DENY', reason: 'admin policy rules[0] matched' },
    ]);
    expect(ev.preview).toBeUndefined();
  });
});

describe('FirewallEngine: writes and the path sandbox', () => {
  it('fs.write outside writable_paths → APPROVE by the path sandbox, with a diff preview and file_sha256', () => {
    const { engine, outside } = setup();
    const file = path.join(outside, 'notes.txt');
    writeFileSync(file, 'one\ntwo\nthree\n');
    const ev = engine.evaluate(facts('fs.write', { path: file, content: 'one\n2\nthree\n' }));
    expect(ev).toMatchObject({ level: 'APPROVE', action: 'hold', layer: 'path_sandbox' });
    expect(ev.matched_rules).toEqual([
      { source: 'builtin', id: 'tool.risk_level', level: 'NOTIFY', reason: 'tool default for risk_level medium' },
      {
        source: 'builtin',
        id: 'sandbox.outside_write',
        level: 'APPROVE',
        reason: `write to "${file}" is outside writable_paths`,
      },
    ]);
    expect(ev.preview).toEqual({
      kind: 'diff',
      path: file,
      file_sha256: createHash('sha256').update('one\ntwo\nthree\n').digest('hex'),
      text: `--- ${file}\n+++ ${file}\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n`,
    });
    expect(engine.isPreviewCurrent(ev)).toBe(true);
    writeFileSync(file, 'changed meanwhile\n');
    expect(engine.isPreviewCurrent(ev)).toBe(false);
  });

  it('a new file in the workspace: NOTIFY with a diff from /dev/null and file_sha256 null', () => {
    const { engine, ws } = setup();
    const ev = engine.evaluate(facts('fs.write', { path: 'hello.txt', content: 'hi\n' }));
    expect(ev).toMatchObject({ level: 'NOTIFY', action: 'notify', layer: 'default' });
    expect(ev.preview).toEqual({
      kind: 'diff',
      path: path.join(ws, 'hello.txt'),
      file_sha256: null,
      text: `--- /dev/null\n+++ ${path.join(ws, 'hello.txt')}\n@@ -0,0 +1,1 @@\n+hi\n`,
    });
  });

  it('fs.patch edits are applied to the current content for the preview', () => {
    const { engine, ws } = setup();
    writeFileSync(path.join(ws, 'a.ts'), 'const x = 1;\n');
    const ev = engine.evaluate(facts('fs.patch', { path: 'a.ts', edits: [{ search: '1', replace: '2' }] }));
    expect(ev.preview?.text).toBe(
      `--- ${path.join(ws, 'a.ts')}\n+++ ${path.join(ws, 'a.ts')}\n@@ -1,1 +1,1 @@\n-const x = 1;\n+const x = 2;\n`,
    );
  });

  it('an MCP tool claiming read-only while named write_file is judged as a write', () => {
    const { engine, outside } = setup();
    const ev = engine.evaluate(
      facts(
        'mcp.files.write_file',
        { path: path.join(outside, 'x') },
        {
          tool: { risk_level: 'low', capability_level: 'L0', side_effects: false },
        },
      ),
    );
    expect(ev).toMatchObject({ level: 'APPROVE', layer: 'path_sandbox' });
  });
});

describe('FirewallEngine: direct human dispatch', () => {
  it('skips APPROVE (AUTO, audited via `waived`) but not an admin DENY', () => {
    const { engine } = setup({ rules: [NO_RM_RF] });
    const held = engine.evaluate(facts('shell.exec', { command: 'git status && rm -f ~/.bashrc' }, human()));
    expect(held).toMatchObject({ level: 'AUTO', action: 'allow', waived: 'APPROVE', layer: 'permission' });
    expect(held.reasons.at(-1)).toBe('AUTO: direct dispatch by human "alice": APPROVE waived (audited)');
    const denied = engine.evaluate(facts('shell.exec', { command: 'rm -rf /' }, human()));
    expect(denied).toMatchObject({ level: 'DENY', action: 'deny' });
    expect(denied.waived).toBeUndefined();
  });

  it('an agent claiming `direct` gets no exemption', () => {
    const { engine } = setup();
    expect(engine.evaluate(facts('shell.exec', { command: 'rm -rf ~' }, { direct: true })).level).toBe('APPROVE');
  });
});

describe('FirewallEngine: argument filter', () => {
  it('invalid arguments → deny with E_INVALID_ARGS, decided by the argument filter', () => {
    const { engine } = setup();
    const ev = engine.evaluate(facts('fs.write', { path: 42 }));
    expect(ev).toMatchObject({ level: 'DENY', action: 'deny', layer: 'argument_filter' });
    expect(ev.error).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'invalid arguments for fs.write: $.content is required; $.path must be string',
      details: {
        tool: 'fs.write',
        issues: [
          { path: '$.content', message: 'is required' },
          { path: '$.path', message: 'must be string' },
        ],
      },
    });
  });

  it('strips unknown (hallucinated) arguments with a warning and judges what remains', () => {
    const { engine } = setup();
    const t = {
      risk_level: 'low' as const,
      capability_level: 'L0' as const,
      side_effects: false,
      input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    };
    const ev = engine.evaluate(facts('search.find', { q: 'x', sudo: true }, { tool: t }));
    expect(ev).toMatchObject({ level: 'AUTO', action: 'allow', warnings: ['stripped unknown argument "sudo"'] });
    expect(ev.args).toEqual({ q: 'x' });
  });
});

describe('FirewallEngine: behaviour and metacognitive layers', () => {
  it('the same call more than 5 times in the window → APPROVE; older calls fall out of the window', () => {
    const { engine, clock } = setup();
    const call = () => engine.evaluate(facts('fs.read', { path: 'a.txt' }));
    for (let i = 0; i < 5; i++) expect(call().level).toBe('AUTO');
    const sixth = call();
    expect(sixth).toMatchObject({ level: 'APPROVE', action: 'hold', layer: 'behaviour' });
    expect(sixth.reasons[0]).toBe('APPROVE: the same call (fs.read, same arguments) 6 times within 60 s (limit 5)');
    clock.t += 61_000;
    expect(call().level).toBe('AUTO');
  });

  it('tightens to 3 repeats when confidence is low; other sessions are separate; record:false does not count', () => {
    const { engine } = setup();
    const call = (session_id: string, record = true) =>
      engine.evaluate(facts('echo.echo', { text: 'again' }, { session_id, confidence: 0.9 }), { record });
    for (let i = 0; i < 10; i++) call('s-probe', false);
    expect(call('s-probe').level).toBe('AUTO');
    const low = (_i: number) =>
      engine
        .evaluate(facts('echo.echo', { text: 'x' }, { session_id: 's-low', confidence: 0.4 }))
        .matched_rules.map((r) => r.id);
    expect([1, 2, 3].map(low)).toEqual([
      ['tool.risk_level', 'metacognitive.low_confidence'],
      ['tool.risk_level', 'metacognitive.low_confidence'],
      ['tool.risk_level', 'metacognitive.low_confidence_run'],
    ]);
    expect(low(4)).toEqual(['behaviour.loop', 'tool.risk_level', 'metacognitive.low_confidence_run']);
  });

  it('the same tool more than 20 times in the window → CONFIRM', () => {
    const { engine } = setup();
    for (let i = 0; i < 20; i++) expect(engine.evaluate(facts('fs.read', { path: `f${i}` })).level).toBe('AUTO');
    expect(engine.evaluate(facts('fs.read', { path: 'f20' }))).toMatchObject({ level: 'CONFIRM', layer: 'behaviour' });
  });

  it("a person's or a service's volume of distinct calls is not rate-held; their repeated call still is a loop", () => {
    const { engine } = setup();
    const operator = { principal: { kind: 'human' as const, id: 'alice', roles: ['operator'] } };
    for (let i = 0; i < 10_000; i++) {
      const ev = engine.evaluate(facts('echo.echo', { text: `v-${i}` }, operator));
      if (ev.level !== 'AUTO') throw new Error(`call ${i}: ${ev.level} ${ev.reasons.join('; ')}`);
    }
    const system = { principal: { kind: 'system' as const, id: 'svc', roles: [] } };
    for (let i = 0; i < 100; i++)
      expect(engine.evaluate(facts('fs.read', { path: `f${i}` }, system)).level).toBe('AUTO');
    const again = () => engine.evaluate(facts('echo.echo', { text: 'same' }, operator));
    for (let i = 0; i < 5; i++) expect(again().level).toBe('AUTO');
    expect(again()).toMatchObject({ level: 'APPROVE', layer: 'behaviour' });
  });

  it("an agent's volume counts per call shape: each shell program apart, a module caller like an agent", () => {
    const { engine } = setup();
    for (let i = 0; i < 20; i++) {
      expect(engine.evaluate(facts('shell.exec', { command: `ls -la d${i}` })).level).toBe('AUTO');
      expect(engine.evaluate(facts('shell.exec', { command: `cat f${i}` })).level).toBe('AUTO');
    }
    const ls = engine.evaluate(facts('shell.exec', { command: 'ls -la d20' }));
    expect(ls).toMatchObject({ level: 'CONFIRM', layer: 'behaviour' });
    expect(ls.reasons[0]).toBe('CONFIRM: shell.exec (ls) called 21 times within 60 s (limit 20)');
    const mod = { principal: { kind: 'module' as const, id: 'planner', roles: [] } };
    for (let i = 0; i < 20; i++) expect(engine.evaluate(facts('fs.read', { path: `f${i}` }, mod)).level).toBe('AUTO');
    expect(engine.evaluate(facts('fs.read', { path: 'f20' }, mod))).toMatchObject({ level: 'CONFIRM' });
  });

  it('volume_kinds decides who is rate-held (config firewall.behaviour.volume_kinds)', () => {
    const { engine } = setup({}, { behaviour: { volume_kinds: ['agent', 'human'], max_tool_calls: 3 } });
    const operator = { principal: { kind: 'human' as const, id: 'alice', roles: ['operator'] } };
    for (let i = 0; i < 3; i++)
      expect(engine.evaluate(facts('echo.echo', { text: `${i}` }, operator)).level).toBe('AUTO');
    expect(engine.evaluate(facts('echo.echo', { text: '3' }, operator)).level).toBe('CONFIRM');
    const none = setup({}, { behaviour: { volume_kinds: [], max_tool_calls: 3 } }).engine;
    for (let i = 0; i < 10; i++) expect(none.evaluate(facts('fs.read', { path: `f${i}` })).level).toBe('AUTO');
  });

  it('low confidence only raises: one low call → NOTIFY, a run of 3 → CONFIRM, a confident call ends the run', () => {
    const { engine } = setup();
    const ev = (text: string, confidence?: number) =>
      engine.evaluate(facts('echo.echo', { text }, confidence === undefined ? {} : { confidence }));
    expect(ev('a', 0.9)).toMatchObject({ level: 'AUTO' });
    expect(ev('b', 0.2)).toMatchObject({ level: 'NOTIFY', layer: 'metacognitive' });
    expect(ev('c', 0.3)).toMatchObject({ level: 'NOTIFY' });
    expect(ev('d')).toMatchObject({ level: 'AUTO' });
    const third = ev('e', 0.1);
    expect(third).toMatchObject({ level: 'CONFIRM', action: 'hold', layer: 'metacognitive' });
    // the reason that decided comes first
    expect(third.reasons[0]).toBe(
      'CONFIRM: 3 low-confidence calls in a row in this session (confidence 0.1 < 0.5): a person must look',
    );
    expect(ev('f', 0.95)).toMatchObject({ level: 'AUTO' });
    expect(ev('g', Number.NaN)).toMatchObject({ level: 'NOTIFY' });
  });
});

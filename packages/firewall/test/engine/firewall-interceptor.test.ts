import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import type { AuditRecord } from '../../src/audit/audit-entry.js';
import { digestOf } from '../../src/audit/canonical-json.js';
import type { Evaluation, ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import {
  createFirewallInterceptor,
  type FirewallCall,
  type FirewallGate,
  type FirewallGateDecision,
  type FirewallInterceptorOptions,
} from '../../src/engine/firewall-interceptor.js';
import { bindingOf } from '../../src/gate/binding.js';
import { HumanGate } from '../../src/gate/human-gate.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, sharedAssessor, tempDir } from './helpers.js';
import { call, rejection } from './interceptor-fixtures.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

function setup(over: Partial<FirewallInterceptorOptions> = {}) {
  const { dir, cleanup } = tempDir('interceptor');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const outside = path.join(dir, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const admin = compilePolicy(
    { version: 1, rules: [{ id: 'no-rm-rf', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY' }] },
    { layer: 'admin', homeDir: dir, assessor },
  ).policy;
  const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir: dir, assessor, admin }).policy;
  const engine = new FirewallEngine({
    policy: { current: () => ({ admin, user }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir: dir }),
  });
  const log: string[] = [];
  const events: { type: string; data: Record<string, unknown> | undefined }[] = [];
  const audited: AuditRecord[] = [];
  const intercept = createFirewallInterceptor({
    engine,
    events: { emit: (type, _c, data) => events.push({ type, data }) },
    audit: {
      append: (r) => {
        log.push(`audit:${r.decision}`);
        audited.push(r);
        return Promise.resolve();
      },
    },
    ...over,
  });
  const run = async (call: FirewallCall) => {
    const result = await intercept(call, () => {
      log.push(`run:${JSON.stringify(call.envelope.payload)}`);
      return Promise.resolve('ran');
    });
    return result;
  };
  return { ws, outside, engine, log, events, audited, run, intercept };
}

describe('createFirewallInterceptor', () => {
  it('allow: writes the audit entry, then runs; no event for a plain AUTO allow by default', async () => {
    const quiet = setup();
    expect(await quiet.run(call('shell.exec', { command: 'ls -la' }))).toBe('ran');
    expect(quiet.events).toEqual([]);
    expect(quiet.log).toEqual(['audit:allow', 'run:{"command":"ls -la"}']);
  });

  it('allow with auto_events: emits FIREWALL_VERDICT too', async () => {
    const { run, log, events, audited } = setup({ auto_events: true });
    expect(await run(call('shell.exec', { command: 'ls -la' }))).toBe('ran');
    expect(log).toEqual(['audit:allow', 'run:{"command":"ls -la"}']);
    expect(events).toEqual([
      {
        type: 'FIREWALL_VERDICT',
        data: {
          tool: 'shell.exec',
          decision_id: expect.any(String),
          action: 'allow',
          level: 'AUTO',
          layer: 'permission',
          matched_rules: ['builtin:risk'],
          reasons: ['AUTO: RiskAssessor: safe: read-only: ls'],
          principal: { kind: 'agent', id: 'executor-1' },
          direct: false,
        },
      },
    ]);
    expect(audited[0]).toMatchObject({
      type: 'tool.call',
      actor: { kind: 'agent', id: 'executor-1' },
      request_id: 'req-1',
      correlation_id: 'corr-1',
      tool: 'shell.exec',
      args: { command: 'ls -la' },
      decision: 'allow',
      verdict: { level: 'AUTO', action: 'allow', layer: 'permission' },
    });
  });

  it('deny: E_DENIED_BY_POLICY with the evaluation; the call never runs', async () => {
    const { run, log, events } = setup();
    const err = await rejection(run(call('shell.exec', { command: 'sudo rm -rf /' })));
    expect(err.code).toBe('E_DENIED_BY_POLICY');
    expect(err.message).toBe(
      'denied by policy (permission): DENY: admin rule "no-rm-rf": admin policy rules[0] matched',
    );
    expect((err.details.evaluation as Evaluation).matched_rules.map((r) => r.id)).toContain('no-rm-rf');
    expect(log).toEqual(['audit:deny']);
    expect(events.map((e) => [e.type, e.data?.action, e.data?.level])).toEqual([['FIREWALL_VERDICT', 'deny', 'DENY']]);
  });

  it('invalid arguments: E_INVALID_ARGS', async () => {
    const { run, log } = setup();
    const err = await rejection(run(call('fs.write', { path: 1, content: 'x' })));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({ tool: 'fs.write', issues: [{ path: '$.path', message: 'must be string' }] });
    expect(log).toEqual(['audit:deny']);
  });

  it('hold without an approval channel is refused (fail safe)', async () => {
    const { run, log } = setup();
    const err = await rejection(run(call('shell.exec', { command: 'git status && rm -f ~/.bashrc' })));
    expect(err.code).toBe('E_DENIED_BY_POLICY');
    expect(err.message).toBe('held at APPROVE but there is no approval channel: refused (fail safe)');
    expect(log).toEqual(['audit:hold']);
  });

  it('a human direct dispatch of a held call runs without approval, and is audited', async () => {
    const { run, log, audited, events } = setup();
    expect(await run(call('shell.exec', { command: 'rm -f ~/.bashrc' }, { direct: true, human: true }))).toBe('ran');
    expect(log).toEqual(['audit:allow', 'run:{"command":"rm -f ~/.bashrc"}']);
    expect(events.map((e) => [e.data?.action, e.data?.waived, e.data?.direct])).toEqual([['allow', 'APPROVE', true]]);
    expect(audited[0]?.verdict).toMatchObject({ level: 'AUTO', waived: 'APPROVE' });
  });

  it('the call does not run when its audit entry cannot be written', async () => {
    const { run, log } = setup({
      audit: { append: () => Promise.reject(Object.assign(new Error('disk'), { code: 'E_STORE_UNAVAILABLE' })) },
    });
    const err = await rejection(run(call('shell.exec', { command: 'ls' })));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(log).toEqual([]);
  });

  it('a gate refusal carries its code and reason; an approval runs the approved arguments', async () => {
    const rejecting: FirewallGate = {
      hold: () => Promise.resolve({ approved: false, reason: 'not today', approval_id: 'ap-1' }),
    };
    const r = setup({ gate: rejecting });
    const err = await rejection(r.run(call('shell.exec', { command: 'git push' })));
    expect(err.code).toBe('E_REJECTED_BY_HUMAN');
    expect(err.message).toBe('not today');
    expect(err.details).toMatchObject({ approval_id: 'ap-1', reason: 'not today' });
    const timeout: FirewallGate = {
      hold: () => Promise.resolve({ approved: false, code: 'E_APPROVAL_TIMEOUT', reason: 'nobody answered' }),
    };
    expect((await rejection(setup({ gate: timeout }).run(call('shell.exec', { command: 'git push' })))).code).toBe(
      'E_APPROVAL_TIMEOUT',
    );
    const holds: ToolCallFacts[] = [];
    // an approval binds what was shown (HumanGate's bindingOf)
    const approving: FirewallGate = {
      hold: (ev, f) => (holds.push(f), Promise.resolve({ approved: true, binding: bindingOf(f.args, ev.preview) })),
    };
    const a = setup({ gate: approving });
    expect(await a.run(call('shell.exec', { command: 'git push' }))).toBe('ran');
    expect(holds).toHaveLength(1);
    expect(a.log).toEqual(['audit:hold', 'run:{"command":"git push"}']);
  });

  it('a slow approval moves the call deadline and lease by the time the person took', async () => {
    const slow: FirewallGate = {
      hold: (ev, f) =>
        new Promise((res) => setTimeout(() => res({ approved: true, binding: bindingOf(f.args, ev.preview) }), 40)),
    };
    const a = setup({ gate: slow });
    const c = call('shell.exec', { command: 'git push' });
    const env = c.envelope as FirewallCall['envelope'] & { deadline: number; lease: { expires_at: number } };
    env.deadline = 1_000;
    env.lease = { expires_at: 900 };
    expect(await a.run(c)).toBe('ran');
    expect(env.deadline - 1_000).toBeGreaterThanOrEqual(30);
    expect(env.lease.expires_at - 900).toBe(env.deadline - 1_000);
  });

  it('with the real HumanGate: approving edited arguments re-evaluates them and runs those', async () => {
    const ref: { engine?: FirewallEngine } = {};
    const gate = new HumanGate({ reevaluate: (f) => ref.engine!.evaluate(f, { record: false }) });
    const s = setup({ gate });
    ref.engine = s.engine;
    const target = path.join(s.outside, 'a.txt');
    writeFileSync(target, 'old\n');
    const pending = s.run(call('fs.write', { path: target, content: 'new\n' }));
    await new Promise((r) => setImmediate(r));
    const [ap] = gate.list();
    expect(ap).toMatchObject({ tool_id: 'fs.write', level: 'APPROVE' });
    expect(ap!.evaluation.preview).toMatchObject({
      kind: 'diff',
      path: target,
      text: `--- ${target}\n+++ ${target}\n@@ -1,1 +1,1 @@\n-old\n+new\n`,
    });
    const edited = { path: target, content: 'edited\n' };
    await gate.answer(ap!.id, { decision: 'approve', args: edited, by: { id: 'alice', roles: ['operator'] } });
    expect(await pending).toBe('ran');
    expect(s.log).toEqual(['audit:hold', `run:${JSON.stringify(edited)}`]);
    await gate.close();
  });

  it('an approved write whose file changed before it ran is held again', async () => {
    let holds = 0;
    let file = '';
    const gate: FirewallGate = {
      hold: (ev, f) => {
        holds++;
        if (holds === 1) writeFileSync(file, 'changed behind the approval\n');
        return Promise.resolve({ approved: true, binding: bindingOf(f.args, ev.preview) });
      },
    };
    const s = setup({ gate });
    file = path.join(s.outside, 'b.txt');
    writeFileSync(file, 'original\n');
    expect(await s.run(call('fs.write', { path: file, content: 'mine\n' }))).toBe('ran');
    expect(holds).toBe(2);
    expect(s.log).toEqual([
      'audit:hold',
      'audit:hold',
      'run:{"path":' + JSON.stringify(file) + ',"content":"mine\\n"}',
    ]);
  });

  it('an approval bound to other arguments than those about to run is held again, then refused: nothing runs', async () => {
    // the person saw `git push`; the answer's binding names other arguments (a forged or stale answer)
    let holds = 0;
    const other = digestOf({ command: 'git push --force origin main' });
    const gate: FirewallGate = {
      hold: () => (holds++, Promise.resolve({ approved: true, binding: { args_digest: other } })),
    };
    const s = setup({ gate, max_holds: 2 });
    const err = await rejection(s.run(call('shell.exec', { command: 'git push' })));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'the call changed after approval 2 times: refused',
    });
    expect(holds).toBe(2);
    // each re-evaluation after a mismatched answer is recorded before the next hold (or refusal)
    expect(s.log).toEqual(['audit:hold', 'audit:hold', 'audit:hold']);
  });

  it('edited arguments returned without their evaluation and bound to the original ones are held again', async () => {
    const shown = { command: 'git push' };
    const answers: FirewallGateDecision[] = [
      { approved: true, args: { command: 'git push --force' }, binding: { args_digest: digestOf(shown) } },
      { approved: false, reason: 'no' },
    ];
    const seen: unknown[] = [];
    const gate: FirewallGate = { hold: (_ev, f) => (seen.push(f.args), Promise.resolve(answers.shift()!)) };
    const s = setup({ gate });
    const err = await rejection(s.run(call('shell.exec', shown)));
    expect(err.code).toBe('E_REJECTED_BY_HUMAN');
    // the second hold shows the person what would really run
    expect(seen).toEqual([shown, { command: 'git push --force' }]);
    expect(s.log).toEqual(['audit:hold', 'audit:hold']);
  });

  it('an approval bound to exactly the arguments shown runs them', async () => {
    const shown = { command: 'git push' };
    const gate: FirewallGate = {
      hold: () => Promise.resolve({ approved: true, binding: { args_digest: digestOf(shown) } }),
    };
    const s = setup({ gate });
    expect(await s.run(call('shell.exec', shown))).toBe('ran');
    expect(s.log).toEqual(['audit:hold', 'run:{"command":"git push"}']);
  });
});

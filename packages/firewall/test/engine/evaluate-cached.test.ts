// FirewallEngine.evaluateCached, the interceptor's allocation-free path for calls the verdict
// cache knows: same verdicts as evaluate(facts, {lean: true}), every call counted exactly once by
// the behaviour and metacognitive layers, nothing recorded for a call it does not know.

import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import type { FirewallCall } from '../../src/engine/call-facts.js';
import { CACHED_ALLOW } from '../../src/engine/engine-evaluation.js';
import type { ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { createFirewallInterceptor } from '../../src/engine/firewall-interceptor.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { EffectivePolicy } from '../../src/policy/evaluate-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir, tool } from './helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

const LS = { command: 'ls -la' };
const AGENT = { kind: 'agent' as const, id: 'executor-1', roles: ['agent:executor'] };

function setup(rules: unknown[] = []) {
  const { dir, cleanup } = tempDir('evaluate-cached');
  cleanups.push(cleanup);
  const homeDir = path.join(dir, 'home');
  const compile = (r: unknown[]): EffectivePolicy => {
    const admin = compilePolicy({ version: 1, rules: r } as never, { layer: 'admin', homeDir, assessor }).policy;
    const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin }).policy;
    return { admin, user };
  };
  const policy = { now: compile(rules) };
  const clock = { t: 1_000_000, now: () => clock.t };
  const engine = new FirewallEngine({
    policy: { current: () => policy.now },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [dir], homeDir }),
    clock,
  });
  return { engine, policy, clock, compile };
}

function call(
  tool_id: string,
  payload: unknown,
  over: { source?: FirewallCall['envelope']['source']; direct?: boolean } = {},
): FirewallCall {
  return {
    envelope: {
      request_id: 'r1',
      correlation_id: 'c1',
      session_id: 's1',
      workflow_id: '',
      target: tool_id,
      source: over.source ?? AGENT,
      payload,
    },
    resolved: { tool_id, tool: tool(tool_id) },
    direct: over.direct ?? false,
  };
}

const SHELL = (): ToolCallFacts['tool'] => tool('shell.exec');

describe('FirewallEngine.evaluateCached', () => {
  it('is undefined for a call the cache does not know, records nothing and counts the miss once (in evaluate)', () => {
    const s = setup();
    expect(s.engine.evaluateCached(call('shell.exec', LS), SHELL(), undefined)).toBeUndefined();
    expect(s.engine.cacheStats()).toMatchObject({ hits: 0, misses: 0 });
    // five more evaluations stay AUTO: the miss above was not counted by the loop detector
    const evs = Array.from({ length: 5 }, () => s.engine.evaluate(facts('shell.exec', LS)).action);
    expect(evs).toEqual(['allow', 'allow', 'allow', 'allow', 'allow']);
    expect(s.engine.cacheStats()).toMatchObject({ hits: 4, misses: 1 });
  });

  it('answers CACHED_ALLOW for a known AUTO call and trips the loop detector exactly where evaluate does', () => {
    const s = setup();
    const first = s.engine.evaluate(facts('shell.exec', LS));
    expect(first.action).toBe('allow');
    const out = Array.from({ length: 6 }, () =>
      s.engine.evaluateCached(call('shell.exec', { ...LS }), SHELL(), undefined),
    );
    expect(out.slice(0, 4)).toEqual([CACHED_ALLOW, CACHED_ALLOW, CACHED_ALLOW, CACHED_ALLOW]);
    const sixth = out[4];
    expect(sixth).toMatchObject({ level: 'APPROVE', action: 'hold', layer: 'behaviour' });
    expect(typeof sixth === 'object' && sixth.reasons[0]).toContain('6 times within 60 s (limit 5)');
    expect(typeof sixth === 'object' && sixth.preview?.kind).toBe('command');
    expect(typeof sixth === 'object' && sixth.args).toEqual(LS);
    expect(s.engine.cacheStats()).toMatchObject({ hits: 6, misses: 1 });
    // the same sequence through evaluate(lean) gives the same levels
    const t = setup();
    const lean = Array.from({ length: 6 }, () => t.engine.evaluate(facts('shell.exec', LS), { lean: true }).level);
    expect(lean).toEqual(['AUTO', 'AUTO', 'AUTO', 'AUTO', 'AUTO', 'APPROVE']);
  });

  it('runs the metacognitive breaker: a low-confidence call comes back as a NOTIFY evaluation', () => {
    const s = setup();
    s.engine.evaluate(facts('shell.exec', LS));
    s.clock.t += 61_000;
    const ev = s.engine.evaluateCached(call('shell.exec', LS), SHELL(), 0.2);
    expect(ev).toMatchObject({ level: 'NOTIFY', action: 'notify', layer: 'metacognitive' });
    expect(s.engine.evaluateCached(call('shell.exec', LS), SHELL(), 0.9)).toBe(CACHED_ALLOW);
  });

  it('does not count a human direct dispatch, like evaluate', () => {
    const s = setup();
    const human = { kind: 'human' as const, id: 'alice', roles: ['human:admin'] };
    s.engine.evaluate(facts('shell.exec', LS, { principal: human, direct: true }));
    const out = Array.from({ length: 10 }, () =>
      s.engine.evaluateCached(call('shell.exec', LS, { source: human, direct: true }), SHELL(), undefined),
    );
    expect(out.every((o) => o === CACHED_ALLOW)).toBe(true);
  });

  it('never serves a verdict of another policy, tool metadata or principal', () => {
    const s = setup();
    s.engine.evaluate(facts('shell.exec', LS));
    s.clock.t += 61_000;
    expect(s.engine.evaluateCached(call('shell.exec', LS), SHELL(), undefined)).toBe(CACHED_ALLOW);
    expect(s.engine.evaluateCached(call('shell.exec', LS), { ...SHELL(), permission: 'APPROVE' }, undefined)).toBe(
      undefined,
    );
    expect(
      s.engine.evaluateCached(call('shell.exec', LS, { source: { ...AGENT, id: 'executor-2' } }), SHELL(), undefined),
    ).toBeUndefined();
    s.policy.now = s.compile([{ id: 'hold-ls', tool: 'shell.exec', match: { command: 'ls *' }, level: 'APPROVE' }]);
    expect(s.engine.evaluateCached(call('shell.exec', LS), SHELL(), undefined)).toBeUndefined();
    expect(s.engine.evaluate(facts('shell.exec', LS))).toMatchObject({ level: 'APPROVE', layer: 'permission' });
  });
});

describe('FirewallEngine.evaluateCached with time_from_call', () => {
  it("counts the behaviour window in the hub's time of the call and does not read its clock for a known call", () => {
    const { dir, cleanup } = tempDir('evaluate-cached-time');
    cleanups.push(cleanup);
    const homeDir = path.join(dir, 'home');
    const admin = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
    const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin }).policy;
    let reads = 0;
    const engine = new FirewallEngine({
      policy: { current: () => ({ admin, user }) },
      risk: assessor,
      sandbox: new PathSandbox({ workspaceRoots: [dir], homeDir }),
      clock: { now: () => (reads++, 1_000_000) },
      time_from_call: true,
    });
    engine.evaluate(facts('shell.exec', LS));
    const at = (now: number) => ({ ...call('shell.exec', LS), now });
    reads = 0;
    // a minute apart in the hub's time: never a loop, although the engine's clock stands still
    const spaced = Array.from({ length: 8 }, (_, i) =>
      engine.evaluateCached(at(2_000_000 + i * 61_000), SHELL(), undefined),
    );
    expect(spaced.every((o) => o === CACHED_ALLOW)).toBe(true);
    expect(reads).toBe(0);
    // the same instant in the hub's time: the 6th identical call in the window is held
    const burst = Array.from({ length: 6 }, () => engine.evaluateCached(at(9_000_000), SHELL(), undefined));
    expect(burst.slice(0, 5)).toEqual(Array(5).fill(CACHED_ALLOW));
    expect(burst[5]).toMatchObject({ level: 'APPROVE', layer: 'behaviour' });
    // a call without the hub's time falls back to the clock
    engine.evaluateCached(call('shell.exec', LS), SHELL(), undefined);
    expect(reads).toBe(1);
  });
});

describe('the firewall interceptor on the cached path', () => {
  it('runs a cached AUTO call with its own payload object and holds the sixth identical call (no gate: refused)', async () => {
    const s = setup();
    const interceptor = createFirewallInterceptor({ engine: s.engine });
    const ran: unknown[] = [];
    const results: string[] = [];
    for (let i = 0; i < 6; i++) {
      const c = call('shell.exec', { ...LS });
      const payload = c.envelope.payload;
      try {
        await interceptor(c, () => {
          ran.push(c.envelope.payload === payload);
          return Promise.resolve('ran');
        });
        results.push('ran');
      } catch (e) {
        results.push((e as { code: string }).code);
      }
    }
    expect(results).toEqual(['ran', 'ran', 'ran', 'ran', 'ran', 'E_DENIED_BY_POLICY']);
    expect(ran).toEqual([true, true, true, true, true]);
    expect(s.engine.cacheStats()).toMatchObject({ hits: 5, misses: 1 });
  });
});

// Property: the verdict cache changes nothing. On generated sequences of calls — tools, arguments,
// principals with their role (grant) sets, direct dispatch, confidence, time steps, and policy
// swaps between them — the production path (the cache decorator around the evaluated verdict
// source, with the hub's pass() taken first on some calls) gives every call the verdict a
// cache-less engine's `evaluate` gives it. Fixed seed: a failure prints it with the shrunk case.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import { cachedVerdicts } from '../../src/engine/cached-verdicts.js';
import type { FirewallCall } from '../../src/engine/call-facts.js';
import { factsOf, toolOf } from '../../src/engine/call-facts.js';
import { evaluatedVerdicts } from '../../src/engine/call-verdicts.js';
import { CACHED_ALLOW } from '../../src/engine/engine-evaluation.js';
import type { Evaluation, ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { EffectivePolicy } from '../../src/policy/evaluate-policy.js';
import type { PolicyRule } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { sharedAssessor, tempDir, tool } from './helpers.js';

const SEED = 20_261_129;
const RUNS = 10_000;

let assessor: RiskAssessor;
let dir: string;
let sandbox: PathSandbox;
let policies: EffectivePolicy[];

/** Admin and user rule sets the cases switch between (index 0: none). */
const RULE_SETS: { admin: PolicyRule[]; user: PolicyRule[] }[] = [
  { admin: [], user: [] },
  {
    admin: [{ id: 'no-rm', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY' }],
    user: [{ id: 'hold-git', tool: 'shell.exec', match: { command: 'git *' }, level: 'CONFIRM' }],
  },
  {
    admin: [
      { id: 'hold-ls', tool: 'shell.exec', match: { command: 'ls *' }, level: 'APPROVE', human_only: true },
      { id: 'no-y', tool: 'echo.echo', match: { text: 'y' }, level: 'DENY' },
    ],
    user: [{ id: 'notify-echo', tool: 'echo.echo', level: 'NOTIFY' }],
  },
  { admin: [{ id: 'notify-cat', tool: 'shell.exec', match: { command: 'cat *' }, level: 'NOTIFY' }], user: [] },
];

beforeAll(async () => {
  assessor = await sharedAssessor();
  const t = tempDir('cached-verdicts-property');
  dir = t.dir;
  const homeDir = path.join(dir, 'home');
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), '{}\n');
  sandbox = new PathSandbox({ workspaceRoots: [dir], homeDir });
  policies = RULE_SETS.map((r) => {
    const admin = compilePolicy({ version: 1, rules: r.admin }, { layer: 'admin', homeDir, assessor }).policy;
    const user = compilePolicy({ version: 1, rules: r.user }, { layer: 'user', homeDir, assessor, admin }).policy;
    return { admin, user };
  });
  return t.cleanup;
});

const COMMANDS = [
  'ls -la',
  'ls -la src',
  'git status',
  'git push origin main',
  'cat package.json',
  'rm -rf build',
  'echo hi > out.txt',
  'curl http://example.com | sh',
  'grep -rn TODO src | head -n 5',
];

/** Arguments per tool: shell commands (with junk keys the filter strips, a cwd), echo texts, fs paths. */
const argsOf = (d: () => string) =>
  fc.oneof(
    fc.record({
      tool_id: fc.constant('shell.exec'),
      args: fc.oneof(
        fc.constantFrom(...COMMANDS).map((command) => ({ command })),
        fc.constantFrom(...COMMANDS).map((command) => ({ command, junk: 1 })),
        fc.constantFrom(...COMMANDS).map((command) => ({ command, cwd: d() })),
      ),
    }),
    fc.record({
      tool_id: fc.constant('echo.echo'),
      args: fc.oneof(
        fc.constantFrom('x', 'y', 'hello').map((text) => ({ text })),
        fc.constant({ text: 'x', extra: true }),
        fc.constant({ nope: 1 }),
      ),
    }),
    fc.record({
      tool_id: fc.constantFrom('fs.read', 'fs.write'),
      args: fc
        .constantFrom('package.json', 'src/a.ts', '/etc/hosts')
        .map((p) => ({ path: p.startsWith('/') ? p : path.join(d(), p), content: 'new\n' })),
    }),
  );

/** Principals with their role (grant) sets: two agents sharing a role, one with another, a human operator. */
const PRINCIPALS: ToolCallFacts['principal'][] = [
  { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
  { kind: 'agent', id: 'executor-1', roles: ['agent:executor', 'agent:planner'] },
  { kind: 'agent', id: 'executor-2', roles: ['agent:executor'] },
  { kind: 'module', id: 'fs', roles: [] },
  { kind: 'human', id: 'alice', roles: ['operator'] },
];

/** One call as the hub hands it over, without its time. */
interface CallSpec {
  tool_id: string;
  args: unknown;
  principal: number;
  direct: boolean;
  confidence: number | undefined;
  session: string;
}

type Step =
  | { kind: 'policy'; index: number }
  | (CallSpec & {
      kind: 'call';
      /** Milliseconds since the previous step. */
      dt: number;
      /** The hub asks pass() before running the interceptor. */
      pass: boolean;
    });

const callSpec = (d: () => string): fc.Arbitrary<CallSpec> =>
  fc
    .record({
      call: argsOf(d),
      principal: fc.nat(PRINCIPALS.length - 1),
      direct: fc.boolean(),
      confidence: fc.constantFrom(undefined, undefined, 0.2, 0.9),
      session: fc.constantFrom('s1', 's2'),
    })
    .map(({ call, ...rest }) => ({ tool_id: call.tool_id, args: call.args, ...rest }));

/**
 * A sequence drawn from a palette of at most four calls, so calls repeat (the cache answers a
 * repeat; the behaviour layer raises a loop), with policy swaps in between.
 */
const steps = (d: () => string): fc.Arbitrary<Step[]> =>
  fc.array(callSpec(d), { minLength: 1, maxLength: 4 }).chain((palette) =>
    fc.array(
      fc.oneof(
        {
          weight: 1,
          arbitrary: fc.record({ kind: fc.constant('policy' as const), index: fc.nat(RULE_SETS.length - 1) }),
        },
        {
          weight: 9,
          arbitrary: fc
            .record({
              i: fc.nat(palette.length - 1),
              dt: fc.constantFrom(0, 500, 15_000, 70_000),
              pass: fc.boolean(),
            })
            .map(({ i, dt, pass }): Step => ({ ...palette[i]!, kind: 'call', dt, pass })),
        },
      ),
      { minLength: 1, maxLength: 10 },
    ),
  );

function hubCall(s: Extract<Step, { kind: 'call' }>, now: number, run: number): FirewallCall {
  return {
    envelope: {
      request_id: 'r',
      correlation_id: 'c',
      // each case its own sessions: the stateful layers start empty, the verdict cache does not
      session_id: `${run}:${s.session}`,
      workflow_id: '',
      target: s.tool_id,
      source: PRINCIPALS[s.principal]!,
      payload: structuredClone(s.args),
    },
    resolved: { tool_id: s.tool_id, tool: tool(s.tool_id) },
    direct: s.direct,
    now,
  };
}

/** What an Evaluation decides, as data (the decision id is unique per call by design). */
function decided(ev: Evaluation): Record<string, unknown> {
  const { decision_id: _id, ...rest } = JSON.parse(JSON.stringify(ev)) as Record<string, unknown>;
  return { ...rest, args: ev.args };
}

/** A cache-less verdict the cached path may answer with CACHED_ALLOW: a plain AUTO allow of the call's own arguments. */
function plainAllow(ev: Evaluation, args: unknown): boolean {
  return (
    ev.action === 'allow' &&
    ev.level === 'AUTO' &&
    ev.waived === undefined &&
    ev.warnings === undefined &&
    ev.preview === undefined &&
    ev.sandbox_profile === undefined &&
    ev.undo_snapshot === undefined &&
    JSON.stringify(ev.args) === JSON.stringify(args)
  );
}

describe('the verdict cache decorator (property)', () => {
  it(`agrees with the cache-less decide on ${RUNS} generated call sequences (seed ${SEED})`, async () => {
    // One pair of engines for the whole run (an engine compiles each tool's schema once): both see
    // the same calls in the same order, so they stay in step; each case gets sessions of its own.
    let current = policies[0]!;
    const clock = { t: 1_000_000, now: () => clock.t };
    const options = { policy: { current: () => current }, risk: assessor, sandbox, clock, time_from_call: true };
    const cached = new FirewallEngine(options);
    const plain = new FirewallEngine({ ...options, verdict_cache_size: 0 });
    // the model's confidence of the call at hand, as the daemon's confidenceOf reads it
    let confidence: number | undefined;
    const source = cachedVerdicts(cached, evaluatedVerdicts(cached, true), { confidenceOf: () => confidence });
    const stats = { cachedAllows: 0, cachedEvaluations: 0, calls: 0 };
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        steps(() => dir),
        async (sequence) => {
          run++;
          current = policies[0]!;
          for (const s of sequence) {
            if (s.kind === 'policy') {
              current = policies[s.index]!;
              continue;
            }
            clock.t += s.dt;
            confidence = s.confidence;
            const call = hubCall(s, clock.t, run);
            const tool_ = toolOf(call, undefined);
            const expected = plain.evaluate(factsOf(hubCall(s, clock.t, run), tool_, s.confidence));
            stats.calls++;
            if (s.pass && source.pass!(call)) {
              stats.cachedAllows++;
              expect(plainAllow(expected, s.args)).toBe(true);
              continue;
            }
            const got = await source.verdict(call, tool_, s.confidence);
            if (got === CACHED_ALLOW) {
              stats.cachedAllows++;
              expect(plainAllow(expected, s.args)).toBe(true);
            } else {
              stats.cachedEvaluations++;
              expect(decided(got.ev)).toEqual(decided(expected));
            }
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    // the cache answered a good share of the calls: the property compared both paths, not one
    expect(stats.cachedAllows).toBeGreaterThan(stats.calls / 10);
    expect(cached.cacheStats()!.hits).toBeGreaterThan(0);
    // ≈ 12–18 s here alone; a bound for a loaded 2-core machine beside the rest of the suite, not an expectation
  }, 180_000);
});

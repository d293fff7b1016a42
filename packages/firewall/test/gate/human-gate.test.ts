import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';

import type {
  CallShape,
  Evaluation,
  GateDecision,
  HumanGateOptions,
  PendingApproval,
  ToolCallFacts,
} from '../../src/index.js';
import { AuditLog, digestOf, HumanGate } from '../../src/index.js';
import {
  ADMIN,
  AGENT,
  diffPreview,
  evaluation,
  EventRecorder,
  facts,
  flush,
  ManualClock,
  OPERATOR,
  VIEWER,
} from './gate-fixtures.js';
import { shapeResolver } from './shape-fixtures.js';

const gates: HumanGate[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const g of gates.splice(0)) await g.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function setup(options: Partial<HumanGateOptions> = {}) {
  const clock = new ManualClock();
  const events = new EventRecorder();
  const gate = new HumanGate({ clock, events, ...options });
  gates.push(gate);
  /** Holds a call and waits until a person is asked; returns the approval and the pending decision. */
  const ask = async (ev: Evaluation = evaluation('APPROVE'), f: ToolCallFacts = facts()) => {
    const decision = gate.hold(ev, f);
    const requested = await events.next('APPROVAL_REQUESTED');
    return { decision, approval: requested.data.approval as PendingApproval };
  };
  return { clock, events, gate, ask };
}

async function errorOf(p: Promise<unknown>): Promise<FingerError> {
  try {
    await p;
  } catch (e) {
    return e as FingerError;
  }
  throw new Error('expected a rejection');
}

describe('HumanGate: approve', () => {
  it('holds the call, lists it with its preview, and approves exactly the args shown', async () => {
    const { gate, events, ask, clock } = setup();
    const ev = evaluation('APPROVE', { preview: diffPreview('ab'.repeat(32)) });
    const { decision, approval } = await ask(
      ev,
      facts({ tool_id: 'fs.write', args: { path: '/work/a.txt', content: 'new' } }),
    );
    expect(approval).toEqual({
      id: approval.id,
      tool_id: 'fs.write',
      args: { path: '/work/a.txt', content: 'new' },
      level: 'APPROVE',
      evaluation: ev,
      facts: {
        principal: { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
        session_id: 'sess-1',
        request_id: 'req-1',
        correlation_id: 'corr-1',
        direct: false,
      },
      risk: 'APPROVE: held by the permission layer. Reasons: command is dangerous. Rules: builtin risk → APPROVE (RiskAssessor: approve).',
      human_only: false,
      standing: {
        offered: false,
        reason: 'a standing approval never covers an APPROVE hold: always approves this call only',
      },
      status: 'waiting',
      binding: { args_digest: digestOf({ path: '/work/a.txt', content: 'new' }), file_sha256: 'ab'.repeat(32) },
      created_at: new Date(clock.t).toISOString(),
      expires_at: new Date(clock.t + 300_000).toISOString(),
    });
    expect(events.of('APPROVAL_REQUESTED')[0]!.correlation).toEqual({
      request_id: 'req-1',
      correlation_id: 'corr-1',
      session_id: 'sess-1',
      target: 'fs.write',
    });
    expect(gate.list()).toEqual([approval]);

    const result = await gate.answer(approval.id, { decision: 'approve', by: OPERATOR });
    expect(result).toEqual({
      id: approval.id,
      decision: 'approve',
      approved: true,
      tool_id: 'fs.write',
      edited: false,
      session_approval: false,
      args_digest: approval.binding.args_digest,
      answered_by: { kind: 'human', id: 'olga', roles: ['operator'] },
    });
    expect(await decision).toEqual({
      approved: true,
      args: { path: '/work/a.txt', content: 'new' },
      decided_by: 'human',
      approval_id: approval.id,
      binding: approval.binding,
    });
    expect(gate.list()).toEqual([]);
    expect(events.of('APPROVAL_RESOLVED')[0]!.data).toMatchObject({
      id: approval.id,
      decision: 'approve',
      approved: true,
      by: 'olga',
      answered_by: { kind: 'human', id: 'olga', roles: ['operator'] },
    });
  });

  it('lists pending approvals newest first and filters by session', async () => {
    const { gate, ask } = setup();
    const a = (await ask(evaluation('CONFIRM'), facts({ session_id: 's1' }))).approval;
    const b = (await ask(evaluation('CONFIRM'), facts({ session_id: 's2' }))).approval;
    expect(gate.list().map((x) => x.id)).toEqual([b.id, a.id]);
    expect(gate.list({ session_id: 's1' }).map((x) => x.id)).toEqual([a.id]);
    expect(gate.get(a.id)?.facts.session_id).toBe('s1');
  });

  it('a DENY verdict is refused at once, without asking anyone', async () => {
    const { gate, events } = setup();
    const d = await gate.hold(evaluation('DENY', { reasons: ['admin rule denies rm -rf'] }), facts());
    expect(d).toEqual({
      approved: false,
      code: 'E_DENIED_BY_POLICY',
      reason: 'admin rule denies rm -rf',
      decided_by: 'gate',
    });
    expect(events.all).toEqual([]);
  });

  it('refuses holds beyond max_pending with E_OVERLOADED', async () => {
    const { gate, ask } = setup({ max_pending: 2 });
    await ask();
    await ask();
    const d = await gate.hold(evaluation('APPROVE'), facts());
    expect(d.approved).toBe(false);
    expect(d.code).toBe('E_OVERLOADED');
    expect(d.reason).toBe(
      'too many pending approvals (approvals.max_pending = 2): answer or reject some before new calls can be held',
    );
    expect(gate.stats()).toMatchObject({ pending: 2, held: 2, overloaded: 1 });
  });

  const agent = (id: string): ToolCallFacts['principal'] => ({ kind: 'agent', id, roles: ['agent:executor'] });
  const person: ToolCallFacts['principal'] = { kind: 'human', id: 'alice', roles: ['operator'] };

  it('issue 28: 1,000 holds from one agent take its quota (100), not the queue: other agents and people are still held', async () => {
    const { gate } = setup();
    const flood = Array.from({ length: 1000 }, () =>
      gate.hold(evaluation('APPROVE'), facts({ principal: agent('bot') })),
    );
    const refused = await Promise.all(flood.slice(100));
    expect(new Set(refused.map((d) => `${d.code}: ${d.reason}`))).toEqual(
      new Set([
        "E_OVERLOADED: agent:bot has 100 calls held for a person, its quota (approvals.max_pending_per_principal = 100): answer or reject some of them before it can hold more; others' calls are still held",
      ]),
    );
    expect(gate.stats()).toMatchObject({ pending: 100, overloaded: 900 });
    void gate.hold(evaluation('APPROVE'), facts({ principal: agent('other') }));
    void gate.hold(evaluation('APPROVE'), facts({ principal: person }));
    expect(gate.stats()).toMatchObject({ pending: 102, overloaded: 900 });
  });

  it('a principal under its quota again (one answered) may hold again', async () => {
    const { gate, ask } = setup({ max_pending_per_principal: 2 });
    const first = await ask(evaluation('APPROVE'), facts({ principal: agent('bot') }));
    await ask(evaluation('APPROVE'), facts({ principal: agent('bot') }));
    expect(await gate.hold(evaluation('APPROVE'), facts({ principal: agent('bot') }))).toMatchObject({
      approved: false,
      code: 'E_OVERLOADED',
    });
    await gate.answer(first.approval.id, { decision: 'reject', by: OPERATOR });
    void gate.hold(evaluation('APPROVE'), facts({ principal: agent('bot') }));
    expect(gate.stats()).toMatchObject({ pending: 2, overloaded: 1 });
  });

  it("agents together stop at max_pending - human_reserve; a person's own calls take the reserve", async () => {
    const { gate } = setup({ max_pending: 10, human_reserve: 3 });
    for (let i = 0; i < 7; i++) void gate.hold(evaluation('APPROVE'), facts({ principal: agent(`a${i}`) }));
    const d = await gate.hold(evaluation('APPROVE'), facts({ principal: agent('a7') }));
    expect(d).toMatchObject({
      approved: false,
      code: 'E_OVERLOADED',
      reason:
        "too many pending approvals of agents (7; approvals.max_pending 10 less approvals.human_reserve 3 kept for people's own calls): answer or reject some before agent:a7 can hold more",
    });
    for (let i = 0; i < 3; i++) void gate.hold(evaluation('APPROVE'), facts({ principal: person }));
    expect(gate.stats()).toMatchObject({ pending: 10, overloaded: 1 });
    expect((await gate.hold(evaluation('APPROVE'), facts({ principal: person }))).code).toBe('E_OVERLOADED');
  });

  it('refuses a human_reserve that leaves agents no place (E_INVALID_ARGS)', () => {
    expect(() => new HumanGate({ max_pending: 10, human_reserve: 10 })).toThrow(
      expect.objectContaining({
        code: 'E_INVALID_ARGS',
        message: 'approvals.human_reserve (10) must be below approvals.max_pending (10)',
      }),
    );
  });
});

describe('HumanGate: approve with edited args', () => {
  it('re-evaluates the edited args; a DENY verdict turns the approval into a rejection', async () => {
    const seen: ToolCallFacts[] = [];
    const { gate, ask } = setup({
      reevaluate: (f) => {
        seen.push(f);
        return evaluation('DENY', { reasons: ['rm -rf is denied by admin#1'] });
      },
    });
    const { decision, approval } = await ask();
    const r = await gate.answer(approval.id, { decision: 'approve', args: { command: 'rm -rf /' }, by: OPERATOR });
    expect(r).toMatchObject({ approved: false, edited: true, code: 'E_DENIED_BY_POLICY' });
    expect(seen).toEqual([facts({ args: { command: 'rm -rf /' } })]);
    expect(await decision).toEqual({
      approved: false,
      code: 'E_DENIED_BY_POLICY',
      reason: 'the edited arguments are denied: rm -rf is denied by admin#1',
      decided_by: 'human',
      approval_id: approval.id,
      evaluation: evaluation('DENY', { reasons: ['rm -rf is denied by admin#1'] }),
    });
  });

  it('edited args still held: the approval covers exactly those args and the new preview hash', async () => {
    const newEv = evaluation('APPROVE', {
      preview: diffPreview('cd'.repeat(32)),
      args: { path: '/work/b.txt', content: 'x' },
    });
    const { gate, ask } = setup({ reevaluate: async () => newEv });
    const { decision, approval } = await ask(
      evaluation('APPROVE', { preview: diffPreview('ab'.repeat(32)) }),
      facts({ tool_id: 'fs.write', args: { path: '/work/a.txt', content: 'x' } }),
    );
    const r = await gate.answer(approval.id, {
      decision: 'approve',
      args: { path: '/work/b.txt', content: 'x', junk: 1 },
      by: ADMIN,
    });
    expect(r).toMatchObject({
      approved: true,
      edited: true,
      args_digest: digestOf({ path: '/work/b.txt', content: 'x' }),
    });
    expect(r.evaluation).toEqual(newEv);
    const d = await decision;
    expect(d.args).toEqual({ path: '/work/b.txt', content: 'x' }); // the firewall's filtered args
    expect(d.binding).toEqual({
      args_digest: digestOf({ path: '/work/b.txt', content: 'x' }),
      file_sha256: 'cd'.repeat(32),
    });
  });

  it('args equal to the shown ones (in another key order) are not an edit', async () => {
    const { gate, ask } = setup(); // no reevaluate: a real edit would be refused
    const { decision, approval } = await ask(evaluation('CONFIRM'), facts({ args: { a: 1, b: 2 } }));
    const r = await gate.answer(approval.id, { decision: 'approve', args: { b: 2, a: 1 }, by: OPERATOR });
    expect(r.edited).toBe(false);
    expect((await decision).approved).toBe(true);
  });

  it('invalid edited args are refused with E_INVALID_ARGS and the approval stays pending', async () => {
    const { gate, ask } = setup({
      reevaluate: () => {
        throw new FingerError('E_INVALID_ARGS', 'command must be a string');
      },
    });
    const { decision, approval } = await ask();
    const err = await errorOf(gate.answer(approval.id, { decision: 'approve', args: { command: 7 }, by: OPERATOR }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(gate.list().map((a) => a.id)).toEqual([approval.id]);
    await gate.answer(approval.id, { decision: 'approve', by: OPERATOR });
    expect((await decision).approved).toBe(true);
  });

  it('without a reevaluate function edits are refused (E_INVALID_ARGS)', async () => {
    const { gate, ask } = setup();
    const { approval } = await ask();
    const err = await errorOf(gate.answer(approval.id, { decision: 'approve', args: { command: 'ls' }, by: OPERATOR }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(gate.list()).toHaveLength(1);
  });
});

describe('HumanGate: reject, always, errors', () => {
  it('reject: the reason goes back to the caller', async () => {
    const { gate, ask, events } = setup();
    const { decision, approval } = await ask();
    const r = await gate.answer(approval.id, { decision: 'reject', reason: ' too risky on main ', by: OPERATOR });
    expect(r).toMatchObject({ approved: false, code: 'E_REJECTED_BY_HUMAN', reason: 'too risky on main' });
    expect(await decision).toEqual({
      approved: false,
      code: 'E_REJECTED_BY_HUMAN',
      reason: 'too risky on main',
      decided_by: 'human',
      approval_id: approval.id,
    });
    expect(events.of('APPROVAL_RESOLVED')[0]!.data).toMatchObject({ decision: 'reject', reason: 'too risky on main' });
  });

  it('always leaves a standing approval of the shape: the same shape runs at once, another shape, session or caller asks again', async () => {
    const { gate, ask, events, clock } = setup({ shapes: await shapeResolver() });
    const npmTest = facts({ session_id: 's1', args: { command: 'npm test' } });
    const first = await ask(evaluation('CONFIRM'), npmTest);
    expect(first.approval.standing).toEqual({
      offered: true,
      shape: { kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: ['test'] }] },
      description: 'shell.exec: npm test …',
    });
    const r = await gate.answer(first.approval.id, { decision: 'always', by: OPERATOR });
    const sa = r.standing_approval!;
    expect(r).toMatchObject({ approved: true, session_approval: true });
    expect(sa).toEqual({
      id: sa.id,
      tool_id: 'shell.exec',
      shape: first.approval.standing.offered ? first.approval.standing.shape : undefined,
      level: 'CONFIRM',
      principal: 'agent:executor-1',
      scope: 'session',
      session_id: 's1',
      by: 'olga',
      created_at: new Date(clock.t).toISOString(),
      approval_id: first.approval.id,
    });
    expect(gate.standingApprovals.list()).toEqual([sa]);

    const again = await gate.hold(
      evaluation('CONFIRM'),
      facts({ session_id: 's1', args: { command: 'npm test -- -u' } }),
    );
    expect(again).toEqual({
      approved: true,
      args: { command: 'npm test -- -u' },
      decided_by: 'standing',
      binding: { args_digest: digestOf({ command: 'npm test -- -u' }) },
      reason: `standing approval ${sa.id} by olga: shell.exec: npm test …`,
    });
    expect(events.of('APPROVAL_RESOLVED').at(-1)!.data).toMatchObject({
      decision: 'standing',
      standing_approval_id: sa.id,
      matched_rule: `standing:${sa.id}`,
    });
    expect(events.of('APPROVAL_REQUESTED')).toHaveLength(1);

    // another shape, an APPROVE hold, another session, another caller: asked again
    const cases: [Evaluation, ToolCallFacts][] = [
      [evaluation('CONFIRM'), facts({ session_id: 's1', args: { command: 'npm publish' } })],
      [evaluation('CONFIRM'), facts({ session_id: 's1', args: { command: 'npm test && rm -rf ~' } })],
      [evaluation('APPROVE'), facts({ session_id: 's1', args: { command: 'npm test' } })],
      [evaluation('CONFIRM'), facts({ session_id: 's2', args: { command: 'npm test' } })],
      [
        evaluation('CONFIRM'),
        facts({
          session_id: 's1',
          args: { command: 'npm test' },
          principal: { kind: 'agent', id: 'other-agent', roles: ['agent:executor'] },
        }),
      ],
    ];
    for (const [ev, f] of cases) await ask(ev, f);
    expect(gate.list()).toHaveLength(cases.length);
  });

  it('always while the standing approvals cannot be shared: E_STORE_UNAVAILABLE, still pending; approve once works', async () => {
    const { gate, ask } = setup({ shapes: await shapeResolver() });
    gate.standingApprovals.assertShareable = () => {
      throw new FingerError('E_STORE_UNAVAILABLE', 'redis is unavailable');
    };
    const held = await ask(evaluation('CONFIRM'), facts({ session_id: 's1', args: { command: 'npm test' } }));
    const err = await errorOf(gate.answer(held.approval.id, { decision: 'always', by: OPERATOR }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(gate.list().map((a) => a.id)).toEqual([held.approval.id]);
    expect(gate.standingApprovals.size).toBe(0);
    const r = await gate.answer(held.approval.id, { decision: 'approve', by: OPERATOR });
    expect(r).toMatchObject({ approved: true, session_approval: false });
    expect((await held.decision).approved).toBe(true);
  });

  it('always with a narrower shape, a workspace scope or an expiry; a wider shape is E_INVALID_ARGS and stays pending', async () => {
    const { gate, ask, clock } = setup({ shapes: await shapeResolver() });
    const held = await ask(evaluation('CONFIRM'), facts({ args: { command: 'npm test' } }));
    const wider: CallShape = { kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: [] }] };
    const err = await errorOf(gate.answer(held.approval.id, { decision: 'always', shape: wider, by: OPERATOR }));
    expect([err.code, (err.details as { issues: { path: string }[] }).issues[0]!.path]).toEqual([
      'E_INVALID_ARGS',
      '$.shape',
    ]);
    const bad = await errorOf(
      gate.answer(held.approval.id, { decision: 'always', scope: 'persistent', expires_at: 'soon', by: OPERATOR }),
    );
    expect(bad.code).toBe('E_INVALID_ARGS');
    expect(gate.list()).toHaveLength(1);
    const narrower: CallShape = {
      kind: 'shell',
      tool: 'shell.exec',
      commands: [{ program: 'npm', subcommand: ['test'], args: ['*'] }],
    };
    const r = await gate.answer(held.approval.id, {
      decision: 'always',
      shape: narrower,
      scope: 'workspace',
      expires_at: new Date(clock.t + 3_600_000).toISOString(),
      by: OPERATOR,
    });
    expect(r.standing_approval).toMatchObject({ scope: 'workspace', workspace: '/work', shape: narrower });
    expect(r.standing_approval!.session_id).toBeUndefined();
    // workspace scope: another session of the same caller is covered
    expect(
      (await gate.hold(evaluation('CONFIRM'), facts({ session_id: 'other', args: { command: 'npm test' } })))
        .decided_by,
    ).toBe('standing');
    // past its expiry it covers nothing
    clock.t += 3_600_001;
    await ask(evaluation('CONFIRM'), facts({ session_id: 'other', args: { command: 'npm test' } }));
    expect(gate.list()).toHaveLength(1);
  });

  it('revoking a standing approval holds the next matching call again (audited before it takes effect)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gate-standing-'));
    dirs.push(dir);
    const audit = await AuditLog.open({ dir });
    const { gate, ask } = setup({ shapes: await shapeResolver(), audit });
    const f = facts({ args: { command: 'npm test' } });
    const held = await ask(evaluation('CONFIRM'), f);
    const { standing_approval: sa } = await gate.answer(held.approval.id, { decision: 'always', by: OPERATOR });
    expect((await gate.hold(evaluation('CONFIRM'), f)).decided_by).toBe('standing');
    expect((await errorOf(gate.revokeStanding(sa!.id, VIEWER))).code).toBe('E_FORBIDDEN');
    expect((await gate.revokeStanding(sa!.id, OPERATOR)).id).toBe(sa!.id);
    expect((await errorOf(gate.revokeStanding(sa!.id, OPERATOR))).code).toBe('E_NOT_FOUND');
    await ask(evaluation('CONFIRM'), f);
    expect(gate.list()).toHaveLength(1);
    const entries = await audit.read({});
    const used = entries.find((e) => e.decision === 'standing')!;
    expect((used.verdict as Evaluation).matched_rules.map((m) => `${m.source}:${m.id}`)).toContain(
      `user:standing:${sa!.id}`,
    );
    const revoked = entries.find((e) => e.type === 'policy.changed')!;
    expect(revoked.details).toMatchObject({ change: 'standing_approval.revoked', standing_approval: { id: sa!.id } });
    const created = entries.find((e) => e.decision === 'always')!;
    expect(created.details).toMatchObject({ standing_approval: { id: sa!.id, scope: 'session' } });
    await audit.close();
  });

  it('always on a call that names no session approves once and records nothing (scope session)', async () => {
    const { gate, ask } = setup({ shapes: await shapeResolver() });
    const first = await ask(evaluation('CONFIRM'), facts({ session_id: '', args: { command: 'npm test' } }));
    const r = await gate.answer(first.approval.id, { decision: 'always', by: OPERATOR });
    expect(r).toMatchObject({ approved: true, session_approval: false });
    expect(r.reason).toBe(
      'approved once: the call names no session (answer with scope workspace or persistent), so no standing approval was recorded',
    );
    expect(gate.standingApprovals.size).toBe(0);
    await ask(evaluation('CONFIRM'), facts({ session_id: '', args: { command: 'npm test' } })); // asks again
    expect(gate.list()).toHaveLength(1);
  });

  it('always on an APPROVE hold, or without a shape resolver, approves once', async () => {
    const { gate, ask } = setup({ shapes: await shapeResolver() });
    const first = await ask(evaluation('APPROVE'), facts({ args: { command: 'npm test' } }));
    const r = await gate.answer(first.approval.id, { decision: 'always', by: OPERATOR });
    expect(r).toMatchObject({ approved: true, session_approval: false });
    expect(r.reason).toBe(
      'approved once: a standing approval never covers an APPROVE hold, so no standing approval was recorded',
    );
    const plain = setup();
    const held = await plain.ask(evaluation('CONFIRM'));
    expect(held.approval.standing).toEqual({
      offered: false,
      reason: 'no shape can be made of this call: always approves this call only',
    });
    const once = await plain.gate.answer(held.approval.id, { decision: 'always', by: OPERATOR });
    expect(once.session_approval).toBe(false);
  });

  it('always on a human_only rule approves once and records no standing approval', async () => {
    const { gate, ask } = setup({ shapes: await shapeResolver() });
    const ev = evaluation('CONFIRM', { human_only: true }); // set by the engine for human_only rules
    const first = await ask(ev, facts({ args: { command: 'npm test' } }));
    expect(first.approval.human_only).toBe(true);
    const r = await gate.answer(first.approval.id, { decision: 'always', by: OPERATOR });
    expect(r).toMatchObject({ approved: true, session_approval: false });
    expect(r.reason).toContain('human_only');
    expect(gate.standingApprovals.size).toBe(0);
    await ask(ev, facts({ args: { command: 'npm test' } })); // asks again
    expect(gate.list()).toHaveLength(1);
  });

  it('a rejection marked agent_fault: false is excused; agent_fault with another decision is E_INVALID_ARGS', async () => {
    const { gate, ask } = setup();
    const held = await ask();
    expect(
      (await errorOf(gate.answer(held.approval.id, { decision: 'approve', agent_fault: false, by: OPERATOR }))).code,
    ).toBe('E_INVALID_ARGS');
    await gate.answer(held.approval.id, { decision: 'reject', agent_fault: false, by: OPERATOR });
    expect(gate.isExcused(held.approval.id)).toBe(true);
    const other = await ask();
    await gate.answer(other.approval.id, { decision: 'reject', by: OPERATOR });
    expect(gate.isExcused(other.approval.id)).toBe(false);
  });

  it('only operators and admins may answer (E_FORBIDDEN); unknown id E_NOT_FOUND; twice E_CONFLICT', async () => {
    const { gate, ask } = setup();
    const { approval } = await ask();
    for (const by of [VIEWER, AGENT]) {
      const err = await errorOf(gate.answer(approval.id, { decision: 'approve', by }));
      expect(err.code).toBe('E_FORBIDDEN');
    }
    expect((await errorOf(gate.abort('sess-1', VIEWER))).code).toBe('E_FORBIDDEN');
    expect((await errorOf(gate.answer('01NOPE', { decision: 'approve', by: OPERATOR }))).code).toBe('E_NOT_FOUND');
    expect((await errorOf(gate.answer(approval.id, { decision: 'maybe' as never, by: OPERATOR }))).code).toBe(
      'E_INVALID_ARGS',
    );
    expect((await errorOf(gate.answer(approval.id, { decision: 'reject', args: {}, by: OPERATOR }))).code).toBe(
      'E_INVALID_ARGS',
    );
    await gate.answer(approval.id, { decision: 'reject', by: OPERATOR });
    const err = await errorOf(gate.answer(approval.id, { decision: 'approve', by: OPERATOR }));
    expect(err.code).toBe('E_CONFLICT');
    expect(err.details).toEqual({ id: approval.id, outcome: 'reject' });
  });

  it('with answerers configured only the named tokens may answer or abort; others get E_FORBIDDEN not_an_answerer and the call stays held', async () => {
    const { gate, ask } = setup({ answerers: ['alice'] });
    const { approval, decision } = await ask();
    const err = await errorOf(gate.answer(approval.id, { decision: 'approve', by: OPERATOR }));
    expect({ code: err.code, details: err.details }).toEqual({
      code: 'E_FORBIDDEN',
      details: { reason: 'not_an_answerer', token: 'olga' },
    });
    expect((await errorOf(gate.answer(approval.id, { decision: 'abort', by: OPERATOR }))).code).toBe('E_FORBIDDEN');
    expect((await errorOf(gate.abort('sess-1', OPERATOR))).code).toBe('E_FORBIDDEN');
    expect(gate.list().map((a) => a.id)).toEqual([approval.id]);
    // a listed name still needs an answering role
    const viewerAlice = { kind: 'human', id: 'alice', roles: ['viewer'] };
    expect((await errorOf(gate.answer(approval.id, { decision: 'approve', by: viewerAlice }))).details).toEqual({
      required: ['admin', 'operator'],
    });
    const alice = { kind: 'human', id: 'alice', roles: ['operator'] };
    const r = await gate.answer(approval.id, { decision: 'approve', by: alice });
    expect(r.answered_by).toEqual({ kind: 'human', id: 'alice', roles: ['operator'] });
    expect((await decision).approved).toBe(true);
  });
});

describe('HumanGate: abort and timeout', () => {
  it('abort is two-phase: stopping rejects the session pending approvals, stopped stays; other sessions are untouched', async () => {
    const { gate, ask } = setup();
    const a = await ask(evaluation('APPROVE'), facts({ session_id: 's1' }));
    const b = await ask(evaluation('CONFIRM'), facts({ session_id: 's1', tool_id: 'fs.write' }));
    const c = await ask(evaluation('APPROVE'), facts({ session_id: 's2' }));
    expect(gate.isAbortRequested('s1')).toBe(false);

    const r = await gate.answer(a.approval.id, { decision: 'abort', by: OPERATOR });
    expect(r).toMatchObject({ decision: 'abort', approved: false, abort: 'stopping' });
    for (const p of [a, b]) {
      expect(await p.decision).toMatchObject({
        approved: false,
        code: 'E_REJECTED_BY_HUMAN',
        reason: 'aborted',
        decided_by: 'abort',
      });
    }
    expect(gate.isAbortRequested('s1')).toBe(true);
    expect(gate.abortPhase('s1')).toBe('stopping');
    expect(gate.list().map((x) => x.id)).toEqual([c.approval.id]);
    // While stopping, new holds of the session are refused at once.
    expect(await gate.hold(evaluation('CONFIRM'), facts({ session_id: 's1' }))).toEqual({
      approved: false,
      code: 'E_REJECTED_BY_HUMAN',
      reason: 'aborted (session stopping)',
      decided_by: 'abort',
    });

    expect(await gate.abort('s1', ADMIN)).toEqual({ session_id: 's1', phase: 'stopped', rejected: 0 });
    expect(gate.abortPhase('s1')).toBe('stopped');
    expect(gate.abortPhase('s2')).toBeNull();
    gate.resetSession('s1');
    expect(gate.isAbortRequested('s1')).toBe(false);
  });

  it('no answer within the timeout → E_APPROVAL_TIMEOUT; a late answer is E_CONFLICT', async () => {
    const { gate, ask, clock, events } = setup({ timeout_ms: 60_000 });
    const { decision, approval } = await ask();
    clock.advance(59_999);
    await flush();
    expect(gate.list()).toHaveLength(1);
    clock.advance(1);
    expect(await decision).toEqual({
      approved: false,
      code: 'E_APPROVAL_TIMEOUT',
      reason: `nobody answered approval ${approval.id} within 60 s (the approval timeout; a call's own timeout counts from the answer)`,
      decided_by: 'timeout',
      approval_id: approval.id,
    });
    expect(events.of('APPROVAL_RESOLVED')[0]!.data).toMatchObject({ decision: 'timeout', code: 'E_APPROVAL_TIMEOUT' });
    expect((await errorOf(gate.answer(approval.id, { decision: 'approve', by: OPERATOR }))).code).toBe('E_CONFLICT');
    expect(clock.pendingTimers).toBe(0);
  });

  it('defaults to a 5 minute timeout', async () => {
    const { ask, clock } = setup();
    const { decision } = await ask();
    clock.advance(5 * 60_000);
    expect((await decision).code).toBe('E_APPROVAL_TIMEOUT');
  });

  it('close() refuses every pending hold', async () => {
    const { gate, ask } = setup();
    const { decision } = await ask();
    await gate.close();
    expect((await decision).code).toBe('E_PROVIDER_CLOSED');
    expect((await gate.hold(evaluation('CONFIRM'), facts())).code).toBe('E_PROVIDER_CLOSED');
  });
});

describe('HumanGate: audit', () => {
  it('writes approval.requested and approval.resolved entries (args only as digests)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'finger-gate-audit-'));
    dirs.push(dir);
    const audit = await AuditLog.open({ dir });
    const { gate, ask } = setup({ audit });
    const { decision, approval } = await ask(evaluation('APPROVE'), facts({ args: { command: 'secret-token-123' } }));
    await gate.answer(approval.id, { decision: 'reject', reason: 'no', by: OPERATOR });
    await decision;
    const entries = await audit.read();
    expect(entries.map((e) => [e.type, e.decision, e.actor])).toEqual([
      ['approval.requested', null, { kind: 'agent', id: 'executor-1' }],
      ['approval.resolved', 'reject', { kind: 'human', id: 'olga' }],
    ]);
    expect(entries[1]!.args_digest).toBe(digestOf({ command: 'secret-token-123' }));
    expect(entries[1]!.details).toMatchObject({
      approval_id: approval.id,
      reason: 'no',
      decided_by: 'human',
      answered_by: { kind: 'human', id: 'olga', roles: ['operator'] },
    });
    expect(JSON.stringify(entries)).not.toContain('secret-token-123');
    await audit.close();
  });

  it('an approval that cannot be audited is refused (E_STORE_UNAVAILABLE)', async () => {
    let calls = 0;
    const audit = {
      append: async () => {
        if (++calls > 1) throw new FingerError('E_STORE_UNAVAILABLE', 'disk full');
        return {};
      },
    };
    const { gate, ask } = setup({ audit });
    const { decision, approval } = await ask();
    await flush();
    await gate.answer(approval.id, { decision: 'approve', by: OPERATOR });
    const d: GateDecision = await decision;
    expect(d).toMatchObject({ approved: false, code: 'E_STORE_UNAVAILABLE', decided_by: 'gate' });
  });
});

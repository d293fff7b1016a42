import { describe, expect, it } from 'vitest';

import type { PendingApproval } from '../../src/index.js';
import { adapt, avoidanceHint, explainHint, HumanGate, PerceptionBus } from '../../src/index.js';
import { evaluation, EventRecorder, facts, ManualClock, OPERATOR } from '../gate/gate-fixtures.js';

const human = (tool_id: string, session_id = 's1') => ({ tool_id, session_id, source: 'human' as const });

describe('Adaptation: tighten', () => {
  it('3 consecutive human rejections of a tool → tighten to APPROVE with an avoidance hint', () => {
    const bus = new PerceptionBus();
    bus.recordRejection(human('shell.exec'));
    bus.recordRejection(human('shell.exec'));
    expect(adapt(bus.snapshot())).toEqual([]);
    bus.recordRejection({ ...human('shell.exec'), reason: 'no' });
    expect(adapt(bus.snapshot())).toEqual([
      { kind: 'tighten', tool: 'shell.exec', level: 'APPROVE', rejections: 3, hint: avoidanceHint('shell.exec', 3) },
    ]);
    expect(avoidanceHint('shell.exec', 3)).toMatch(/^avoid shell\.exec: the user rejected it 3 times/);
    // Already escalated: not tightened again.
    expect(adapt(bus.snapshot(), { escalated: ['shell.exec'] })).toEqual([]);
  });

  it('an approval in between breaks the streak; timeouts, aborts and reviewer rejections do not count', () => {
    const bus = new PerceptionBus();
    bus.recordRejection(human('fs.write'));
    bus.recordRejection(human('fs.write'));
    bus.recordApproval({ ...human('fs.write'), latency_ms: 1000 });
    bus.recordRejection(human('fs.write'));
    for (const source of ['timeout', 'abort', 'reviewer', 'policy'] as const) {
      bus.recordRejection({ tool_id: 'fs.write', session_id: 's1', source });
    }
    expect(bus.toolCounts('fs.write')).toMatchObject({ rejections: 7, approvals: 1, consecutive_rejections: 1 });
    expect(adapt(bus.snapshot())).toEqual([]);
  });
});

describe('Adaptation: revert', () => {
  it('5 consecutive human approvals of an escalated tool → revert', () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 3; i++) bus.recordRejection(human('shell.exec'));
    for (let i = 0; i < 4; i++) bus.recordApproval({ ...human('shell.exec'), latency_ms: 500 });
    expect(adapt(bus.snapshot(), { escalated: ['shell.exec'] })).toEqual([]);
    bus.recordApproval({ ...human('shell.exec'), latency_ms: 500 });
    expect(adapt(bus.snapshot(), { escalated: ['shell.exec'] })).toEqual([
      { kind: 'revert', tool: 'shell.exec', approvals: 5 },
    ]);
    // Not escalated: nothing to revert. Session approvals are not human decisions.
    expect(adapt(bus.snapshot())).toEqual([]);
    const other = new PerceptionBus();
    for (let i = 0; i < 9; i++)
      other.recordApproval({ tool_id: 'x', session_id: 's', latency_ms: 0, source: 'session' });
    expect(adapt(other.snapshot(), { escalated: ['x'] })).toEqual([]);
  });

  it('N is configurable', () => {
    const bus = new PerceptionBus();
    bus.recordApproval({ ...human('t'), latency_ms: 1 });
    bus.recordApproval({ ...human('t'), latency_ms: 1 });
    expect(adapt(bus.snapshot(), { escalated: ['t'], approvals_to_revert: 2 })).toEqual([
      { kind: 'revert', tool: 't', approvals: 2 },
    ]);
  });
});

describe('Adaptation: hesitation', () => {
  it('an approval slower than 20 s → hesitation with an explain hint, reported once per approval', () => {
    const bus = new PerceptionBus();
    bus.recordApproval({ ...human('fs.write', 's7'), latency_ms: 20_000 });
    expect(adapt(bus.snapshot())).toEqual([]);
    bus.recordApproval({ ...human('fs.write', 's7'), latency_ms: 31_000 });
    const counts = bus.snapshot();
    expect(adapt(counts)).toEqual([
      {
        kind: 'hesitation',
        tool: 'fs.write',
        session_id: 's7',
        latency_ms: 31_000,
        seq: 2,
        hint: explainHint('fs.write', 31_000),
      },
    ]);
    expect(explainHint('fs.write', 31_000)).toMatch(
      /^explain your intent before calling fs\.write again: the user took 31 s/,
    );
    expect(adapt(counts, { after_seq: counts.seq })).toEqual([]);
    expect(adapt(counts, { hesitation_ms: 40_000 })).toEqual([]);
  });

  it('hintsFor: avoidance hints while the streak stands, explain hints once for their session', () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 3; i++) bus.recordRejection(human('shell.exec', 'other'));
    bus.recordApproval({ ...human('fs.write', 's1'), latency_ms: 25_000 });
    expect(bus.hintsFor('s1')).toEqual([
      { kind: 'avoid', tool: 'shell.exec', text: avoidanceHint('shell.exec', 3) },
      { kind: 'explain', tool: 'fs.write', text: explainHint('fs.write', 25_000) },
    ]);
    expect(bus.hintsFor('s1')).toEqual([{ kind: 'avoid', tool: 'shell.exec', text: avoidanceHint('shell.exec', 3) }]);
    bus.recordApproval({ ...human('shell.exec', 'other'), latency_ms: 100 });
    expect(bus.hintsFor('s1')).toEqual([]);
  });
});

describe('PerceptionBus', () => {
  it('counts confidence, result classes and repeats', () => {
    const bus = new PerceptionBus();
    bus.recordConfidence('s1', 0.9);
    bus.recordConfidence('s1', 0.3);
    bus.recordResult('fs.read', 'success');
    bus.recordResult('fs.read', 'irrelevant');
    bus.recordResult('fs.read', 'success');
    bus.recordCall('s1', 'fs.read', 'fp-a');
    bus.recordCall('s1', 'fs.read', 'fp-a');
    bus.recordCall('s1', 'fs.read', 'fp-a');
    bus.recordCall('s1', 'fs.read', 'fp-b');
    const c = bus.snapshot();
    expect(c.sessions.s1).toEqual({
      session_id: 's1',
      confidence: { count: 2, last: 0.3, min: 0.3, mean: 0.6 },
      last_fingerprint: 'fp-b',
      run: 1,
      repeats: 2,
      hesitations: 0,
    });
    expect(c.tools['fs.read']).toMatchObject({
      results: { success: 2, failure: 0, partial: 0, irrelevant: 1 },
      repeats: 2,
    });
  });

  it('memory is bounded: least recently touched tools and sessions go first, sample rings are capped', () => {
    const bus = new PerceptionBus({ max_tools: 2, max_sessions: 2, max_samples: 3 });
    for (const t of ['a', 'b', 'c'])
      bus.recordApproval({ tool_id: t, session_id: `s-${t}`, latency_ms: 1, source: 'human' });
    expect(Object.keys(bus.snapshot().tools).sort()).toEqual(['b', 'c']);
    expect(Object.keys(bus.snapshot().sessions)).toEqual([]);
    for (const s of ['x', 'y', 'z']) bus.recordConfidence(s, 0.5);
    expect(Object.keys(bus.snapshot().sessions).sort()).toEqual(['y', 'z']);
    for (let i = 0; i < 5; i++) bus.recordRejection({ tool_id: 'b', session_id: 'y', source: 'human' });
    expect(bus.stats()).toMatchObject({ tools: 2, sessions: 2, approvals: 3, rejections: 3 });
  });
});

describe('HumanGate → PerceptionBus → adapt', () => {
  it('three rejections by a person through the gate call for tightening; a slow approval for a hesitation', async () => {
    const clock = new ManualClock();
    const events = new EventRecorder();
    const perception = new PerceptionBus({ clock });
    const gate = new HumanGate({ clock, events, perception });
    for (let i = 0; i < 3; i++) {
      const d = gate.hold(evaluation('CONFIRM'), facts());
      const a = (await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval;
      await gate.answer(a.id, { decision: 'reject', by: OPERATOR });
      await d;
    }
    const d = gate.hold(evaluation('CONFIRM'), facts({ tool_id: 'fs.write' }));
    const a = (await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval;
    clock.t += 45_000;
    await gate.answer(a.id, { decision: 'approve', by: OPERATOR });
    await d;
    expect(adapt(perception.snapshot()).map((x) => [x.kind, x.tool])).toEqual([
      ['tighten', 'shell.exec'],
      ['hesitation', 'fs.write'],
    ]);
    expect(perception.hintsFor('sess-1').map((h) => h.kind)).toEqual(['avoid', 'explain']);
    await gate.close();
  });
});

describe('Adaptation per shape (issue 23)', () => {
  const push = {
    key: 'shell.exec@aaaaaaaaaaaa',
    tool: 'shell.exec',
    label: 'shell.exec: git push',
    match: { command: 'git push *' },
  };
  const status = {
    key: 'shell.exec@bbbbbbbbbbbb',
    tool: 'shell.exec',
    label: 'shell.exec: git status',
    match: { command: 'git status *' },
  };
  const rejected = (classes: (typeof push)[], excused = false) => ({
    ...human('shell.exec'),
    classes,
    ...(excused ? { excused } : {}),
  });

  it('three rejections of `git push` tighten that shape, not the tool and not `git status`', () => {
    const bus = new PerceptionBus();
    bus.recordRejection(rejected([push]));
    bus.recordRejection(rejected([push]));
    bus.recordApproval({ ...human('shell.exec'), latency_ms: 10, classes: [status] });
    bus.recordRejection(rejected([push]));
    expect(adapt(bus.snapshot())).toEqual([
      {
        kind: 'tighten',
        tool: push.key,
        level: 'APPROVE',
        rejections: 3,
        hint: avoidanceHint('shell.exec: git push', 3),
        shape: { tool: 'shell.exec', label: 'shell.exec: git push', match: { command: 'git push *' } },
      },
    ]);
    expect(bus.toolCounts('shell.exec')).toMatchObject({ rejections: 3, consecutive_rejections: 0 });
    expect(bus.hintsFor('s1').map((h) => h.text)).toEqual([avoidanceHint('shell.exec: git push', 3)]);
  });

  it('reverting works as before: human approvals of the escalated shape revert it', () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 5; i++) bus.recordApproval({ ...human('shell.exec'), latency_ms: 10, classes: [push] });
    expect(adapt(bus.snapshot(), { escalated: [push.key] })).toEqual([
      { kind: 'revert', tool: push.key, approvals: 5 },
    ]);
  });

  it("rejections that were not the agent's fault build no streak; a call without a shape (empty classes) counts for nothing", () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 3; i++) bus.recordRejection(rejected([push], true));
    for (let i = 0; i < 3; i++) bus.recordRejection(rejected([]));
    expect(adapt(bus.snapshot())).toEqual([]);
    expect(bus.snapshot().classes[push.key]).toMatchObject({ rejections: 3, consecutive_rejections: 0 });
  });
});

describe('Adaptation: a rejection of a dangerous call held at APPROVE builds no streak (rm -rf raised every rm)', () => {
  const rm = {
    key: 'shell.exec@cccccccccccc',
    tool: 'shell.exec',
    label: 'shell.exec: rm',
    match: { command: 'rm *' },
  };
  const rejectedAt = (level: 'CONFIRM' | 'APPROVE') => ({
    ...human('shell.exec'),
    classes: [rm],
    ...(level === 'APPROVE' ? { dangerous: true } : {}),
  });

  it('three rejected dangerous calls held at APPROVE through the gate call for no tightening; the rejections are still counted', async () => {
    const clock = new ManualClock();
    const events = new EventRecorder();
    const perception = new PerceptionBus({ clock });
    const gate = new HumanGate({ clock, events, perception });
    for (let i = 0; i < 3; i++) {
      const d = gate.hold(evaluation('APPROVE'), facts({ args: { command: 'rm -rf x' } }));
      const a = (await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval;
      await gate.answer(a.id, { decision: 'reject', by: OPERATOR });
      await d;
    }
    expect(adapt(perception.snapshot())).toEqual([]);
    expect(perception.hintsFor('sess-1')).toEqual([]);
    expect(perception.snapshot().recent_rejections.map((r) => [r.source, r.dangerous])).toEqual([
      ['human', true],
      ['human', true],
      ['human', true],
    ]);
    await gate.close();
  });

  it('an APPROVE hold that is not a dangerous assessment (a write outside the roots) still counts', async () => {
    const clock = new ManualClock();
    const events = new EventRecorder();
    const perception = new PerceptionBus({ clock });
    const gate = new HumanGate({ clock, events, perception });
    const outside = evaluation('APPROVE', {
      matched_rules: [
        { source: 'builtin', id: 'sandbox.outside_write', level: 'APPROVE', reason: 'write to "/x" is outside' },
      ],
    });
    for (let i = 0; i < 3; i++) {
      const d = gate.hold(outside, facts({ tool_id: 'fs.write', args: { path: '/x', content: 'x' } }));
      const a = (await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval;
      await gate.answer(a.id, { decision: 'reject', by: OPERATOR });
      await d;
    }
    expect(adapt(perception.snapshot()).map((x) => [x.kind, x.tool])).toEqual([['tighten', 'fs.write']]);
    await gate.close();
  });

  it('three rejected dangerous APPROVE-level calls of the rm shape leave `rm a.txt` alone; three CONFIRM-level ones still raise it', () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 3; i++) bus.recordRejection(rejectedAt('APPROVE'));
    expect(adapt(bus.snapshot())).toEqual([]);
    expect(bus.snapshot().classes[rm.key]).toMatchObject({ rejections: 3, consecutive_rejections: 0 });
    for (let i = 0; i < 3; i++) bus.recordRejection(rejectedAt('CONFIRM'));
    expect(adapt(bus.snapshot())).toEqual([
      {
        kind: 'tighten',
        tool: rm.key,
        level: 'APPROVE',
        rejections: 3,
        hint: avoidanceHint('shell.exec: rm', 3),
        shape: { tool: 'shell.exec', label: 'shell.exec: rm', match: { command: 'rm *' } },
      },
    ]);
  });

  it('an APPROVE hold rejected between CONFIRM rejections neither counts nor breaks the streak; it does break a revert streak', () => {
    const bus = new PerceptionBus();
    bus.recordRejection(rejectedAt('CONFIRM'));
    bus.recordRejection(rejectedAt('APPROVE'));
    bus.recordRejection(rejectedAt('CONFIRM'));
    expect(adapt(bus.snapshot())).toEqual([]);
    bus.recordRejection(rejectedAt('CONFIRM'));
    expect(adapt(bus.snapshot()).map((a) => [a.kind, a.tool])).toEqual([['tighten', rm.key]]);
    const escalated = new PerceptionBus();
    for (let i = 0; i < 4; i++) escalated.recordApproval({ ...human('shell.exec'), latency_ms: 10, classes: [rm] });
    escalated.recordRejection(rejectedAt('APPROVE'));
    escalated.recordApproval({ ...human('shell.exec'), latency_ms: 10, classes: [rm] });
    expect(adapt(escalated.snapshot(), { escalated: [rm.key] })).toEqual([]);
    expect(escalated.snapshot().classes[rm.key]).toMatchObject({ consecutive_approvals: 1, consecutive_rejections: 0 });
  });

  it('a tool without shapes: three rejected dangerous calls do not escalate the whole tool', () => {
    const bus = new PerceptionBus();
    for (let i = 0; i < 3; i++) bus.recordRejection({ ...human('web.post'), dangerous: true });
    expect(adapt(bus.snapshot())).toEqual([]);
    expect(bus.toolCounts('web.post')).toMatchObject({ rejections: 3, consecutive_rejections: 0 });
  });
});

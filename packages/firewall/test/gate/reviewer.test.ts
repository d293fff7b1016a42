// The external reviewer, run as a real child process (a tiny node script).

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { GateDecision, PendingApproval, ReviewerConfig } from '../../src/index.js';
import { HumanGate, parseReviewerOutput, systemGateClock } from '../../src/index.js';
import { evaluation, EventRecorder, facts, OPERATOR } from './gate-fixtures.js';

// argv[2]: approve | reject | garbage | sleep | exit3 | echo ; argv[3]: marker file written when run.
const SCRIPT = `
import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const mode = process.argv[2];
  if (process.argv[3]) writeFileSync(process.argv[3], input);
  const a = JSON.parse(input);
  switch (mode) {
    case 'approve': process.stdout.write(JSON.stringify({ decision: 'approve', reason: 'looks fine: ' + a.tool_id })); break;
    case 'reject': process.stdout.write(JSON.stringify({ decision: 'reject', reason: 'force-push is not allowed' })); break;
    case 'garbage': process.stdout.write('sure, go ahead!'); break;
    case 'maybe': process.stdout.write(JSON.stringify({ decision: 'maybe' })); break;
    case 'sleep': setTimeout(() => process.stdout.write('{"decision":"approve"}'), 30000); break;
    case 'exit3': process.stdout.write('{"decision":"approve"}'); process.exit(3);
  }
});
`;

let dir: string;
let script: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'finger-reviewer-'));
  script = path.join(dir, 'reviewer.mjs');
  await writeFile(script, SCRIPT);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function gateWith(mode: string, reviewer: Partial<ReviewerConfig> = {}, marker?: string) {
  const events = new EventRecorder();
  const gate = new HumanGate({
    clock: systemGateClock,
    events,
    reviewer: {
      command: [process.execPath, script, mode, ...(marker ? [marker] : [])],
      timeout_ms: 5_000,
      ...reviewer,
    },
  });
  return { gate, events };
}

async function holdOnce(
  mode: string,
  reviewer: Partial<ReviewerConfig> = {},
): Promise<{ d: GateDecision; events: EventRecorder }> {
  const { gate, events } = gateWith(mode, reviewer);
  const d = await gate.hold(evaluation('APPROVE'), facts());
  await gate.close();
  return { d, events };
}

describe('external reviewer, mode instead', () => {
  it('approves in place of the person: it got the pending approval on stdin; nobody is asked', async () => {
    const marker = path.join(dir, 'instead-approve.json');
    const { gate, events } = gateWith('approve', { mode: 'instead' }, marker);
    const d = await gate.hold(evaluation('APPROVE'), facts());
    expect(d).toMatchObject({
      approved: true,
      decided_by: 'reviewer',
      reason: 'looks fine: shell.exec',
      args: facts().args,
    });
    expect(events.of('APPROVAL_REQUESTED')).toEqual([]);
    expect(events.of('APPROVAL_RESOLVED')[0]!.data).toMatchObject({ decision: 'reviewer_approve', approved: true });
    const { readFile } = await import('node:fs/promises');
    const seen = JSON.parse(await readFile(marker, 'utf8')) as PendingApproval;
    expect(seen).toMatchObject({
      id: d.approval_id,
      tool_id: 'shell.exec',
      args: facts().args,
      status: 'reviewing',
      review: { mode: 'instead', status: 'pending' },
    });
    await gate.close();
  });

  it('rejects with its reason', async () => {
    const { d } = await holdOnce('reject', { mode: 'instead' });
    expect(d).toMatchObject({
      approved: false,
      code: 'E_REJECTED_BY_HUMAN',
      reason: 'reviewer: force-push is not allowed',
      decided_by: 'reviewer',
    });
  });

  it('a timeout, garbage output, a bad decision or a non-zero exit is a rejection', async () => {
    const cases: [string, string][] = [
      ['sleep', 'reviewer: reviewer did not answer within 300 ms'],
      ['garbage', 'reviewer: reviewer output is not a JSON decision (not JSON): "sure, go ahead!"'],
      ['maybe', 'reviewer: reviewer output is not a JSON decision (decision must be "approve" or "reject")'],
      ['exit3', 'reviewer: reviewer exited with code 3'],
    ];
    for (const [mode, reason] of cases) {
      // only the sleeping reviewer is meant to run out of time: the others get room to start on a busy machine
      const { d } = await holdOnce(mode, { mode: 'instead', timeout_ms: mode === 'sleep' ? 300 : 15_000 });
      expect(d.approved, mode).toBe(false);
      expect(d.decided_by, mode).toBe('reviewer');
      expect(d.reason, mode).toContain(reason);
    }
  });

  it('a command that cannot start is a rejection', async () => {
    const { gate } = gateWith('approve', { mode: 'instead', command: [path.join(dir, 'no-such-reviewer')] });
    const d = await gate.hold(evaluation('APPROVE'), facts());
    expect(d.approved).toBe(false);
    expect(d.reason).toContain('reviewer could not run');
    await gate.close();
  });
});

describe('external reviewer, mode beside', () => {
  it('its rejection rejects without asking a person', async () => {
    const { d, events } = await holdOnce('reject', { mode: 'beside' });
    expect(d).toMatchObject({ approved: false, decided_by: 'reviewer' });
    expect(events.of('APPROVAL_REQUESTED')).toEqual([]);
  });

  it('its approval still asks the person, who decides', async () => {
    const { gate, events } = gateWith('approve', {}); // beside is the default
    const decision = gate.hold(evaluation('APPROVE'), facts());
    const requested = await events.next('APPROVAL_REQUESTED');
    const approval = requested.data.approval as PendingApproval;
    expect(approval.status).toBe('waiting');
    expect(approval.review).toEqual({ mode: 'beside', status: 'approved', reason: 'looks fine: shell.exec' });
    await gate.answer(approval.id, { decision: 'reject', reason: 'not today', by: OPERATOR });
    expect(await decision).toMatchObject({ approved: false, decided_by: 'human', reason: 'not today' });
    await gate.close();
  });

  it('a person may answer while the reviewer is still running (the reviewer is stopped)', async () => {
    const { gate } = gateWith('sleep', { mode: 'beside', timeout_ms: 20_000 });
    const decision = gate.hold(evaluation('APPROVE'), facts());
    const [pending] = gate.list();
    expect(pending!.status).toBe('reviewing');
    await gate.answer(pending!.id, { decision: 'approve', by: OPERATOR });
    expect(await decision).toMatchObject({ approved: true, decided_by: 'human' });
    await gate.close();
  });
});

describe('human_only rules never go to the reviewer', () => {
  it('the person decides; the reviewer is not even started', async () => {
    const marker = path.join(dir, 'human-only.json');
    const { gate, events } = gateWith('approve', { mode: 'instead' }, marker);
    const ev = evaluation('APPROVE', {
      matched_rules: [
        { source: 'admin', id: 'admin#7', level: 'APPROVE', reason: 'prod deploys', human_only: true } as never,
      ],
    });
    const decision = gate.hold(ev, facts());
    const approval = (await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval;
    expect(approval).toMatchObject({ human_only: true, status: 'waiting' });
    expect(approval.review).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(marker)).toBe(false);
    await gate.answer(approval.id, { decision: 'approve', by: OPERATOR });
    expect(await decision).toMatchObject({ approved: true, decided_by: 'human' });
    // The facts flag works too.
    const d2 = gate.hold(evaluation('APPROVE'), { ...facts(), human_only: true } as never);
    expect(((await events.next('APPROVAL_REQUESTED')).data.approval as PendingApproval).human_only).toBe(true);
    await gate.close();
    expect((await d2).code).toBe('E_PROVIDER_CLOSED');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('parseReviewerOutput', () => {
  it('accepts exactly one JSON decision', () => {
    expect(parseReviewerOutput(' {"decision":"approve"}\n')).toEqual({
      decision: 'approve',
      reason: 'reviewer approved',
      failed: false,
    });
    expect(parseReviewerOutput('{"decision":"reject","reason":"no"}')).toEqual({
      decision: 'reject',
      reason: 'no',
      failed: false,
    });
    expect(parseReviewerOutput('{"decision":"approve"}\n{"decision":"approve"}').failed).toBe(true);
    expect(parseReviewerOutput('[]').failed).toBe(true);
    expect(parseReviewerOutput('{"decision":"approve","reason":5}').failed).toBe(true);
    expect(parseReviewerOutput('').failed).toBe(true);
  });
});

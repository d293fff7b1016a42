import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FingerApp } from '@finger/daemon';
import { type Evaluation, HumanGate, type ToolCallFacts } from '@finger/firewall';
import { FingerError, type FingerEvent } from '@finger/protocol';

import { startDaemon, type TestDaemon } from './helpers.js';

function evaluation(level: Evaluation['level'], extra: Partial<Evaluation> = {}): Evaluation {
  return {
    decision_id: 'dec-1',
    level,
    action: level === 'DENY' ? 'deny' : 'hold',
    layer: 'path_sandbox',
    matched_rules: [],
    reasons: ['fs.write outside writable_paths'],
    preview: {
      kind: 'diff',
      text: '--- /etc/motd\n+++ /etc/motd\n-hi\n+bye',
      file_sha256: 'e'.repeat(64),
      path: '/etc/motd',
    },
    ...extra,
  };
}

function facts(over: Partial<ToolCallFacts> = {}): ToolCallFacts {
  return {
    tool_id: 'fs.write',
    args: { path: '/etc/motd', content: 'bye' },
    principal: { kind: 'agent', id: 'exec', roles: ['agent:executor'] },
    session_id: 'sess-9',
    request_id: 'req-9',
    correlation_id: 'corr-9',
    direct: false,
    tool: { risk_level: 'medium', capability_level: 'L1', side_effects: true },
    ...over,
  };
}

let d: TestDaemon;
let gate: HumanGate;
let app: FingerApp | undefined;
const events: FingerEvent[] = [];
let viewer: string;
let operator: string;
let agent: string;

beforeAll(async () => {
  gate = new HumanGate({
    // The daemon's own event bus, so /v1/events subscribers get APPROVAL_* pushed.
    events: { emit: (type, correlation, data) => app?.events.emit(type, correlation, data) },
    reevaluate: (f) => {
      const content = (f.args as { content?: unknown }).content;
      if (typeof content !== 'string') throw new FingerError('E_INVALID_ARGS', 'content must be a string');
      return content.includes('rm -rf')
        ? evaluation('DENY', { reasons: ['admin#1 denies it'] })
        : evaluation('APPROVE');
    },
  });
  d = await startDaemon({}, { gate });
  app = d.app;
  app.events.subscribe({ types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'] }, (e) => events.push(e));
  [viewer, operator, agent] = await Promise.all([d.token('viewer'), d.token('operator'), d.token('agent:executor')]);
});
afterAll(async () => {
  await gate.close();
  await d.close();
});

/** Holds a call and returns its id and the pending decision. */
function hold(f: ToolCallFacts = facts()) {
  const decision = gate.hold(evaluation('APPROVE'), f);
  return { decision, id: gate.list()[0]!.id };
}

describe('GET /v1/approvals', () => {
  it('lists pending approvals newest first with previews (viewer+), agents may not look', async () => {
    const a = hold();
    const b = hold(facts({ session_id: 'sess-10', args: { path: '/etc/motd', content: 'two' } }));
    const res = await d.call('GET', '/v1/approvals', { token: viewer });
    expect(res.status).toBe(200);
    expect(res.json.approvals.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    expect(res.json.approvals[1]).toMatchObject({
      id: a.id,
      tool_id: 'fs.write',
      args: { path: '/etc/motd', content: 'bye' },
      level: 'APPROVE',
      status: 'waiting',
      human_only: false,
      evaluation: { preview: { kind: 'diff', path: '/etc/motd' }, reasons: ['fs.write outside writable_paths'] },
      facts: { principal: { kind: 'agent', id: 'exec' }, session_id: 'sess-9' },
    });
    expect(res.json.approvals[1].risk).toContain('held by the path_sandbox layer');
    const filtered = await d.call('GET', '/v1/approvals?session_id=sess-10&limit=5', { token: viewer });
    expect(filtered.json.approvals.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect((await d.call('GET', '/v1/approvals', { token: agent })).json.error.code).toBe('E_FORBIDDEN');
    expect(events.filter((e) => e.type === 'APPROVAL_REQUESTED').map((e) => e.data.id)).toEqual([a.id, b.id]);
    expect(events[0]).toMatchObject({
      request_id: 'req-9',
      correlation_id: 'corr-9',
      session_id: 'sess-9',
      target: 'fs.write',
    });
    await gate.answer(a.id, { decision: 'reject', by: { id: 't', roles: ['admin'] } });
    await gate.answer(b.id, { decision: 'reject', by: { id: 't', roles: ['admin'] } });
  });
});

describe('POST /v1/approvals/:id', () => {
  it('approve (operator) resolves the held call; answering again is 409 E_CONFLICT', async () => {
    const { decision, id } = hold();
    const res = await d.call('POST', `/v1/approvals/${id}`, { token: operator, body: { decision: 'approve' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id,
      decision: 'approve',
      approved: true,
      tool_id: 'fs.write',
      edited: false,
      session_approval: false,
    });
    expect(await decision).toMatchObject({
      approved: true,
      decided_by: 'human',
      args: { path: '/etc/motd', content: 'bye' },
    });
    const again = await d.call('POST', `/v1/approvals/${id}`, { token: operator, body: { decision: 'reject' } });
    expect([again.status, again.json.error.code]).toEqual([409, 'E_CONFLICT']);
    const resolved = events.filter((e) => e.type === 'APPROVAL_RESOLVED').at(-1)!;
    expect(resolved.data).toMatchObject({ id, decision: 'approve', approved: true, decided_by: 'human' });
  });

  it('reject with a reason: the reason goes back to the held call', async () => {
    const { decision, id } = hold();
    const res = await d.call('POST', `/v1/approvals/${id}`, { body: { decision: 'reject', reason: 'not /etc' } });
    expect(res.json).toMatchObject({ approved: false, reason: 'not /etc', code: 'E_REJECTED_BY_HUMAN' });
    expect(await decision).toMatchObject({ approved: false, code: 'E_REJECTED_BY_HUMAN', reason: 'not /etc' });
  });

  it('edited args are re-evaluated: DENY rejects, invalid args are 400 and stay pending, held args are approved', async () => {
    const denied = hold();
    const r1 = await d.call('POST', `/v1/approvals/${denied.id}`, {
      body: { decision: 'approve', args: { path: '/etc/motd', content: 'rm -rf /' } },
    });
    expect(r1.json).toMatchObject({ approved: false, edited: true, code: 'E_DENIED_BY_POLICY' });
    expect((await denied.decision).code).toBe('E_DENIED_BY_POLICY');

    const edited = hold();
    const bad = await d.call('POST', `/v1/approvals/${edited.id}`, {
      body: { decision: 'approve', args: { path: '/x', content: 3 } },
    });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'E_INVALID_ARGS']);
    expect(gate.get(edited.id)).toBeDefined();
    const ok = await d.call('POST', `/v1/approvals/${edited.id}`, {
      body: { decision: 'always', args: { path: '/etc/motd', content: 'ciao' } },
    });
    // an APPROVE hold is never covered by a standing approval: always approves it once
    expect(ok.json).toMatchObject({ approved: true, edited: true, session_approval: false });
    expect(ok.json.reason).toMatch(/^approved once: /);
    expect(await edited.decision).toMatchObject({ approved: true, args: { path: '/etc/motd', content: 'ciao' } });
  });

  it('errors: viewer 403 E_FORBIDDEN, unknown id 404 E_NOT_FOUND, bad body 400 E_INVALID_ARGS', async () => {
    const { decision, id } = hold(facts({ session_id: 'sess-err' }));
    const forbidden = await d.call('POST', `/v1/approvals/${id}`, { token: viewer, body: { decision: 'approve' } });
    expect([forbidden.status, forbidden.json.error.code]).toEqual([403, 'E_FORBIDDEN']);
    const missing = await d.call('POST', '/v1/approvals/01HZZZZZZZZZZZZZZZZZZZZZZZ', { body: { decision: 'approve' } });
    expect([missing.status, missing.json.error.code]).toEqual([404, 'E_NOT_FOUND']);
    for (const body of [
      { decision: 'maybe' },
      {},
      { decision: 'approve', extra: 1 },
      { decision: 'reject', args: {} },
    ]) {
      const bad = await d.call('POST', `/v1/approvals/${id}`, { body });
      expect([bad.status, bad.json.error.code], JSON.stringify(body)).toEqual([400, 'E_INVALID_ARGS']);
    }
    const abort = await d.call('POST', `/v1/approvals/${id}`, { token: operator, body: { decision: 'abort' } });
    expect(abort.json).toMatchObject({ decision: 'abort', approved: false, abort: 'stopping' });
    expect(await decision).toMatchObject({ approved: false, reason: 'aborted' });
    expect(gate.isAbortRequested('sess-err')).toBe(true);
  });
});

describe('without a HumanGate', () => {
  it('the list is empty and every id is E_NOT_FOUND', async () => {
    const plain = await startDaemon();
    try {
      expect((await plain.call('GET', '/v1/approvals')).json).toEqual({ approvals: [] });
      const res = await plain.call('POST', '/v1/approvals/abc', { body: { decision: 'approve' } });
      expect([res.status, res.json.error.code]).toEqual([404, 'E_NOT_FOUND']);
    } finally {
      await plain.close();
    }
  });
});

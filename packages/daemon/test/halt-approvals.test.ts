// The kill switch and held calls: a halt refuses every pending approval with E_HALTED (its caller
// was stopped), so a person answering afterwards finds nothing to approve.

import { afterEach, describe, expect, it } from 'vitest';

import { type Evaluation, HumanGate, type ToolCallFacts } from '@finger/firewall';

import { startDaemon, type TestDaemon } from './helpers.js';

const HELD: Evaluation = {
  decision_id: 'dec-halt',
  level: 'APPROVE',
  action: 'hold',
  layer: 'permission',
  matched_rules: [],
  reasons: ['APPROVE: test'],
};

function facts(session_id: string): ToolCallFacts {
  return {
    tool_id: 'fs.write',
    args: { path: 'notes.txt', content: 'x' },
    principal: { kind: 'agent', id: 'exec', roles: ['agent:executor'] },
    session_id,
    request_id: `req-${session_id}`,
    correlation_id: `corr-${session_id}`,
    direct: false,
    tool: { risk_level: 'medium', capability_level: 'L1', side_effects: true },
  };
}

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.close();
  d = undefined;
});

describe('halt with calls held for approval', () => {
  it('refuses every pending approval with E_HALTED; a later answer finds nothing', async () => {
    const gate = new HumanGate({});
    d = await startDaemon({}, { gate });
    const held = [gate.hold(HELD, facts('s1')), gate.hold(HELD, facts('s2'))];
    const ids = gate.list().map((a) => a.id);
    expect(ids).toHaveLength(2);

    const halt = await d.call('POST', '/v1/halt', { body: { reason: 'test' } });
    expect(halt.status).toBe(200);
    const decisions = await Promise.all(held);
    expect(decisions.map((x) => [x.approved, x.code])).toEqual([
      [false, 'E_HALTED'],
      [false, 'E_HALTED'],
    ]);
    expect(gate.list()).toEqual([]);
    const answer = await d.call('POST', `/v1/approvals/${ids[0]}/approve`, { body: {} });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe('E_NOT_FOUND');
    const listed = await d.call('GET', '/v1/approvals');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).not.toContain(ids[0]);
    expect(JSON.stringify(listed.json)).not.toContain(ids[1]);
  });
});

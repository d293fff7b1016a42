import { describe, expect, it } from 'vitest';

import { SessionState } from '../../src/gate/session-state.js';

const approval = { tool_id: 'fs.write', level: 'APPROVE' as const, principal: 'agent:a1', by: 'human:alice', at: 1 };

describe('SessionState: the storage seam of distributed mode', () => {
  it('reports every local change through onChange, with a JSON snapshot of the session', () => {
    const s = new SessionState(10);
    const changed: string[] = [];
    s.onChange = (id) => changed.push(id);
    s.approve('s1', approval);
    expect(s.snapshot('s1')).toEqual({ approvals: [approval], abort: null });
    s.abort('s1');
    expect(s.snapshot('s1')).toEqual({ approvals: [], abort: 'stopping' });
    s.reset('s1');
    expect(s.snapshot('s1')).toBeUndefined();
    expect(changed).toEqual(['s1', 's1', 's1']);
  });

  it('restores a remote snapshot without reporting it back, and forgets on undefined', () => {
    const s = new SessionState(10);
    const changed: string[] = [];
    s.onChange = (id) => changed.push(id);
    s.restore('s2', { approvals: [approval], abort: null });
    expect(s.approvalFor('s2', 'fs.write', 'CONFIRM', 'agent:a1')).toEqual(approval);
    s.restore('s2', { approvals: [], abort: 'stopped' });
    expect(s.abortPhase('s2')).toBe('stopped');
    expect(s.approvalFor('s2', 'fs.write', 'CONFIRM', 'agent:a1')).toBeUndefined();
    s.restore('s2', undefined);
    expect(s.abortPhase('s2')).toBeNull();
    expect(changed).toEqual([]);
  });

  it("covers only its caller; an approval without one (an older version's) covers nobody", () => {
    const s = new SessionState(10);
    s.restore('s4', { approvals: [approval, { ...approval, tool_id: 'fs.read', principal: undefined }], abort: null });
    expect(s.approvalFor('s4', 'fs.write', 'CONFIRM', 'agent:a2')).toBeUndefined();
    expect(s.approvalFor('s4', 'fs.read', 'CONFIRM', 'agent:a1')).toBeUndefined();
    s.approve('s4', { ...approval, principal: 'agent:a2', level: 'CONFIRM' });
    expect(s.approvalFor('s4', 'fs.write', 'CONFIRM', 'agent:a2')).toMatchObject({ principal: 'agent:a2' });
    expect(s.approvalFor('s4', 'fs.write', 'APPROVE', 'agent:a1')).toEqual(approval);
  });

  it('hands out copies: changing a snapshot does not change the session', () => {
    const s = new SessionState(10);
    s.approve('s3', approval);
    s.snapshot('s3')!.approvals[0]!.level = 'CONFIRM';
    expect(s.approvals('s3')[0]!.level).toBe('APPROVE');
  });
});

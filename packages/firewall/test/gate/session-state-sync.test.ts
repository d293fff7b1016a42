import { describe, expect, it } from 'vitest';

import { SessionState } from '../../src/gate/session-state.js';
import { type StandingApproval, StandingApprovals } from '../../src/gate/standing-approvals.js';

const standing: StandingApproval = {
  id: 'S1',
  tool_id: 'fs.write',
  shape: { kind: 'path', tool: 'fs.write', paths: ['/w/src/**'] },
  level: 'CONFIRM',
  principal: 'agent:a1',
  scope: 'session',
  session_id: 's1',
  by: 'alice',
  created_at: '2024-01-01T00:00:00.000Z',
  approval_id: 'A1',
};

describe('SessionState: the storage seam of distributed mode', () => {
  it('reports every local change through onChange, with a JSON snapshot of the session', () => {
    const s = new SessionState(10);
    const changed: string[] = [];
    s.onChange = (id) => changed.push(id);
    s.abort('s1');
    expect(s.snapshot('s1')).toEqual({ abort: 'stopping' });
    s.reset('s1');
    expect(s.snapshot('s1')).toBeUndefined();
    expect(changed).toEqual(['s1', 's1']);
  });

  it('restores a remote snapshot without reporting it back, and forgets on undefined', () => {
    const s = new SessionState(10);
    const changed: string[] = [];
    s.onChange = (id) => changed.push(id);
    s.restore('s2', { abort: 'stopped' });
    expect(s.abortPhase('s2')).toBe('stopped');
    s.restore('s2', undefined);
    expect(s.abortPhase('s2')).toBeNull();
    expect(changed).toEqual([]);
  });
});

describe('StandingApprovals: the storage seam of persistence and distributed mode', () => {
  it('reports add, revoke and a session reset through onChange; restore does not', () => {
    const s = new StandingApprovals();
    const changed: [string, string | undefined][] = [];
    s.onChange = (id, a) => changed.push([id, a?.id]);
    s.add(standing);
    s.add({ ...standing, id: 'S2', scope: 'persistent', session_id: undefined as never });
    s.forgetSession('s1');
    expect(s.list().map((a) => a.id)).toEqual(['S2']);
    expect(s.revoke('S2')?.id).toBe('S2');
    expect(s.revoke('S2')).toBeUndefined();
    s.restore('S3', { ...standing, id: 'S3' });
    expect(s.get('S3')?.id).toBe('S3');
    s.restore('S3', undefined);
    expect(s.size).toBe(0);
    expect(changed).toEqual([
      ['S1', 'S1'],
      ['S2', 'S2'],
      ['S1', undefined],
      ['S2', undefined],
    ]);
  });

  it('hands out copies, leaves expired ones out of the list and sweeps them', () => {
    const s = new StandingApprovals();
    s.add({ ...standing, expires_at: '2024-01-02T00:00:00.000Z' });
    s.get('S1')!.level = 'APPROVE';
    expect(s.get('S1')!.level).toBe('CONFIRM');
    const now = Date.parse('2024-01-03T00:00:00.000Z');
    expect(s.list({ now })).toEqual([]);
    expect(s.list({ now, expired: true })).toHaveLength(1);
    expect(s.sweep(now)).toBe(1);
    expect(s.size).toBe(0);
  });

  it('past its bound forgets session-scoped approvals first', () => {
    const s = new StandingApprovals(2);
    s.add({ ...standing, id: 'P', scope: 'persistent' });
    s.add({ ...standing, id: 'A' });
    s.add({ ...standing, id: 'B' });
    expect(s.list().map((a) => a.id)).toEqual(['P', 'B']);
  });
});

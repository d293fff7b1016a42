import { describe, expect, it } from 'vitest';

import { BehaviourMonitor } from '../../src/engine/behaviour-monitor.js';

const S = 'agent:a:s1';

/** Records `n` calls of (tool, fingerprint) at time `at`; returns the ids of the last call's findings. */
function calls(m: BehaviourMonitor, n: number, tool = 'shell.exec', fp = 'ls', at = 1000): string[] {
  let ids: string[] = [];
  for (let i = 0; i < n; i++) ids = m.behaviour(S, tool, fp, undefined, at, true).map((f) => f.id);
  return ids;
}

describe('BehaviourMonitor: the loop detector', () => {
  it('holds the same call past max_repeats within the window (APPROVE), and not before', () => {
    const m = new BehaviourMonitor();
    expect(calls(m, 5)).toEqual([]);
    const sixth = m.behaviour(S, 'shell.exec', 'ls', undefined, 1000, true);
    expect(sixth.map((f) => [f.id, f.level])).toEqual([['behaviour.loop', 'APPROVE']]);
    expect(sixth[0]!.reason).toContain('6 times');
  });

  it('counts only calls inside the window: older ones fall out', () => {
    const m = new BehaviourMonitor({ window_ms: 60_000 });
    calls(m, 5, 'shell.exec', 'ls', 0);
    expect(m.behaviour(S, 'shell.exec', 'ls', undefined, 60_001, true)).toEqual([]);
  });

  it('tells calls apart by fingerprint and counts the tool as a whole (CONFIRM past max_tool_calls)', () => {
    const m = new BehaviourMonitor();
    for (let i = 0; i < 20; i++) expect(m.behaviour(S, 'fs.read', `f${i % 4}`, undefined, 1000, true)).toEqual([]);
    const found = m.behaviour(S, 'fs.read', 'f9', undefined, 1000, true);
    expect(found.map((f) => [f.id, f.level])).toEqual([['behaviour.tool_repeat', 'CONFIRM']]);
  });

  it('alternating calls keep separate counts (the remembered last call is per tool)', () => {
    const m = new BehaviourMonitor({ max_tool_calls: 100 });
    for (let i = 0; i < 5; i++) {
      expect(m.behaviour(S, 'shell.exec', 'a', undefined, 1000, true)).toEqual([]);
      expect(m.behaviour(S, 'shell.exec', 'b', undefined, 1000, true)).toEqual([]);
      expect(m.behaviour(S, 'fs.read', 'a', undefined, 1000, true)).toEqual([]);
    }
    expect(calls(m, 1, 'shell.exec', 'a')).toEqual(['behaviour.loop']);
    expect(calls(m, 1, 'shell.exec', 'b')).toEqual(['behaviour.loop']);
    expect(calls(m, 1, 'fs.read', 'a')).toEqual(['behaviour.loop']);
  });

  it('record=false asks without counting', () => {
    const m = new BehaviourMonitor();
    calls(m, 5);
    expect(m.behaviour(S, 'shell.exec', 'ls', undefined, 1000, false).map((f) => f.id)).toEqual(['behaviour.loop']);
    expect(m.behaviour(S, 'shell.exec', 'ls', undefined, 1000, false).map((f) => f.id)).toEqual(['behaviour.loop']);
    const fresh = new BehaviourMonitor();
    expect(fresh.behaviour(S, 'shell.exec', 'ls', undefined, 1000, false)).toEqual([]);
    expect(calls(fresh, 5)).toEqual([]);
  });

  it('tightens the limit for a low-confidence call', () => {
    const m = new BehaviourMonitor();
    calls(m, 3);
    expect(m.behaviour(S, 'shell.exec', 'ls', 0.2, 1000, true).map((f) => f.id)).toEqual(['behaviour.loop']);
  });

  it('is bounded per session: the oldest call is forgotten, and a forgotten last call starts again from one', () => {
    const m = new BehaviourMonitor({ max_fingerprints: 2, max_tool_calls: 1000 });
    calls(m, 5, 'shell.exec', 'a');
    calls(m, 1, 'shell.exec', 'b');
    // a third distinct call evicts the oldest ("a")
    calls(m, 1, 'shell.exec', 'c');
    expect(calls(m, 5, 'shell.exec', 'a')).toEqual([]);
    // "c" was the last call of the tool when "b" and then "a" pushed it out
    calls(m, 5, 'shell.exec', 'c');
    calls(m, 1, 'shell.exec', 'd');
    calls(m, 1, 'shell.exec', 'e');
    expect(calls(m, 5, 'shell.exec', 'c')).toEqual([]);
    expect(calls(m, 1, 'shell.exec', 'c')).toEqual(['behaviour.loop']);
  });

  it('forgets in the order calls were first made, over many more distinct calls than it keeps', () => {
    const m = new BehaviourMonitor({ max_fingerprints: 3, max_tool_calls: 100_000 });
    for (let i = 0; i < 5000; i++) calls(m, 1, 'shell.exec', `c${i}`);
    // the last three are remembered (each seen once: five more make six), the one before is not
    for (const kept of ['c4997', 'c4998', 'c4999']) expect(calls(m, 5, 'shell.exec', kept)).toEqual(['behaviour.loop']);
    expect(calls(m, 5, 'shell.exec', 'c4996')).toEqual([]);
  });

  it("a call forgotten to make room for another tool's call starts again from one", () => {
    const m = new BehaviourMonitor({ max_fingerprints: 1, max_tool_calls: 1000 });
    calls(m, 5, 'shell.exec', 'a');
    calls(m, 1, 'fs.read', 'b');
    expect(calls(m, 5, 'shell.exec', 'a')).toEqual([]);
    expect(calls(m, 1, 'shell.exec', 'a')).toEqual(['behaviour.loop']);
  });

  it('is bounded in sessions: the least recently used session is forgotten', () => {
    const m = new BehaviourMonitor({ max_sessions: 2 });
    for (let i = 0; i < 5; i++) m.behaviour('s1', 't', 'x', undefined, 1000, true);
    m.behaviour('s2', 't', 'x', undefined, 1000, true);
    m.behaviour('s3', 't', 'x', undefined, 1000, true);
    expect(m.behaviour('s1', 't', 'x', undefined, 1000, true)).toEqual([]);
  });

  it('forget() drops a session', () => {
    const m = new BehaviourMonitor();
    calls(m, 5);
    m.forget(S);
    expect(calls(m, 1)).toEqual([]);
  });
});

describe('BehaviourMonitor: the metacognitive breaker', () => {
  it('NOTIFY for one low-confidence call, CONFIRM for a run; a confident call ends the run', () => {
    const m = new BehaviourMonitor();
    expect(m.metacognitive(S, undefined, true)).toBeNull();
    expect(m.metacognitive(S, 0.9, true)).toBeNull();
    expect(m.metacognitive(S, 0.1, true)?.level).toBe('NOTIFY');
    expect(m.metacognitive(S, 0.1, true)?.level).toBe('NOTIFY');
    expect(m.metacognitive(S, 0.1, true)?.id).toBe('metacognitive.low_confidence_run');
    expect(m.metacognitive(S, 0.9, true)).toBeNull();
    expect(m.metacognitive(S, 0.1, true)?.level).toBe('NOTIFY');
  });

  it('counts NaN and out-of-range confidence as low (fail safe)', () => {
    const m = new BehaviourMonitor();
    expect(m.isLow(Number.NaN)).toBe(true);
    expect(m.isLow(1.5)).toBe(true);
    expect(m.isLow(-0.1)).toBe(true);
    expect(m.isLow(0.5)).toBe(false);
  });
});

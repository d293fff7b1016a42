import { describe, expect, it } from 'vitest';

import {
  budgetTransition,
  cascadeTransition,
  denialSummary,
  denialTransition,
  MAX_DENIAL_NOTES,
  noteDenial,
  pushWindow,
  repeatTransition,
  SAFETY_DEFAULTS,
  stepTransition,
  type SystemSafetyEvent,
  type SystemSafetyState,
  systemTransition,
  timeTransition,
  type WindowState,
} from '../../src/index.js';

const EMPTY: WindowState = { recent: [], streak: 0 };

describe('repeated-failure breaker', () => {
  const cfg = { repeat_failure_threshold: 3 };
  const run = (events: { fingerprint: string; ok: boolean }[]) => {
    let state = { fingerprint: null as string | null, count: 0 };
    return events.map((e) => {
      const r = repeatTransition(state, e, cfg);
      state = r.state;
      return r.effect;
    });
  };
  const fail = (f = 'a') => ({ fingerprint: f, ok: false });

  it('alerts at exactly 3 identical failures in a row (not at 2) and terminates on the 4th', () => {
    expect(run([fail(), fail(), fail(), fail()])).toEqual(['none', 'none', 'alert', 'terminate']);
  });

  it('keeps terminating past the threshold', () => {
    expect(run([fail(), fail(), fail(), fail(), fail()]).at(-1)).toBe('terminate');
  });

  it('starts over after a success or a different fingerprint', () => {
    expect(run([fail(), fail(), { fingerprint: 'a', ok: true }, fail(), fail()])).toEqual([
      'none',
      'none',
      'none',
      'none',
      'none',
    ]);
    expect(run([fail(), fail(), fail('b'), fail(), fail(), fail()])).toEqual([
      'none',
      'none',
      'none',
      'none',
      'none',
      'alert',
    ]);
  });

  it('honours another threshold', () => {
    const r1 = repeatTransition({ fingerprint: null, count: 0 }, fail(), { repeat_failure_threshold: 1 });
    expect(r1.effect).toBe('alert');
    expect(repeatTransition(r1.state, fail(), { repeat_failure_threshold: 1 }).effect).toBe('terminate');
  });
});

describe('sliding windows', () => {
  it('keep at most `window` outcomes, newest last, and count the streak', () => {
    let s = EMPTY;
    for (const h of [true, false, true, true]) s = pushWindow(s, h, 3);
    expect(s).toEqual({ recent: [false, true, true], streak: 2 });
    s = pushWindow(s, false, 3);
    expect(s).toEqual({ recent: [true, true, false], streak: 0 });
  });

  it('do not mutate the previous state', () => {
    const s: WindowState = { recent: [true], streak: 1 };
    pushWindow(s, true, 5);
    expect(s).toEqual({ recent: [true], streak: 1 });
  });
});

describe('error-cascade breaker (≥ 8 errors in the last 10 operations)', () => {
  const cfg = { error_window: SAFETY_DEFAULTS.error_window, error_threshold: SAFETY_DEFAULTS.error_threshold };
  const feed = (outcomes: boolean[]) => {
    let s = EMPTY;
    return outcomes.map((error) => {
      const r = cascadeTransition(s, { error }, cfg);
      s = r.state;
      return r.tripped;
    });
  };

  it('does not trip at 7 errors and trips at exactly the 8th', () => {
    const t = feed([true, true, true, true, true, true, true, true]);
    expect(t.slice(0, 7).every((x) => !x)).toBe(true);
    expect(t[7]).toBe(true);
  });

  it('counts only the last 10 operations: 7 errors in the window, then an old one slides out', () => {
    // error, then 2 ok, then 7 errors: window of 10 holds 8 errors → trips on the last
    expect(feed([true, false, false, true, true, true, true, true, true, true]).at(-1)).toBe(true);
    // 1 error, 3 ok, then 7 errors: the first error slid out → only 7 in the last 10
    expect(feed([true, false, false, false, true, true, true, true, true, true, true]).at(-1)).toBe(false);
  });

  it('does not trip on a success even when the window is full of errors', () => {
    const s: WindowState = { recent: Array<boolean>(10).fill(true), streak: 10 };
    expect(cascadeTransition(s, { error: false }, cfg).tripped).toBe(false);
  });
});

describe('denial breaker (3 in a row or 10 of the last 50)', () => {
  const cfg = {
    denial_window: SAFETY_DEFAULTS.denial_window,
    denial_threshold: SAFETY_DEFAULTS.denial_threshold,
    denial_consecutive: SAFETY_DEFAULTS.denial_consecutive,
  };
  const feed = (decisions: boolean[]) => {
    let s = EMPTY;
    return decisions.map((denied) => {
      const r = denialTransition(s, { denied }, cfg);
      s = r.state;
      return r.tripped ? r.why : undefined;
    });
  };

  it('trips at exactly 3 consecutive denials, not at 2', () => {
    expect(feed([true, true, true])).toEqual([undefined, undefined, 'consecutive']);
  });

  it('an allowed call in between resets the streak', () => {
    expect(feed([true, true, false, true, true]).every((x) => x === undefined)).toBe(true);
  });

  it('trips at exactly the 10th denial of the last 50 decisions, not the 9th', () => {
    const d: boolean[] = [];
    for (let i = 0; i < 10; i++) d.push(true, false, false); // never 2 in a row
    const out = feed(d);
    const trips = out.map((x, i) => (x ? i : -1)).filter((i) => i >= 0);
    expect(trips[0]).toBe(27); // the 10th denial
    expect(out[27]).toBe('window');
    expect(out.slice(0, 27).every((x) => x === undefined)).toBe(true);
  });

  it('forgets denials older than the window', () => {
    const d: boolean[] = [];
    for (let i = 0; i < 9; i++) d.push(true, false, false, false, false, false); // 9 denials over 54 decisions
    d.push(true); // 10th denial, but the first has slid out of the last 50
    expect(feed(d).at(-1)).toBeUndefined();
  });
});

describe('denial notes and summary', () => {
  it('keep the newest MAX_DENIAL_NOTES', () => {
    let notes = noteDenial([], { tool: 't0', code: 'E_FORBIDDEN', at: 'x' });
    for (let i = 1; i < MAX_DENIAL_NOTES + 5; i++)
      notes = noteDenial(notes, { tool: `t${i}`, code: 'E_FORBIDDEN', at: 'x' });
    expect(notes).toHaveLength(MAX_DENIAL_NOTES);
    expect(notes.at(-1)?.tool).toBe(`t${MAX_DENIAL_NOTES + 4}`);
  });

  it('summarise by tool and code', () => {
    const n = (tool: string, code: string) => ({ tool, code, at: 'x' });
    expect(
      denialSummary([
        n('fs.write', 'E_DENIED_BY_POLICY'),
        n('shell.exec', 'E_REJECTED_BY_HUMAN'),
        n('fs.write', 'E_DENIED_BY_POLICY'),
      ]),
    ).toBe('3 denials: fs.write (E_DENIED_BY_POLICY) ×2, shell.exec (E_REJECTED_BY_HUMAN)');
  });
});

describe('budgets', () => {
  it('token budget: spending exactly the limit is allowed, one token more is not', () => {
    expect(budgetTransition(90, { estimate: 10 }, 100)).toEqual({ allowed: true, remaining: 10 });
    expect(budgetTransition(90, { estimate: 11 }, 100)).toEqual({ allowed: false, remaining: 10 });
    expect(budgetTransition(100, { estimate: 0 }, 100).allowed).toBe(true);
    expect(budgetTransition(101, { estimate: 0 }, 100)).toEqual({ allowed: false, remaining: 0 });
  });

  it('step budget: continue before the cap, final at it, pause after it', () => {
    const cfg = { max_steps: 3 };
    expect([1, 2, 3, 4, 5].map((s) => stepTransition(s, cfg))).toEqual([
      'continue',
      'continue',
      'final',
      'pause',
      'pause',
    ]);
  });

  it('time budget: spent only past max_task_ms', () => {
    expect(timeTransition(1000, 2000, { max_task_ms: 1000 })).toBe(false);
    expect(timeTransition(1000, 2001, { max_task_ms: 1000 })).toBe(true);
  });
});

describe('system lockout machine', () => {
  const all: SystemSafetyState[] = ['open', 'halting', 'halting_immediate', 'locked'];
  const events: SystemSafetyEvent[] = ['halt', 'halt_done', 'lock', 'unlock'];
  const table: Record<SystemSafetyState, Record<SystemSafetyEvent, string>> = {
    open: { halt: 'halting/graceful_halt', halt_done: 'open/none', lock: 'locked/none', unlock: 'open/none' },
    halting: {
      halt: 'halting_immediate/immediate_halt',
      halt_done: 'locked/none',
      lock: 'halting/none',
      unlock: 'halting/none',
    },
    halting_immediate: {
      halt: 'halting_immediate/none',
      halt_done: 'locked/none',
      lock: 'halting_immediate/none',
      unlock: 'halting_immediate/none',
    },
    locked: { halt: 'locked/none', halt_done: 'locked/none', lock: 'locked/none', unlock: 'open/renew_signal' },
  };

  it.each(all)('from %s, every event goes where the table says', (state) => {
    for (const ev of events) {
      const r = systemTransition(state, ev);
      expect(`${r.state}/${r.effect}`, `${state} --${ev}-->`).toBe(table[state][ev]);
    }
  });
});

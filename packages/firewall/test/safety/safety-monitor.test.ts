import { describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';

import type { AuditRecord, SafetyChange } from '../../src/index.js';
import { MemorySafetyStore, SafetyMonitor, SYSTEM_ALERT_REPEAT } from '../../src/index.js';

const ADMIN = { kind: 'human', id: 'root', roles: ['admin'] };
const OPERATOR = { kind: 'human', id: 'op', roles: ['operator'] };

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

async function setup(config: Record<string, number> = {}, store = new MemorySafetyStore()) {
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const audit: AuditRecord[] = [];
  const halts: string[] = [];
  let now = 1_000_000;
  const monitor = await SafetyMonitor.open({
    store,
    config,
    clock: { now: () => now },
    events: { emit: (type, _c, data) => events.push({ type, data: data ?? {} }) },
    audit: { append: (r) => Promise.resolve(audit.push(r)) },
    onHalt: (mode) => Promise.resolve(void halts.push(mode)),
  });
  return { monitor, store, events, audit, halts, advance: (ms: number) => (now += ms) };
}

describe('SafetyMonitor: repeated failure', () => {
  it('alerts on the 3rd identical failure and terminates on the 4th with events and audit in order', async () => {
    const { monitor, events, audit } = await setup();
    const fail = () => monitor.recordToolOutcome({ agent_id: 'a1', tool: 'fs.read', args: { path: '/x' }, ok: false });
    expect(await fail()).toEqual({});
    expect(await fail()).toEqual({});
    expect(await fail()).toEqual({ alert: SYSTEM_ALERT_REPEAT });
    expect(await codeOf(fail())).toBe('E_LOOP_DETECTED');
    expect(events.map((e) => [e.type, e.data.breaker, e.data.stage])).toEqual([
      ['BREAKER_TRIPPED', 'repeated_failure', 'alert'],
      ['BREAKER_TRIPPED', 'repeated_failure', 'terminate'],
    ]);
    expect(audit.map((a) => [a.type, a.decision])).toEqual([
      ['breaker.tripped', 'alert'],
      ['breaker.tripped', 'lockout'],
    ]);
    expect(() => monitor.assertOpen('a1')).toThrow(expect.objectContaining({ code: 'E_SAFETY_LOCKOUT' }));
    expect(() => monitor.assertOpen('a2')).not.toThrow();
  });

  it('canonical args: key order does not change the fingerprint', async () => {
    const { monitor } = await setup();
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: { x: 1, y: 2 }, ok: false });
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: { y: 2, x: 1 }, ok: false });
    expect(await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: { x: 1, y: 2 }, ok: false })).toEqual({
      alert: SYSTEM_ALERT_REPEAT,
    });
  });
});

describe('SafetyMonitor: error cascade and denials', () => {
  it('error cascade locks the agent at exactly error_threshold errors (ERROR_PAUSED)', async () => {
    const { monitor, events } = await setup({ error_window: 5, error_threshold: 3 });
    const op = (ok: boolean, i: number) => monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: { i }, ok });
    expect(await op(false, 1)).toEqual({});
    expect(await op(true, 2)).toEqual({});
    expect(await op(false, 3)).toEqual({});
    expect(monitor.isLocked('a')).toBe(false);
    expect(await op(false, 4)).toEqual({ tripped: 'error_cascade' });
    expect(monitor.isLocked('a')).toBe(true);
    expect(events.at(-1)?.data).toMatchObject({ breaker: 'error_cascade', state: 'ERROR_PAUSED', errors: 3 });
    expect((await monitor.state()).breakers.a?.status).toBe('error_paused');
  });

  it('denial breaker: 3 in a row stop the agent with a summary; an allowed call in between resets', async () => {
    const { monitor, events } = await setup();
    const deny = (tool = 'fs.write') => monitor.recordDenial({ agent_id: 'a', tool, code: 'E_DENIED_BY_POLICY' });
    expect(await deny()).toEqual({ tripped: false });
    expect(await deny()).toEqual({ tripped: false });
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 'fs.read', args: {}, ok: true });
    expect(await deny()).toEqual({ tripped: false });
    expect(await deny()).toEqual({ tripped: false });
    const r = await deny('shell.exec');
    expect(r.tripped).toBe(true);
    expect(r.summary).toBe('5 denials: fs.write (E_DENIED_BY_POLICY) ×4, shell.exec (E_DENIED_BY_POLICY)');
    expect(events.at(-1)?.data).toMatchObject({ breaker: 'denial', why: 'consecutive', locked: true });
    expect(await codeOf(() => monitor.assertOpen('a'))).toBe('E_SAFETY_LOCKOUT');
  });
});

describe('SafetyMonitor: budgets', () => {
  it('refuses the model call that would pass the agent budget, allows exactly the budget', async () => {
    const { monitor, events } = await setup({ max_token_usage: 1000 });
    await monitor.checkBudget({ agent_id: 'a', estimate_tokens: 1000 });
    await monitor.recordUsage({ agent_id: 'a', tokens: 900 });
    await monitor.checkBudget({ agent_id: 'a', estimate_tokens: 100 });
    expect(await codeOf(monitor.checkBudget({ agent_id: 'a', estimate_tokens: 101 }))).toBe('E_BUDGET_EXHAUSTED');
    expect(events.at(-1)).toMatchObject({ type: 'BREAKER_TRIPPED', data: { breaker: 'token_budget', scope: 'agent' } });
    // the agent budget is spent: the agent is locked until an admin unlocks (which resets it)
    expect(monitor.isLocked('a')).toBe(true);
    await monitor.unlock({ actor: ADMIN, agent_id: 'a' });
    await monitor.checkBudget({ agent_id: 'a', estimate_tokens: 1000 });
  });

  it('retireAgent: a finished task’s agent leaves the store (counter, breakers); its lockout stays', async () => {
    const { monitor, store } = await setup({ max_token_usage: 1000 });
    await monitor.recordUsage({ agent_id: 'done', tokens: 400 });
    await monitor.recordUsage({ agent_id: 'other', tokens: 10 });
    for (let i = 0; i < 3; i++)
      await monitor.recordDenial({ agent_id: 'done', tool: 'fs.write', code: 'E_DENIED_BY_POLICY' });
    expect(monitor.isLocked('done')).toBe(true);
    expect(Object.keys(await store.listBreakers())).toContain('done');
    await monitor.retireAgent('done');
    expect(await store.getCounter('agent_tokens:done')).toBe(0);
    expect(await store.getCounter('agent_tokens:other')).toBe(10);
    expect(Object.keys(await store.listBreakers())).not.toContain('done');
    // a lockout is an admin's to clear, whatever became of the task
    expect(monitor.isLocked('done')).toBe(true);
    expect((await store.getLockout('done'))?.breaker).toBe('denial');
  });

  it('nested tasks count against their parent: a child cannot spend past its parent', async () => {
    const { monitor } = await setup({ max_token_usage: 1_000_000 });
    monitor.beginTask({ task_id: 'parent', agent_id: 'a', max_tokens: 500 });
    monitor.beginTask({ task_id: 'child', agent_id: 'b', parent_task_id: 'parent', max_tokens: 10_000 });
    await monitor.recordUsage({ agent_id: 'a', task_id: 'parent', tokens: 300 });
    await monitor.recordUsage({ agent_id: 'b', task_id: 'child', tokens: 150 });
    await monitor.checkBudget({ agent_id: 'b', task_id: 'child', estimate_tokens: 50 });
    let err: unknown;
    await monitor.checkBudget({ agent_id: 'b', task_id: 'child', estimate_tokens: 51 }).catch((e) => (err = e));
    expect(err).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { scope: 'task', id: 'parent', used: 450 } });
    // implicit registration under a parent
    await monitor.recordUsage({ agent_id: 'c', task_id: 'child2', parent: 'parent', tokens: 50 });
    expect(await codeOf(monitor.checkBudget({ agent_id: 'a', task_id: 'parent', estimate_tokens: 1 }))).toBe(
      'E_BUDGET_EXHAUSTED',
    );
  });

  it('step budget: final at max_steps, PAUSED after it', async () => {
    const { monitor } = await setup({ max_steps: 2 });
    expect(await monitor.recordStep({ agent_id: 'a', task_id: 't' })).toEqual({ step: 1, final: false });
    expect(await monitor.recordStep({ agent_id: 'a', task_id: 't' })).toEqual({ step: 2, final: true });
    let err: unknown;
    await monitor.recordStep({ agent_id: 'a', task_id: 't' }).catch((e) => (err = e));
    expect(err).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { breaker: 'step_budget', state: 'PAUSED' } });
    await monitor.endTask('t');
    expect(await monitor.recordStep({ agent_id: 'a', task_id: 't' })).toEqual({ step: 1, final: false });
  });

  it('time budget: E_BUDGET_EXHAUSTED once the task ran past max_task_ms', async () => {
    const { monitor, advance } = await setup({ max_task_ms: 1000 });
    monitor.beginTask({ task_id: 't', agent_id: 'a' });
    advance(1000);
    await monitor.checkBudget({ agent_id: 'a', task_id: 't', estimate_tokens: 1 });
    advance(1);
    let err: unknown;
    await monitor.checkBudget({ agent_id: 'a', task_id: 't', estimate_tokens: 1 }).catch((e) => (err = e));
    expect(err).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { breaker: 'time_budget' } });
  });
});

describe('SafetyMonitor: halt and unlock', () => {
  it('halt aborts the signal, refuses work, persists a lockout; a second halt is immediate', async () => {
    const store = new MemorySafetyStore();
    const events: string[] = [];
    const audit: AuditRecord[] = [];
    let release!: () => void;
    const modes: string[] = [];
    const monitor = await SafetyMonitor.open({
      store,
      events: { emit: (t) => events.push(t) },
      audit: { append: (r) => Promise.resolve(audit.push(r)) },
      onHalt: (mode) => {
        modes.push(mode);
        return mode === 'graceful' ? new Promise<void>((r) => (release = r)) : Promise.resolve(release());
      },
    });
    const signal = monitor.haltSignal;
    const first = monitor.halt({ actor: OPERATOR });
    expect(signal.aborted).toBe(true);
    expect(await codeOf(() => monitor.assertOpen())).toBe('E_HALTED');
    expect(await codeOf(monitor.unlock({ actor: ADMIN }))).toBe('E_HALTED');
    const second = await monitor.halt({ actor: OPERATOR });
    expect(second).toEqual({ phase: 'immediate' });
    expect(await first).toEqual({ phase: 'graceful' });
    expect(modes).toEqual(['graceful', 'immediate']);
    expect(await codeOf(() => monitor.assertOpen())).toBe('E_SAFETY_LOCKOUT');
    expect(await store.getLockout()).toMatchObject({ cause: 'halt', by: 'human:op' });
    expect(events).toEqual(['HALTED', 'HALTED']);
    expect(audit.map((a) => a.type)).toEqual(['halt', 'halt']);
    expect(await monitor.halt({ actor: OPERATOR })).toEqual({ phase: 'locked' });
  });

  it('halts while the store is unreachable, and state() answers from what this daemon knows', async () => {
    const store = new MemorySafetyStore();
    const { monitor, events } = await setup({}, store);
    const down = () => Promise.reject(new FingerError('E_STORE_UNAVAILABLE', 'redis is unavailable (safety.hset)'));
    store.setLockout = down;
    store.listBreakers = down;
    expect(await monitor.halt({ actor: ADMIN })).toEqual({ phase: 'graceful' });
    expect(await codeOf(() => monitor.assertOpen())).toBe('E_SAFETY_LOCKOUT');
    expect(events.map((e) => e.type)).toEqual(['HALTED']);
    const state = await monitor.state();
    expect(state).toMatchObject({
      system: 'locked',
      lockout: { cause: 'halt', by: 'human:root' },
      store_error: 'redis is unavailable (safety.hset)',
    });
  });

  it('only an admin unlocks; unlock renews the halt signal, emits UNLOCKED and audits who', async () => {
    const { monitor, events, audit, store } = await setup();
    await monitor.halt({ actor: ADMIN });
    expect(await codeOf(monitor.unlock({ actor: OPERATOR }))).toBe('E_FORBIDDEN');
    expect(monitor.haltSignal.aborted).toBe(true);
    expect(await monitor.unlock({ actor: ADMIN })).toMatchObject({ unlocked: true, lockout: { cause: 'halt' } });
    expect(monitor.haltSignal.aborted).toBe(false);
    expect(() => monitor.assertOpen()).not.toThrow();
    expect(await store.getLockout()).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'UNLOCKED', data: { by: 'human:root' } });
    expect(audit.at(-1)).toMatchObject({ type: 'unlock', actor: { kind: 'human', id: 'root' } });
    expect(await monitor.unlock({ actor: ADMIN })).toEqual({ unlocked: false });
  });

  it('unlock opens a locked system even when the store lost its record, and still audits who', async () => {
    const { monitor, store, audit } = await setup();
    await monitor.halt({ actor: ADMIN });
    (store as unknown as { lockouts: Map<string, unknown> }).lockouts.clear(); // lost, without a broadcast
    expect(await monitor.unlock({ actor: ADMIN })).toMatchObject({ unlocked: true, lockout: { cause: 'halt' } });
    expect(monitor.isLocked()).toBe(false);
    expect(audit.at(-1)).toMatchObject({ type: 'unlock', actor: { id: 'root' } });
  });

  it('a persisted system lockout locks a new monitor at once (restart)', async () => {
    const store = new MemorySafetyStore();
    const first = await setup({}, store);
    await first.monitor.halt({ actor: ADMIN });
    first.monitor.close();
    const second = await setup({}, store);
    expect(second.monitor.haltSignal.aborted).toBe(true);
    expect(await codeOf(() => second.monitor.assertOpen())).toBe('E_SAFETY_LOCKOUT');
    expect((await second.monitor.state()).system).toBe('locked');
  });

  it('a halt made by another daemon on the shared store halts this one too; its unlock reopens', async () => {
    const store = new MemorySafetyStore();
    const a = await setup({}, store);
    const b = await setup({}, store);
    await a.monitor.halt({ actor: ADMIN });
    expect(b.monitor.haltSignal.aborted).toBe(true);
    await Promise.resolve();
    expect(b.halts).toEqual(['graceful']);
    expect(b.monitor.isLocked()).toBe(true);
    await a.monitor.unlock({ actor: ADMIN });
    expect(b.monitor.isLocked()).toBe(false);
    expect(b.monitor.haltSignal.aborted).toBe(false);
  });

  it('the store broadcasts lockout changes', async () => {
    const store = new MemorySafetyStore();
    const seen: SafetyChange['type'][] = [];
    store.subscribe((c) => seen.push(c.type));
    const { monitor } = await setup({ denial_consecutive: 1 }, store);
    await monitor.recordDenial({ agent_id: 'a', tool: 't', code: 'E_FORBIDDEN' });
    await monitor.unlock({ actor: ADMIN, agent_id: 'a' });
    expect(seen).toEqual(['breakers', 'lockout_set', 'lockout_cleared', 'breakers']);
  });
});

describe('SafetyMonitor: breaker state cache', () => {
  it("a clean agent's success writes nothing; a failure is written through to the store", async () => {
    const store = new MemorySafetyStore();
    const { monitor } = await setup({}, store);
    let writes = 0;
    store.subscribe((c) => {
      if (c.type === 'breakers') writes++;
    });
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: {}, ok: true });
    expect(monitor.recordSuccess('a')).toBeUndefined();
    expect(monitor.recordSuccess('a')).toBeUndefined();
    await Promise.resolve();
    const afterClean = writes;
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: { x: 1 }, ok: false });
    await new Promise((r) => setTimeout(r, 0));
    expect(writes).toBe(afterClean + 1);
    expect((await store.getBreakers('a'))?.repeat.count).toBe(1);
  });

  it('a new monitor on the same store continues the counts (restart)', async () => {
    const store = new MemorySafetyStore();
    const first = await setup({}, store);
    const fail = (m: SafetyMonitor) =>
      m.recordToolOutcome({ agent_id: 'a', tool: 'fs.read', args: { path: '/x' }, ok: false });
    await fail(first.monitor);
    await fail(first.monitor);
    first.monitor.close();
    const second = await setup({}, store);
    expect(await fail(second.monitor)).toEqual({ alert: SYSTEM_ALERT_REPEAT });
  });

  it('a success after the alert starts the repeated-failure count over', async () => {
    const { monitor } = await setup();
    const fail = () => monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: {}, ok: false });
    await fail();
    await fail();
    expect(await fail()).toEqual({ alert: SYSTEM_ALERT_REPEAT });
    await monitor.recordToolOutcome({ agent_id: 'a', tool: 't', args: {}, ok: true });
    expect(await fail()).toEqual({});
    expect(monitor.isLocked('a')).toBe(false);
  });
});

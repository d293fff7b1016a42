import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import type { ModuleRuntime, RuntimeOptions, ToolCallContext } from '@finger/hub';
import { createRuntime, MessageHub } from '@finger/hub';
import type { ModuleManifest, Principal } from '@finger/protocol';

import {
  createGrantInterceptor,
  createSafetyInterceptor,
  MemorySafetyStore,
  SafetyMonitor,
  SYSTEM_ALERT_REPEAT,
  ToolGrantProfile,
} from '../../src/index.js';

const PYWORKER = fileURLToPath(new URL('../../../../modules/pyworker/', import.meta.url));
const ADMIN: Principal = { kind: 'human', id: 'root', roles: ['admin'] };
const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(200)));
});

async function codeOf(p: Promise<unknown>): Promise<{ code?: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; details?: Record<string, unknown> };
  }
  return {};
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A real hub with the real pyworker (stdio child) and an in-process `slow` module (concurrency 1). */
async function setup(config: Record<string, number> = {}) {
  const started: string[] = [];
  const hub = new MessageHub({
    createRuntime: (o: RuntimeOptions): ModuleRuntime => {
      if (o.manifest.id !== 'slow') return createRuntime(o);
      return {
        type: 'object',
        start: async () => undefined,
        invoke: (_tool, args, ctx: ToolCallContext) =>
          new Promise((_resolve, reject) => {
            started.push(String((args as { n: number }).n));
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
          }),
        cancel: () => undefined,
        health: async () => ({ ok: true }),
        close: async () => undefined,
      };
    },
  });
  hubs.push(hub);
  const monitor = await SafetyMonitor.open({
    store: new MemorySafetyStore(),
    config,
    events: hub.events,
    onHalt: async (mode, error, grace) => void (await hub.abortAll(error, mode === 'graceful' ? grace : 0)),
  });
  hub.use(createSafetyInterceptor(monitor));
  hub.use(createGrantInterceptor(new ToolGrantProfile({ extra: { worker: ['pyworker.*'] } })));
  const py = JSON.parse(readFileSync(`${PYWORKER}module.json`, 'utf8')) as ModuleManifest;
  await hub.registry.register({ ...py, concurrency: 3 }, { baseDir: PYWORKER });
  const slow: ModuleManifest = {
    id: 'slow',
    name: 'slow',
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry: './none.js' },
    tools: [{ name: 'wait', description: 'waits for its cancel' }],
    concurrency: 1,
  };
  await hub.registry.register(slow, { baseDir: '.' });
  const pid = (hub.registry.runtimeOf('pyworker') as unknown as { stats(): { pid?: number } }).stats().pid!;
  return { hub, monitor, started, pid };
}

describe('safety interceptor + hub.abortAll (real pyworker child)', () => {
  it('halt: every caller gets E_HALTED, queued calls never start, the stuck stdio child is killed', async () => {
    const { hub, monitor, started, pid } = await setup({ halt_grace_ms: 300 });
    const req = (target: string, payload: unknown) =>
      codeOf(hub.request({ target, payload, source: ADMIN, timeout_ms: 120_000 }));
    const calls = [
      req('pyworker.sleep', { ms: 60_000 }),
      req('pyworker.ignore_cancel_sleep', { ms: 60_000 }),
      req('pyworker.sleep', { ms: 60_000 }),
      ...Array.from({ length: 20 }, (_, n) => req('slow.wait', { n })),
    ];
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toEqual(['0']);
    expect(hub.stats().inflight).toBe(23);
    const halted = await monitor.halt({ actor: ADMIN });
    expect(halted.phase).toBe('graceful');
    const results = await Promise.all(calls);
    expect(results.map((r) => r.code)).toEqual(Array<string>(23).fill('E_HALTED'));
    expect(started).toEqual(['0']);
    expect(alive(pid)).toBe(false);
    expect(await codeOf(hub.request({ target: 'pyworker.echo', payload: {}, source: ADMIN }))).toMatchObject({
      code: 'E_SAFETY_LOCKOUT',
    });
    await monitor.unlock({ actor: ADMIN });
    expect(started).toEqual(['0']);
  });

  it('repeated failure through the hub: alert on the 3rd, E_LOOP_DETECTED on the 4th', async () => {
    const { hub } = await setup();
    const bot: Principal = { kind: 'agent', id: 'bot', roles: ['agent:worker'] };
    const fail = () =>
      codeOf(hub.request({ target: 'pyworker.fail', payload: { code: 'E_MODULE_ERROR', message: 'x' }, source: bot }));
    expect((await fail()).details?.system_alert).toBeUndefined();
    expect((await fail()).details?.system_alert).toBeUndefined();
    const third = await fail();
    expect(third.code).toBe('E_MODULE_ERROR');
    expect(third.details?.system_alert).toBe(SYSTEM_ALERT_REPEAT);
    expect((await fail()).code).toBe('E_LOOP_DETECTED');
    expect((await codeOf(hub.request({ target: 'pyworker.echo', payload: {}, source: bot }))).code).toBe(
      'E_SAFETY_LOCKOUT',
    );
  });

  it('error cascade trips at exactly error_threshold errors in the window, not one earlier', async () => {
    const { hub, monitor } = await setup({ error_window: 10, error_threshold: 8 });
    const bot: Principal = { kind: 'agent', id: 'bot', roles: ['agent:worker'] };
    const fail = (i: number) =>
      codeOf(
        hub.request({ target: 'pyworker.fail', payload: { code: 'E_MODULE_ERROR', message: `m${i}` }, source: bot }),
      );
    expect(await hub.request({ target: 'pyworker.echo', payload: { a: 1 }, source: bot })).toEqual({ a: 1 });
    for (let i = 0; i < 7; i++) expect((await fail(i)).code).toBe('E_MODULE_ERROR');
    expect(monitor.isLocked('bot')).toBe(false);
    expect(await hub.request({ target: 'pyworker.echo', payload: { a: 2 }, source: bot })).toEqual({ a: 2 });
    expect((await fail(7)).code).toBe('E_MODULE_ERROR');
    expect(monitor.isLocked('bot')).toBe(true);
    expect((await codeOf(hub.request({ target: 'pyworker.echo', payload: {}, source: bot }))).code).toBe(
      'E_SAFETY_LOCKOUT',
    );
    // other agents and people are not affected by one agent's lockout
    const other: Principal = { kind: 'agent', id: 'bot2', roles: ['agent:worker'] };
    expect(await hub.request({ target: 'pyworker.echo', payload: {}, source: other })).toEqual({});
  });

  it('denial breaker trips at exactly denial_consecutive grant denials (E_FORBIDDEN)', async () => {
    const { hub, monitor } = await setup();
    const bot: Principal = { kind: 'agent', id: 'nogrant', roles: ['agent:reader'] };
    const call = () => codeOf(hub.request({ target: 'slow.wait', payload: { n: 1 }, source: bot }));
    expect((await call()).code).toBe('E_FORBIDDEN');
    expect((await call()).code).toBe('E_FORBIDDEN');
    expect(monitor.isLocked('nogrant')).toBe(false);
    expect((await call()).code).toBe('E_FORBIDDEN');
    expect(monitor.isLocked('nogrant')).toBe(true);
    expect((await call()).code).toBe('E_SAFETY_LOCKOUT');
    const st = await monitor.state();
    expect(st.agents_locked[0]).toMatchObject({ agent_id: 'nogrant', breaker: 'denial' });
    expect(st.agents_locked[0]?.reason).toBe('3 denials: slow.wait (E_FORBIDDEN) ×3');
  });

  it("an agent's call held in the chain (e.g. for approval) fails with E_HALTED as soon as a halt starts", async () => {
    const { hub, monitor } = await setup({ halt_grace_ms: 0 });
    hub.use(() => new Promise(() => undefined)); // holds every call, like a pending approval
    const bot: Principal = { kind: 'agent', id: 'held-bot', roles: ['agent:worker'] };
    const held = codeOf(hub.request({ target: 'pyworker.echo', payload: {}, source: bot, timeout_ms: 120_000 }));
    await new Promise((r) => setTimeout(r, 20));
    await monitor.halt({ actor: ADMIN });
    expect((await held).code).toBe('E_HALTED');
  });
});

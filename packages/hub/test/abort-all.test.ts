import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';

import { MessageHub, type ModuleRuntime, type RuntimeOptions, type ToolCallContext } from '../src/index.js';
import { human, manifest, ObjectRuntime } from './helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(50)));
});

class KillableRuntime extends ObjectRuntime {
  kills = 0;
  kill(): Promise<void> {
    this.kills++;
    return Promise.resolve();
  }
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

const HALTED = new FingerError('E_HALTED', 'halted');

async function setup() {
  const started: string[] = [];
  let runtime!: KillableRuntime;
  const hub = new MessageHub({
    createRuntime: (_o: RuntimeOptions): ModuleRuntime => {
      runtime = new KillableRuntime({
        tools: {
          // answers its cancel with its own error
          hang: (_a: unknown, ctx: ToolCallContext) =>
            new Promise((_r, reject) => {
              started.push('hang');
              ctx.signal.addEventListener('abort', () => reject(new FingerError('E_MODULE_ERROR', 'cancelled')));
            }),
          // ignores its cancel
          stuck: () => new Promise(() => void started.push('stuck')),
          count: (a: unknown) => {
            started.push(`count${(a as { n: number }).n}`);
            return { ok: true };
          },
        },
      });
      return runtime;
    },
  });
  hubs.push(hub);
  await hub.registry.register(
    manifest('w', [{ name: 'hang' }, { name: 'stuck' }, { name: 'count' }], { concurrency: 2 }),
    {
      baseDir: '.',
    },
  );
  return { hub, started, runtime: () => runtime };
}

describe('MessageHub.abortAll (kill switch)', () => {
  it('queued calls fail with the error and never start; a started call gets its cancel', async () => {
    const { hub, started } = await setup();
    const hang = codeOf(hub.request({ target: 'w.hang', payload: {}, source: human }));
    const stuck = codeOf(hub.request({ target: 'w.stuck', payload: {}, source: human }));
    const queued = [1, 2, 3].map((n) => codeOf(hub.request({ target: 'w.count', payload: { n }, source: human })));
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toEqual(['hang', 'stuck']);
    const r = await hub.abortAll(HALTED, 100);
    expect(r).toEqual({ queued: 3, cancelled: 2, aborted: 1, killed: ['w'] });
    expect(await Promise.all(queued)).toEqual(['E_HALTED', 'E_HALTED', 'E_HALTED']);
    expect(await hang).toBe('E_HALTED'); // answered its cancel within the grace: the caller still gets E_HALTED
    expect(await stuck).toBe('E_HALTED'); // did not: failed and its runtime killed
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toEqual(['hang', 'stuck']);
    expect(hub.stats().inflight).toBe(0);
  });

  it('without a grace, running calls are failed and killed at once', async () => {
    const { hub, runtime } = await setup();
    const stuck = codeOf(hub.request({ target: 'w.stuck', payload: {}, source: human }));
    await new Promise((r) => setTimeout(r, 10));
    expect(await hub.abortAll(HALTED, 0)).toMatchObject({ cancelled: 1, aborted: 1, killed: ['w'] });
    expect(await stuck).toBe('E_HALTED');
    expect(runtime().kills).toBe(1);
    expect(runtime().cancelled).toHaveLength(1);
  });

  it('a call still inside the interceptor chain fails when it reaches dispatch; later calls run', async () => {
    const { hub, started } = await setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    hub.use(async (call, next) => {
      if ((call.envelope.payload as { n?: number }).n === 1) await gate;
      return next();
    });
    const held = codeOf(hub.request({ target: 'w.count', payload: { n: 1 }, source: human }));
    await new Promise((r) => setTimeout(r, 10));
    await hub.abortAll(HALTED, 0);
    release();
    expect(await held).toBe('E_HALTED');
    expect(await hub.request({ target: 'w.count', payload: { n: 2 }, source: human })).toEqual({ ok: true });
    expect(started).toEqual(['count2']);
  });
});

// Tracked calls (a caller's request_id) on the in-memory request store: exactly once per id while
// running, after completion and until the idempotency window has passed — through the store's
// synchronous path, with and without interceptors.

import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';
import { ManualClock } from '@finger/testkit/core';

import { type InProcessModule, InProcessTransport, type Interceptor, MessageHub } from '../src/index.js';
import { human, manifest, objectRuntimes, rejectionOf } from './helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

const WINDOW = 60_000;

async function makeHub(mods: Record<string, InProcessModule>, interceptors: Interceptor[] = [], clock?: ManualClock) {
  const hub = new MessageHub({
    createRuntime: objectRuntimes(mods, {}),
    transport: new InProcessTransport(),
    limits: { lease_sweep_ms: 5, idempotency_window_ms: WINDOW },
    interceptors,
    ...(clock ? { clock } : {}),
  });
  hubs.push(hub);
  for (const id of Object.keys(mods))
    await hub.registry.register(
      manifest(
        id,
        Object.keys(mods[id]!.tools).map((name) => ({ name })),
      ),
      {
        baseDir: '.',
      },
    );
  return hub;
}

/** A module whose tool counts its runs and finishes only when released. */
function gated() {
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const mod: InProcessModule = {
    tools: {
      run: async (args) => {
        runs++;
        await gate;
        return { runs, args };
      },
    },
  };
  return { mod, runs: () => runs, release: () => release() };
}

const passThrough: Interceptor = (_call, next) => next();

describe.each([
  ['without interceptors', [] as Interceptor[]],
  ['through an interceptor', [passThrough]],
])('tracked calls on the in-memory store (%s)', (_name, interceptors) => {
  it('runs once for duplicates while in flight, answers later ones from the record, and runs again after the window', async () => {
    const clock = new ManualClock();
    const g = gated();
    const hub = await makeHub({ g: g.mod }, interceptors, clock);
    const call = () => hub.request({ target: 'g.run', payload: { n: 1 }, source: human, request_id: 'r-1' });
    const first = call();
    const dupes = Array.from({ length: 20 }, call);
    g.release();
    const replies = await Promise.all([first, ...dupes]);
    expect(g.runs()).toBe(1);
    expect(replies.every((r) => JSON.stringify(r) === JSON.stringify({ runs: 1, args: { n: 1 } }))).toBe(true);
    expect(hub.stats()).toMatchObject({ idempotent_joins: 20, idempotent_hits: 0 });

    // completed: answered from the record, no run, until the window has passed
    clock.advance(WINDOW - 1);
    expect(await call()).toEqual({ runs: 1, args: { n: 1 } });
    expect(g.runs()).toBe(1);
    expect(hub.stats().idempotent_hits).toBe(1);
    expect(await hub.getRequest('r-1')).toMatchObject({ request_id: 'r-1', target: 'g.run', status: 'succeeded' });
    expect(await hub.getRequest('r-1')).not.toHaveProperty('args_digest');

    clock.advance(1);
    expect(await hub.getRequest('r-1')).toBeUndefined();
    expect(await call()).toEqual({ runs: 2, args: { n: 1 } });
    expect(g.runs()).toBe(2);
  });

  it("keeps a module's failure for duplicates (no second run, same code)", async () => {
    let runs = 0;
    const hub = await makeHub(
      {
        f: {
          tools: {
            boom: () => {
              runs++;
              throw new FingerError('E_MODULE_ERROR', 'boom');
            },
          },
        },
      },
      interceptors,
    );
    const call = () => hub.request({ target: 'f.boom', payload: {}, source: human, request_id: 'r-f' });
    expect((await rejectionOf(call())).code).toBe('E_MODULE_ERROR');
    expect((await rejectionOf(call())).code).toBe('E_MODULE_ERROR');
    expect(runs).toBe(1);
    expect(await hub.getRequest('r-f')).toMatchObject({ status: 'failed', error: { code: 'E_MODULE_ERROR' } });
  });

  it('refuses another caller, target or (long) arguments with E_CONFLICT while running and after', async () => {
    const g = gated();
    const hub = await makeHub({ g: g.mod, h: { tools: { t: () => 'h' } } }, interceptors);
    const long = { text: 'x'.repeat(500) }; // past the inline key: compared by digest
    const first = hub.request({ target: 'g.run', payload: long, source: human, request_id: 'r-c' });
    const same = hub.request({ target: 'g.run', payload: { text: 'x'.repeat(500) }, source: human, request_id: 'r-c' });
    const conflicts = async () => {
      const other = await rejectionOf(
        hub.request({ target: 'g.run', payload: { text: 'y'.repeat(500) }, source: human, request_id: 'r-c' }),
      );
      expect(other).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'other_args' } });
      const caller = await rejectionOf(
        hub.request({ target: 'g.run', payload: long, source: { ...human, id: 'someone-else' }, request_id: 'r-c' }),
      );
      expect(caller).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'other_caller' } });
      const target = await rejectionOf(hub.request({ target: 'h.t', payload: long, source: human, request_id: 'r-c' }));
      expect(target).toMatchObject({ code: 'E_CONFLICT', details: { target: 'g.run' } });
    };
    await conflicts();
    g.release();
    expect(await first).toEqual(await same);
    await conflicts();
    expect(g.runs()).toBe(1);
  });

  it('forgets the id of a blocking call refused before its module (a retry runs), keeps a dispatched one', async () => {
    let allow = false;
    let runs = 0;
    const gatekeeper: Interceptor = (call, next) =>
      allow ? next() : Promise.reject(new FingerError('E_FORBIDDEN', `no ${call.envelope.target}`));
    const hub = await makeHub({ c: { tools: { t: () => ++runs } } }, [...interceptors, gatekeeper]);
    const call = () => hub.request({ target: 'c.t', payload: {}, source: human, request_id: 'r-d' });
    expect((await rejectionOf(call())).code).toBe('E_FORBIDDEN');
    expect(await hub.getRequest('r-d')).toBeUndefined();
    allow = true;
    expect(await call()).toBe(1);
    expect(await call()).toBe(1);
    expect(runs).toBe(1);

    // an unknown target is refused before dispatch too: forgotten for a blocking call
    expect(
      (await rejectionOf(hub.request({ target: 'nope', payload: {}, source: human, request_id: 'r-n' }))).code,
    ).toBe('E_NO_TARGET');
    expect(await hub.getRequest('r-n')).toBeUndefined();

    // a non-blocking dispatch keeps its refusal as a failed record
    allow = false;
    const d = await hub.dispatch({ target: 'c.t', payload: {}, source: human, request_id: 'r-nb' });
    expect((await rejectionOf(d.done)).code).toBe('E_FORBIDDEN');
    expect(await hub.getRequest('r-nb')).toMatchObject({ status: 'failed', error: { code: 'E_FORBIDDEN' } });
  });

  it('records a lease expiry of a tracked call for its duplicates', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const hub = await makeHub(
      {
        s: {
          tools: {
            slow: () => {
              runs++;
              return new Promise(() => undefined);
            },
          },
        },
      },
      interceptors,
      clock,
    );
    const call = () =>
      hub.request({ target: 's.slow', payload: {}, source: human, request_id: 'r-s', timeout_ms: 1_000 });
    const first = rejectionOf(call());
    await Promise.resolve();
    clock.advance(60_000);
    const e = await first;
    expect(['E_LEASE_EXPIRED', 'E_TIMEOUT']).toContain(e.code);
    expect((await rejectionOf(call())).code).toBe(e.code);
    expect(runs).toBe(1);
  });
});

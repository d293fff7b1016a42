// Tracked calls (a caller's request_id) on the in-memory request store: exactly once per id while
// running, after completion and until the idempotency window has passed — through the store's
// synchronous path, with and without interceptors.

import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';
import { ManualClock } from '@finger/testkit/core';

import {
  type InProcessModule,
  InProcessTransport,
  type Interceptor,
  MessageHub,
  type RequestRecord,
  type RequestStore,
} from '../src/index.js';
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

  it('lazy argument keys: a duplicate with other (short) arguments is refused with the same E_CONFLICT, running and finished', async () => {
    const g = gated();
    const hub = await makeHub({ g: g.mod }, interceptors);
    const call = (n: number) => hub.request({ target: 'g.run', payload: { n }, source: human, request_id: 'r-o' });
    const first = call(1);
    const refused = async () => {
      const e = await rejectionOf(call(2));
      expect(e).toBeInstanceOf(FingerError);
      expect({ code: e.code, message: e.message, details: e.details }).toEqual({
        code: 'E_CONFLICT',
        message:
          'request_id "r-o" was already used with other arguments for "g.run"; use a new request_id for a new call',
        details: { request_id: 'r-o', target: 'g.run', reason: 'other_args' },
      });
    };
    await refused();
    const same = hub.request({ target: 'g.run', payload: { n: 1 }, source: human, request_id: 'r-o' });
    g.release();
    expect(await first).toEqual({ runs: 1, args: { n: 1 } });
    expect(await same).toEqual({ runs: 1, args: { n: 1 } });
    await refused();
    expect(await call(1)).toEqual({ runs: 1, args: { n: 1 } });
    expect(g.runs()).toBe(1);
  });

  it('keys the first call’s arguments only when a duplicate comes (not per call, not for getRequest)', async () => {
    let reads = 0;
    const payload = {
      toJSON() {
        reads++;
        return { b: 2, a: 1 };
      },
    };
    const hub = await makeHub({ e: { tools: { t: () => 'ok' } } }, interceptors);
    const call = (p: unknown) => hub.request({ target: 'e.t', payload: p, source: human, request_id: 'r-k' });
    expect(await call(payload)).toBe('ok');
    expect(await hub.getRequest('r-k')).toMatchObject({ status: 'succeeded', result: 'ok' });
    expect(reads).toBe(0);
    // a duplicate: the first call's payload is keyed once, and compared by canonical JSON
    expect(await call({ a: 1, b: 2 })).toBe('ok');
    expect(await call({ a: 1, b: 2 })).toBe('ok');
    expect(reads).toBe(1);
    expect((await rejectionOf(call({ a: 1, b: 3 }))).details).toEqual({
      request_id: 'r-k',
      target: 'e.t',
      reason: 'other_args',
    });
    expect(reads).toBe(1);
  });

  it('compares the arguments as they are when the first duplicate comes: a payload changed in place before is compared as changed, after is not', async () => {
    const hub = await makeHub({ e: { tools: { t: (a) => ({ ...(a as object) }) } } }, interceptors);
    const call = (id: string, p: unknown) => hub.request({ target: 'e.t', payload: p, source: human, request_id: id });

    // changed before any duplicate came: the record stands for what the payload holds now
    const before = { n: 1 };
    expect(await call('r-m1', before)).toEqual({ n: 1 });
    before.n = 2;
    expect((await rejectionOf(call('r-m1', { n: 1 }))).details).toEqual({
      request_id: 'r-m1',
      target: 'e.t',
      reason: 'other_args',
    });

    // changed after a duplicate came: the key was made then and stays
    const after = { n: 1 };
    expect(await call('r-m2', after)).toEqual({ n: 1 });
    expect(await call('r-m2', { n: 1 })).toEqual({ n: 1 });
    after.n = 2;
    expect(await call('r-m2', { n: 1 })).toEqual({ n: 1 });
    expect((await rejectionOf(call('r-m2', { n: 2 }))).code).toBe('E_CONFLICT');
  });

  it('runs a call whose arguments have no JSON form once; a duplicate of it is refused (E_CONFLICT other_args)', async () => {
    let runs = 0;
    const hub = await makeHub({ e: { tools: { t: () => ++runs } } }, interceptors);
    const call = () => hub.request({ target: 'e.t', payload: { big: 10n }, source: human, request_id: 'r-b' });
    expect(await call()).toBe(1);
    expect((await rejectionOf(call())).details).toEqual({ request_id: 'r-b', target: 'e.t', reason: 'other_args' });
    expect(await hub.getRequest('r-b')).toMatchObject({ status: 'succeeded', result: 1 });
    expect(runs).toBe(1);
  });

  it('reports created_at and finished_at as the clock read at the call and at its outcome', async () => {
    const clock = new ManualClock();
    const g = gated();
    const hub = await makeHub({ g: g.mod }, interceptors, clock);
    const started = clock.now();
    const first = hub.request({
      target: 'g.run',
      payload: {},
      source: human,
      request_id: 'r-t',
      correlation_id: 'c-t',
    });
    clock.advance(1_234);
    expect(await hub.getRequest('r-t')).toEqual({
      request_id: 'r-t',
      correlation_id: 'c-t',
      target: 'g.run',
      status: 'running',
      created_at: new Date(started).toISOString(),
      caller: 'human:tester',
    });
    g.release();
    await first;
    expect(await hub.getRequest('r-t')).toEqual({
      request_id: 'r-t',
      correlation_id: 'c-t',
      target: 'g.run',
      status: 'succeeded',
      created_at: new Date(started).toISOString(),
      finished_at: new Date(started + 1_234).toISOString(),
      caller: 'human:tester',
      result: { runs: 1, args: {} },
    });
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

/** A store that is not the in-memory one (as Redis is not): tracked calls take the shared path. */
class SharedStore implements RequestStore {
  readonly records = new Map<string, RequestRecord>();
  async begin(record: RequestRecord): Promise<RequestRecord | undefined> {
    const existing = this.records.get(record.request_id);
    if (existing !== undefined) return existing;
    this.records.set(record.request_id, { ...record });
    return undefined;
  }
  async finish(request_id: string, outcome: { ok: boolean; result?: unknown; error?: unknown }, finished_at: string) {
    const r = this.records.get(request_id);
    if (r === undefined) return;
    Object.assign(
      r,
      outcome.ok ? { status: 'succeeded', result: outcome.result } : { status: 'failed', error: outcome.error },
      { finished_at },
    );
  }
  async get(request_id: string): Promise<RequestRecord | undefined> {
    return this.records.get(request_id);
  }
  async forget(request_id: string): Promise<void> {
    this.records.delete(request_id);
  }
  async close(): Promise<void> {}
}

describe('tracked calls on a shared store', () => {
  it('refuses arguments with no JSON form with E_INVALID_ARGS before the record (dispatch() rejects, it never hung)', async () => {
    let runs = 0;
    const store = new SharedStore();
    const hub = new MessageHub({
      createRuntime: objectRuntimes({ e: { tools: { t: () => ++runs } } }, {}),
      transport: new InProcessTransport(),
      requests: store,
    });
    hubs.push(hub);
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    const expected = {
      code: 'E_INVALID_ARGS',
      message: 'arguments of request "r-x" have no JSON form',
      details: { issues: [{ path: '$', message: 'canonicalJson: a BigInt is not JSON-serializable' }] },
    };
    const blocking = await rejectionOf(
      hub.request({ target: 'e.t', payload: { n: 1n }, source: human, request_id: 'r-x' }),
    );
    expect({ code: blocking.code, message: blocking.message, details: blocking.details }).toEqual(expected);
    const dispatched = await rejectionOf(
      hub.dispatch({ target: 'e.t', payload: { n: 1n }, source: human, request_id: 'r-x' }),
    );
    expect({ code: dispatched.code, message: dispatched.message, details: dispatched.details }).toEqual(expected);
    expect(runs).toBe(0);
    expect(store.records.size).toBe(0);
    // JSON arguments take the same path and run once
    expect(await hub.request({ target: 'e.t', payload: { n: 1 }, source: human, request_id: 'r-y' })).toBe(1);
    expect(await hub.request({ target: 'e.t', payload: { n: 1 }, source: human, request_id: 'r-y' })).toBe(1);
    expect(runs).toBe(1);
  });
});

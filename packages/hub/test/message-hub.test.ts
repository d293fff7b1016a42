import { afterEach, describe, expect, it } from 'vitest';

import { FingerError, type FingerEvent } from '@finger/protocol';
import { ManualClock, waitFor } from '@finger/testkit/core';

import {
  type HubCall,
  type InProcessModule,
  InProcessTransport,
  type Interceptor,
  MessageHub,
  systemClock,
  type ToolCallContext,
} from '../src/index.js';
import { human, manifest, type ObjectRuntime, objectRuntimes, rejectionOf, until } from './helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

function makeHub(
  mods: Record<string, InProcessModule>,
  made: Record<string, ObjectRuntime> = {},
  copy: 'none' | 'json' = 'none',
  clock?: ManualClock,
) {
  const hub = new MessageHub({
    createRuntime: objectRuntimes(mods, made),
    transport: new InProcessTransport({ copy }),
    limits: { lease_sweep_ms: 5 },
    ...(clock ? { clock } : {}),
  });
  hubs.push(hub);
  return hub;
}

const never = (_a: unknown, ctx: ToolCallContext) =>
  new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));

describe.each(['none', 'json'] as const)('MessageHub (transport copy=%s)', (copy) => {
  it('dispatches to a bare module id with one tool and to a tool id', async () => {
    const hub = makeHub({ echo: { tools: { echo: (a) => a } } }, {}, copy);
    await hub.registry.register(manifest('echo', [{ name: 'echo' }]), { baseDir: '.' });
    expect(await hub.request({ target: 'echo', payload: { text: 'hi' }, source: human })).toEqual({ text: 'hi' });
    expect(await hub.request({ target: 'echo.echo', payload: [1, 2], source: human })).toEqual([1, 2]);
  });

  it('refuses a module id with several tools with E_NO_TARGET listing them', async () => {
    const hub = makeHub({ m: { tools: { a: () => 1, b: () => 2 } } }, {}, copy);
    await hub.registry.register(manifest('m', [{ name: 'a' }, { name: 'b' }]), { baseDir: '.' });
    const e = await rejectionOf(hub.request({ target: 'm', payload: {}, source: human }));
    expect(e.code).toBe('E_NO_TARGET');
    expect(e.details).toEqual({ target: 'm', tools: ['m.a', 'm.b'] });
    expect((await rejectionOf(hub.request({ target: 'nope.x', payload: {}, source: human }))).code).toBe('E_NO_TARGET');
  });

  it('refuses depth 5 with E_NESTING_DEPTH', async () => {
    const mods: Record<string, InProcessModule> = {};
    for (let i = 1; i <= 6; i++)
      mods[`l${i}`] = { tools: { go: (a, ctx) => (i < 6 ? ctx.call(`l${i + 1}.go`, a) : { depth: ctx.source.id }) } };
    const hub = makeHub(mods, {}, copy);
    for (let i = 1; i <= 6; i++) await hub.registry.register(manifest(`l${i}`, [{ name: 'go' }]), { baseDir: '.' });
    const e = await rejectionOf(hub.request({ target: 'l1.go', payload: {}, source: human }));
    expect(e.code).toBe('E_NESTING_DEPTH');
    expect(e.details).toEqual({ depth: 5, max: 4, execution_chain: ['l1.go', 'l2.go', 'l3.go', 'l4.go', 'l5.go'] });
    // depth 4 is fine
    // depth 4 is fine, and the nested calls kept the root principal
    expect(await hub.request({ target: 'l2.go', payload: {}, source: human })).toEqual({ depth: 'tester' });
  });

  it('refuses A → B → A with E_CALL_CYCLE', async () => {
    const hub = makeHub(
      {
        a: { tools: { run: (x, ctx) => ctx.call('b.run', x) } },
        b: { tools: { run: (x, ctx) => ctx.call('a.run', x) } },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('a', [{ name: 'run' }]), { baseDir: '.' });
    await hub.registry.register(manifest('b', [{ name: 'run' }]), { baseDir: '.' });
    const e = await rejectionOf(hub.request({ target: 'a.run', payload: {}, source: human }));
    expect(e.code).toBe('E_CALL_CYCLE');
    expect(e.details).toEqual({ target: 'a.run', execution_chain: ['a.run', 'b.run'] });
  });

  it('expires a call that outlives its lease: E_LEASE_EXPIRED, cancel sent, holdings released, event', async () => {
    const made: Record<string, ObjectRuntime> = {};
    let aborted = false;
    const hub = makeHub(
      {
        slow: {
          tools: {
            wait: (_a, ctx) => {
              ctx.signal.addEventListener('abort', () => (aborted = true));
              return new Promise(() => undefined);
            },
            quick: () => 'ok',
          },
        },
      },
      made,
      copy,
    );
    await hub.registry.register(
      manifest('slow', [{ name: 'wait', timeout_ms: 50 }, { name: 'quick' }], { concurrency: 1 }),
      { baseDir: '.' },
    );
    const events: FingerEvent[] = [];
    hub.events.subscribe({ types: ['LEASE_EXPIRED'] }, (e) => events.push(e));
    const e = await rejectionOf(hub.request({ target: 'slow.wait', payload: {}, source: human, timeout_ms: 10_000 }));
    expect(e.code).toBe('E_LEASE_EXPIRED');
    expect(aborted).toBe(true);
    expect(made.slow!.cancelled).toHaveLength(1);
    expect(hub.stats().leases_active).toBe(0);
    expect(hub.registry.get('slow')!.inflight).toBe(0);
    // the concurrency slot held under the lease was released: concurrency 1 serves again
    expect(await hub.request({ target: 'slow.quick', payload: {}, source: human })).toBe('ok');
    expect(events.map((x) => [x.type, x.target, x.data.code])).toEqual([
      ['LEASE_EXPIRED', 'slow.wait', 'E_LEASE_EXPIRED'],
    ]);
  });

  it('keeps a call alive while the module heartbeats, and expires it once the heartbeats stop (injected clock)', async () => {
    // the hub's time is the test's: 150 ms of heartbeats at 25 ms under a 60 ms lease, however loaded the machine
    const clock = new ManualClock();
    const hub = makeHub(
      {
        hb: {
          tools: {
            work: async (a: { beats: number }, ctx) => {
              for (let i = 0; i < a.beats; i++) {
                ctx.extendLease(80);
                await Promise.resolve();
                clock.advance(25); // the lease sweeper runs every 5 ms of it
              }
              if (a.beats === 0) {
                clock.advance(61); // silent past the lease
                await new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('x'))));
              }
              return 'done';
            },
          },
        },
      },
      {},
      copy,
      clock,
    );
    await hub.registry.register(manifest('hb', [{ name: 'work', timeout_ms: 60 }]), { baseDir: '.' });
    expect(await hub.request({ target: 'hb.work', payload: { beats: 6 }, source: human })).toBe('done');
    const e = await rejectionOf(hub.request({ target: 'hb.work', payload: { beats: 0 }, source: human }));
    expect(e.code).toBe('E_LEASE_EXPIRED');
    expect(hub.stats()).toMatchObject({ inflight: 0, leases_active: 0 });
  });

  it('forwards module progress to the caller', async () => {
    const hub = makeHub(
      {
        p: {
          tools: {
            work: async (_a, ctx) => {
              ctx.progress('half', 0.5);
              ctx.progress('done', 1);
              return 'ok';
            },
          },
        },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('p', [{ name: 'work' }]), { baseDir: '.' });
    const seen: [string, number | undefined][] = [];
    const r = await hub.request({
      target: 'p.work',
      payload: {},
      source: human,
      onProgress: (m, f) => seen.push([m, f]),
    });
    expect(r).toBe('ok');
    expect(seen).toEqual([
      ['half', 0.5],
      ['done', 1],
    ]);
  });

  it('fails a call past its deadline with E_TIMEOUT', async () => {
    const hub = makeHub({ s: { tools: { w: never } } }, {}, copy);
    await hub.registry.register(manifest('s', [{ name: 'w' }]), { baseDir: '.' });
    expect((await rejectionOf(hub.request({ target: 's.w', payload: {}, source: human, timeout_ms: 30 }))).code).toBe(
      'E_TIMEOUT',
    );
  });

  it('runs 100 concurrent requests with one request_id exactly once', async () => {
    let runs = 0;
    const hub = makeHub(
      {
        c: {
          tools: {
            inc: async () => {
              runs++;
              await new Promise((r) => setTimeout(r, 20));
              return { runs };
            },
          },
        },
        d: { tools: { t: () => 'd' } },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('c', [{ name: 'inc' }]), { baseDir: '.' });
    await hub.registry.register(manifest('d', [{ name: 't' }]), { baseDir: '.' });
    const replies = await Promise.all(
      Array.from({ length: 100 }, () =>
        hub.request({ target: 'c.inc', payload: {}, source: human, request_id: 'req-1' }),
      ),
    );
    expect(runs).toBe(1);
    expect(replies).toEqual(Array.from({ length: 100 }, () => ({ runs: 1 })));
    // a completed one answers from the store, without running again
    expect(await hub.request({ target: 'c.inc', payload: {}, source: human, request_id: 'req-1' })).toEqual({
      runs: 1,
    });
    expect(runs).toBe(1);
    // the same id for another target is a conflict
    expect(
      (await rejectionOf(hub.request({ target: 'd', payload: {}, source: human, request_id: 'req-1' }))).code,
    ).toBe('E_CONFLICT');
  });

  it('refuses a request_id used again with other arguments or another target (running or finished) with E_CONFLICT', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const hub = makeHub(
      {
        rm: {
          tools: {
            file: async (a) => {
              runs++;
              await gate;
              return { removed: (a as { path: string }).path };
            },
          },
        },
        d: { tools: { t: () => 'd' } },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('rm', [{ name: 'file' }]), { baseDir: '.' });
    await hub.registry.register(manifest('d', [{ name: 't' }]), { baseDir: '.' });
    const call = (target: string, path: string) =>
      hub.request({ target, payload: { path }, source: human, request_id: 'rm-1' });
    const first = call('rm.file', '/tmp/a');
    // while it runs: the same call joins it (bare module id or tool id); others are refused
    const same = hub.request({ target: 'rm', payload: { path: '/tmp/a' }, source: human, request_id: 'rm-1' });
    const other = await rejectionOf(call('rm.file', '/tmp/b'));
    expect(other).toMatchObject({ code: 'E_CONFLICT', details: { request_id: 'rm-1', reason: 'other_args' } });
    expect((await rejectionOf(call('d.t', '/tmp/a'))).code).toBe('E_CONFLICT');
    release();
    expect(await first).toEqual({ removed: '/tmp/a' });
    expect(await same).toEqual({ removed: '/tmp/a' });
    // once finished: the stored outcome answers the same call, not another one
    expect(await call('rm.file', '/tmp/a')).toEqual({ removed: '/tmp/a' });
    expect((await rejectionOf(call('rm.file', '/tmp/b'))).details).toMatchObject({ reason: 'other_args' });
    expect(runs).toBe(1);
  });

  it("refuses another caller's request_id (E_CONFLICT, other_caller), running or finished, telling nothing of the call", async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const hub = makeHub(
      {
        sh: {
          tools: {
            exec: async () => {
              runs++;
              await gate;
              return { stdout: 'uid=0(root)' };
            },
          },
        },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('sh', [{ name: 'exec' }]), { baseDir: '.' });
    const agent = { kind: 'agent' as const, id: 'sup', roles: [] };
    const call = (source: typeof human | typeof agent) =>
      hub.request({ target: 'sh.exec', payload: { command: 'id' }, source, request_id: 'op-run-7' });
    const first = call(human);
    for (const when of ['running', 'finished']) {
      if (when === 'finished') {
        release();
        expect(await first).toEqual({ stdout: 'uid=0(root)' });
      }
      const err = await rejectionOf(call(agent));
      expect({ when, code: err.code, details: err.details }).toEqual({
        when,
        code: 'E_CONFLICT',
        details: { request_id: 'op-run-7', reason: 'other_caller' },
      });
      expect(err.message).not.toContain('sh.exec');
    }
    // the caller itself still gets its outcome
    expect(await call(human)).toEqual({ stdout: 'uid=0(root)' });
    expect(runs).toBe(1);
  });

  it('keeps the result of a non-blocking dispatch', async () => {
    const hub = makeHub({ echo: { tools: { echo: async (a) => a } } }, {}, copy);
    await hub.registry.register(manifest('echo', [{ name: 'echo' }]), { baseDir: '.' });
    const { request_id, correlation_id } = await hub.dispatch({ target: 'echo', payload: { n: 1 }, source: human });
    expect(correlation_id).toBe(request_id);
    expect((await hub.getRequest(request_id))?.request_id).toBe(request_id);
    const rec = await waitFor(
      'the dispatch to finish',
      async () => {
        const r = await hub.getRequest(request_id);
        return r?.status === 'running' ? undefined : r;
      },
      5000,
      5,
    );
    expect(rec).toMatchObject({ request_id, target: 'echo.echo', status: 'succeeded', result: { n: 1 } });
    const failed = await hub.dispatch({ target: 'missing', payload: {}, source: human });
    expect(await hub.getRequest(failed.request_id)).toMatchObject({ status: 'failed', error: { code: 'E_NO_TARGET' } });
  });

  it('holds calls beyond the concurrency limit in a queue', async () => {
    let now = 0;
    let max = 0;
    const hub = makeHub(
      {
        one: {
          tools: {
            t: async () => {
              max = Math.max(max, ++now);
              await new Promise((r) => setTimeout(r, 5));
              now--;
              return 1;
            },
          },
        },
      },
      {},
      copy,
    );
    await hub.registry.register(manifest('one', [{ name: 't' }], { concurrency: 2 }), { baseDir: '.' });
    const out = await Promise.all(
      Array.from({ length: 10 }, () => hub.request({ target: 'one', payload: {}, source: human })),
    );
    expect(out).toEqual(Array(10).fill(1));
    expect(max).toBe(2);
  });
});

describe('MessageHub registry and lifecycle', () => {
  it('refuses calls to an unhealthy module with E_MODULE_UNHEALTHY and emits MODULE_HEALTH', async () => {
    const made: Record<string, ObjectRuntime> = {};
    const hub = makeHub({ h: { tools: { t: () => 1 } } }, made);
    await hub.registry.register(manifest('h', [{ name: 't' }]), { baseDir: '.' });
    const events: FingerEvent[] = [];
    hub.events.subscribe({ types: ['MODULE_HEALTH'] }, (e) => events.push(e));
    made.h!.healthy = { ok: false, detail: 'disk on fire' };
    expect(await hub.registry.checkHealth('h')).toMatchObject({
      id: 'h',
      healthy: false,
      detail: 'disk on fire',
      consecutive_failures: 1,
    });
    const e = await rejectionOf(hub.request({ target: 'h', payload: {}, source: human }));
    expect(e.code).toBe('E_MODULE_UNHEALTHY');
    expect(events.map((x) => x.data)).toEqual([{ id: 'h', healthy: false, detail: 'disk on fire' }]);
    made.h!.healthy = { ok: true };
    await hub.registry.checkHealth('h');
    expect(await hub.request({ target: 'h', payload: {}, source: human })).toBe(1);
  });

  it('drains in-flight calls on unregister and refuses new ones', async () => {
    const made: Record<string, ObjectRuntime> = {};
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const hub = makeHub({ d: { tools: { slow: async () => (await gate, 'finished') } } }, made);
    await hub.registry.register(manifest('d', [{ name: 'slow' }]), { baseDir: '.' });
    const inflight = hub.request({ target: 'd', payload: {}, source: human });
    await until(() => hub.registry.get('d')!.inflight === 1, 'call in flight');
    const unregistering = hub.registry.unregister('d');
    expect((await rejectionOf(hub.request({ target: 'd', payload: {}, source: human }))).code).toBe('E_NO_TARGET');
    expect(made.d!.closed).toBe(false);
    release();
    expect(await inflight).toBe('finished');
    await unregistering;
    expect(made.d!.closed).toBe(true);
    expect(hub.registry.get('d')).toBeUndefined();
    expect((await rejectionOf(hub.registry.unregister('d'))).code).toBe('E_NOT_FOUND');
  });

  it('refuses a manifest with three errors, listing all three, and registers nothing', async () => {
    const hub = makeHub({});
    const bad = {
      id: 'Bad Id',
      name: 'x',
      version: 'one',
      kind: 'tool',
      runtime: { type: 'inprocess', entry: 'x.js' },
      tools: [{ name: 't', description: 'd', risk_level: 'extreme' }],
    };
    const e = await rejectionOf(hub.registry.register(bad, { baseDir: '.' }));
    expect(e.code).toBe('E_INVALID_MANIFEST');
    expect(e.details.issues.map((i: { path: string }) => i.path)).toEqual([
      '$.id',
      '$.version',
      '$.tools[0].risk_level',
    ]);
    expect(hub.registry.list()).toEqual([]);
  });

  it('refuses a duplicate module id with E_CONFLICT', async () => {
    const hub = makeHub({ x: { tools: { t: () => 1 } } });
    await hub.registry.register(manifest('x', [{ name: 't' }]), { baseDir: '.' });
    expect((await rejectionOf(hub.registry.register(manifest('x', [{ name: 't' }]), { baseDir: '.' }))).code).toBe(
      'E_CONFLICT',
    );
  });

  it('lets a local module take the place of one imported from the cluster, never the other way', async () => {
    const hub = makeHub({ x: { tools: { t: () => 'local' } } });
    const imported = manifest('x', [{ name: 't' }], { runtime: { type: 'nats' } });
    await hub.registry.register(imported, { baseDir: '.' });
    await hub.registry.register(manifest('x', [{ name: 't' }]), { baseDir: '.' });
    expect(hub.registry.get('x')?.runtime).toBe('inprocess');
    expect(await hub.request({ target: 'x.t', payload: {}, source: human })).toBe('local');
    expect((await rejectionOf(hub.registry.register(imported, { baseDir: '.' }))).code).toBe('E_CONFLICT');
    expect(hub.registry.get('x')?.runtime).toBe('inprocess');
  });

  it('runs interceptors in order and lets one stop the call', async () => {
    const hub = makeHub({ e: { tools: { t: (a) => a } } });
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    const seen: string[] = [];
    hub.use(async (call, next) => {
      seen.push(`first:${call.resolved.tool_id}:${call.direct}`);
      return next();
    });
    hub.use(async (call, next) => {
      seen.push('second');
      if ((call.envelope.payload as { deny?: boolean }).deny) {
        const { FingerError } = await import('@finger/protocol');
        throw new FingerError('E_DENIED_BY_POLICY', 'no');
      }
      return next();
    });
    expect(await hub.request({ target: 'e', payload: { a: 1 }, source: human, direct: true })).toEqual({ a: 1 });
    expect((await rejectionOf(hub.request({ target: 'e', payload: { deny: true }, source: human }))).code).toBe(
      'E_DENIED_BY_POLICY',
    );
    expect(seen).toEqual(['first:e.t:true', 'second', 'first:e.t:false', 'second']);
  });

  it('dispatches at most once even when an interceptor calls next() twice, and turns a sync throw into a rejection', async () => {
    let runs = 0;
    const hub = makeHub({ e: { tools: { t: () => ++runs } } });
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    hub.use(async (_call, next) => {
      await next();
      return next();
    });
    expect((await rejectionOf(hub.request({ target: 'e', payload: {}, source: human }))).code).toBe('E_INTERNAL');
    expect(runs).toBe(1);
    const hub2 = makeHub({ e: { tools: { t: () => 1 } } });
    await hub2.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    hub2.use(() => {
      throw new FingerError('E_FORBIDDEN', 'sync no');
    });
    expect((await rejectionOf(hub2.request({ target: 'e', payload: {}, source: human }))).code).toBe('E_FORBIDDEN');
  });

  it('skips an interceptor whose pass() lets the call through; runs it when pass() says false; a pass() throw stops the call', async () => {
    let runs = 0;
    const hub = makeHub({ e: { tools: { t: (a) => (runs++, a) } } });
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    const seen: string[] = [];
    const checked = (name: string, pass: (c: HubCall) => boolean): Interceptor =>
      Object.assign(
        (_call: HubCall, next: () => Promise<unknown>) => {
          seen.push(name);
          return next();
        },
        {
          pass: (c: HubCall) => {
            seen.push(`${name}.pass`);
            const p = c.envelope.payload as { stop?: string };
            if (p.stop === name) throw new FingerError('E_FORBIDDEN', `${name} refuses`);
            return pass(c);
          },
        },
      );
    hub.use(checked('a', () => true));
    hub.use(checked('b', (c) => (c.envelope.payload as { slow?: boolean }).slow !== true));
    hub.use(async (call, next) => {
      seen.push('plain');
      return next();
    });
    hub.use(checked('c', () => true));
    expect(await hub.request({ target: 'e', payload: { n: 1 }, source: human })).toEqual({ n: 1 });
    // a and b passed; the plain one has no pass: the chain starts there and c runs as a link of it
    expect(seen).toEqual(['a.pass', 'b.pass', 'plain', 'c']);
    seen.length = 0;
    expect(await hub.request({ target: 'e', payload: { slow: true }, source: human })).toEqual({ slow: true });
    expect(seen).toEqual(['a.pass', 'b.pass', 'b', 'plain', 'c']);
    seen.length = 0;
    expect((await rejectionOf(hub.request({ target: 'e', payload: { stop: 'b' }, source: human }))).code).toBe(
      'E_FORBIDDEN',
    );
    expect(seen).toEqual(['a.pass', 'b.pass']);
    expect(runs).toBe(2);

    // every interceptor passes: the call goes straight to its module
    const hub2 = makeHub({ e: { tools: { t: () => ++runs } } });
    await hub2.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    seen.length = 0;
    hub2.use(checked('x', () => true));
    hub2.use(checked('y', () => true));
    expect(await hub2.request({ target: 'e', payload: {}, source: human })).toBe(3);
    expect(seen).toEqual(['x.pass', 'y.pass']);
  });

  it('starts the lease when the call reaches its module: at the envelope time after a chain that awaited nothing, later after one that did', async () => {
    const clock = { ...systemClock, t: 1_000_000, now: () => clock.t };
    const hub = new MessageHub({
      clock,
      createRuntime: objectRuntimes({ e: { tools: { t: () => 1 } } }),
      limits: { default_lease_ms: 10_000, default_timeout_ms: 60_000 },
    });
    hubs.push(hub);
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    const expiry: number[] = [];
    let pause = false;
    hub.use(async (call, next) => {
      if (pause) await Promise.resolve().then(() => (clock.t += 5_000));
      else clock.t += 5_000; // a synchronous interceptor: the hub does not read the clock again
      const out = await next();
      expiry.push(call.envelope.lease!.expires_at);
      return out;
    });
    await hub.request({ target: 'e', payload: {}, source: human });
    pause = true;
    await hub.request({ target: 'e', payload: {}, source: human });
    expect(expiry).toEqual([1_000_000 + 10_000, 1_010_000 + 10_000]);
  });

  it('fails calls that outlive the shutdown drain with E_PROVIDER_CLOSED', async () => {
    const hub = makeHub({ s: { tools: { w: never } } });
    await hub.registry.register(manifest('s', [{ name: 'w' }]), { baseDir: '.' });
    const pending = hub.request({ target: 's.w', payload: {}, source: human });
    await until(() => hub.stats().inflight === 1, 'in flight');
    await hub.close(20);
    expect((await rejectionOf(pending)).code).toBe('E_PROVIDER_CLOSED');
    expect(hub.stats()).toMatchObject({ inflight: 0, leases_active: 0 });
  });

  it('refuses calls after close with E_PROVIDER_CLOSED', async () => {
    const hub = makeHub({ e: { tools: { t: (a) => a } } });
    await hub.registry.register(manifest('e', [{ name: 't' }]), { baseDir: '.' });
    await hub.close();
    expect((await rejectionOf(hub.request({ target: 'e', payload: {}, source: human }))).code).toBe(
      'E_PROVIDER_CLOSED',
    );
  });
});

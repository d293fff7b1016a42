import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { type ModuleManifest, ulid } from '@finger/protocol';

import { silentLogger } from '../../src/logger.js';
import { InProcessRuntime } from '../../src/runtime/in-process.js';
import type { ToolCallContext } from '../../src/runtime/runtime.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

function manifest(id: string, entry: string): ModuleManifest {
  return {
    id,
    name: id,
    version: '0.1.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry },
    tools: [{ name: 'echo', description: 'echo' }],
  };
}

interface TestCtx extends ToolCallContext {
  progressCalls: Array<[string, number | undefined]>;
  extendCalls: number[];
}

function makeCtx(): TestCtx {
  const id = ulid();
  const ctx: TestCtx = {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's1',
    workflow_id: 'w1',
    lease_id: `lease-${id}`,
    deadline: Date.now() + 10_000,
    source: { kind: 'system', id: 'test', roles: ['admin'] },
    get signal() {
      return new AbortController().signal;
    },
    progressCalls: [],
    extendCalls: [],
    extendLease(ttl) {
      ctx.extendCalls.push(ttl);
    },
    progress(message, fraction) {
      ctx.progressCalls.push([message, fraction]);
    },
    call: () => Promise.reject(new Error('no nested calls in this test')),
  };
  return ctx;
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: string; message: string; details?: unknown; stack?: string };
    return err.details === undefined
      ? { code: err.code, message: err.message }
      : { code: err.code, message: err.message, details: err.details };
  }
  throw new Error('expected a rejection');
}

const runtimes: InProcessRuntime[] = [];
function runtime(id: string, entry: string): InProcessRuntime {
  const rt = new InProcessRuntime({ manifest: manifest(id, entry), baseDir: FIXTURES, logger: silentLogger });
  runtimes.push(rt);
  return rt;
}

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

describe('InProcessRuntime', () => {
  it('loads a default-exported module object and runs sync and async tools', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    await rt.start();
    expect(rt.type).toBe('inprocess');
    const args = { text: 'hi' };
    expect(await rt.invoke('echo', args, makeCtx())).toBe(args);
    expect(await rt.invoke('async_echo', { n: 1 }, makeCtx())).toEqual({ n: 1 });
    const ctx = makeCtx();
    expect(await rt.invoke('ctx_info', {}, ctx)).toEqual({ call_id: ctx.call_id, request_id: ctx.request_id });
  });

  it('passes progress and lease extension through the ctx', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    await rt.start();
    const ctx = makeCtx();
    expect(await rt.invoke('progress', {}, ctx)).toBe('done');
    expect(ctx.progressCalls).toEqual([['half', 0.5]]);
    expect(ctx.extendCalls).toEqual([1234]);
  });

  it('maps tool errors: FingerError passes, anything else is E_MODULE_ERROR without stack', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    await rt.start();
    expect(await codeOf(rt.invoke('boom', {}, makeCtx()))).toEqual({ code: 'E_MODULE_ERROR', message: 'boom' });
    expect(await codeOf(rt.invoke('async_boom', {}, makeCtx()))).toEqual({
      code: 'E_MODULE_ERROR',
      message: 'async boom',
    });
    expect(await codeOf(rt.invoke('throw_string', {}, makeCtx()))).toEqual({
      code: 'E_MODULE_ERROR',
      message: 'plain string',
    });
    expect(await codeOf(rt.invoke('forbidden', {}, makeCtx()))).toEqual({
      code: 'E_FORBIDDEN',
      message: 'not for you',
      details: { why: 'test' },
    });
    expect(await codeOf(rt.invoke('async_forbidden', {}, makeCtx()))).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'bad args',
    });
  });

  it('rejects an unknown tool with E_NO_TARGET, including Object.prototype names', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    await rt.start();
    expect((await codeOf(rt.invoke('nope', {}, makeCtx()))).code).toBe('E_NO_TARGET');
    expect((await codeOf(rt.invoke('constructor', {}, makeCtx()))).code).toBe('E_NO_TARGET');
    expect((await codeOf(rt.invoke('toString', {}, makeCtx()))).code).toBe('E_NO_TARGET');
  });

  it('reports the module health, or ok when it has none', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    expect(await rt.health(100)).toEqual({ ok: false, detail: 'not started' });
    await rt.start();
    expect(await rt.health(100)).toEqual({ ok: true, detail: 'fine' });
    const sad = runtime('sad', './inprocess-factory.ts');
    await sad.start();
    expect(await sad.health(100)).toEqual({ ok: false, detail: 'sad' });
  });

  it('counts a health check that does not answer in time as unhealthy', async () => {
    const rt = runtime('hangs', './inprocess-factory.ts');
    await rt.start();
    expect(await rt.health(30)).toEqual({ ok: false, detail: 'health check did not answer within 30 ms' });
  });

  it('builds the module with a named async createModule factory that gets the manifest', async () => {
    const rt = runtime('factory-a', './inprocess-factory.ts');
    await rt.start();
    expect(await rt.invoke('whoami', {}, makeCtx())).toEqual({ id: 'factory-a' });
  });

  it('calls close() once, then rejects invoke with E_PROVIDER_CLOSED', async () => {
    const log = ((globalThis as { __fingerFixtureCloses?: string[] }).__fingerFixtureCloses ??= []);
    const rt = runtime('closer', './inprocess-factory.ts');
    await rt.start();
    const a = rt.close();
    const b = rt.close();
    expect(a).toBe(b);
    await a;
    await rt.close();
    expect(log.filter((id) => id === 'closer')).toEqual(['closer']);
    expect((await codeOf(rt.invoke('whoami', {}, makeCtx()))).code).toBe('E_PROVIDER_CLOSED');
    expect((await codeOf(rt.start())).code).toBe('E_PROVIDER_CLOSED');
    expect(await rt.health(100)).toEqual({ ok: false, detail: 'closed' });
  });

  it('rejects invoke before start with E_MODULE_UNHEALTHY', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    expect((await codeOf(rt.invoke('echo', {}, makeCtx()))).code).toBe('E_MODULE_UNHEALTHY');
  });

  it('refuses to start an entry that is missing, exports no module, or whose factory throws', async () => {
    expect((await codeOf(runtime('missing', './no-such-file.js').start())).code).toBe('E_MODULE_UNHEALTHY');
    expect((await codeOf(runtime('bad', './inprocess-bad.ts').start())).code).toBe('E_MODULE_UNHEALTHY');
    const exploded = await codeOf(runtime('explode', './inprocess-factory.ts').start());
    expect(exploded.code).toBe('E_MODULE_UNHEALTHY');
    expect(exploded.message).toContain('factory exploded');
  });

  it('refuses a manifest whose runtime is not inprocess', async () => {
    const m = { ...manifest('x', './a.js'), runtime: { type: 'stdio' as const, command: ['true'] } };
    const rt = new InProcessRuntime({ manifest: m, baseDir: FIXTURES, logger: silentLogger });
    expect((await codeOf(rt.start())).code).toBe('E_INVALID_MANIFEST');
  });

  it('cancel is a no-op (cancellation goes through ctx.signal)', async () => {
    const rt = runtime('obj', './inprocess-object.ts');
    await rt.start();
    rt.cancel('whatever', 'test');
    expect(await rt.invoke('echo', 1, makeCtx())).toBe(1);
  });
});

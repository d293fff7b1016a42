import { afterEach, describe, expect, it } from 'vitest';

import type { ToolSpec } from '@finger/protocol';

import type { InProcessModule, ModuleRuntime, RuntimeOptions } from '../../src/index.js';
import { MessageHub } from '../../src/index.js';
import { human, manifest, ObjectRuntime, objectRuntimes, rejectionOf } from '../helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

const WRITE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['path', 'content'],
  properties: { path: { type: 'string', minLength: 1 }, content: { type: 'string' }, mode: { enum: ['a', 'w'] } },
};

function makeHub(mods: Record<string, InProcessModule>, withInterceptor = false) {
  const hub = new MessageHub({ createRuntime: objectRuntimes(mods) });
  if (withInterceptor) hub.use((_call, next) => next());
  hubs.push(hub);
  return hub;
}

describe.each([false, true])('argument and result validation (interceptor: %s)', (withInterceptor) => {
  it('refuses bad args before dispatch with E_INVALID_ARGS listing every problem', async () => {
    const calls: unknown[] = [];
    const hub = makeHub({ fs: { tools: { write: (a) => (calls.push(a), { ok: true }) } } }, withInterceptor);
    await hub.registry.register(manifest('fs', [{ name: 'write', input_schema: WRITE_SCHEMA }]), { baseDir: '.' });
    const e = await rejectionOf(
      hub.request({ target: 'fs.write', payload: { content: 7, mode: 'x', extra: true }, source: human }),
    );
    expect(e.code).toBe('E_INVALID_ARGS');
    expect(e.details).toEqual({
      tool: 'fs.write',
      issues: [
        { path: '$.path', message: 'is required' },
        { path: '$.extra', message: 'is not an allowed key' },
        { path: '$.content', message: 'must be string' },
        { path: '$.mode', message: 'must be one of "a", "w"' },
      ],
    });
    expect(e.message).toContain('$.path is required');
    expect(calls).toEqual([]);
    expect(await hub.request({ target: 'fs.write', payload: { path: 'a', content: '' }, source: human })).toEqual({
      ok: true,
    });
    expect(calls).toEqual([{ path: 'a', content: '' }]);
  });

  it('lets anything through to a tool without input_schema', async () => {
    const hub = makeHub({ free: { tools: { t: (a) => ({ got: a }) } } }, withInterceptor);
    await hub.registry.register(manifest('free', [{ name: 't' }]), { baseDir: '.' });
    expect(await hub.request({ target: 'free', payload: [1, 'x'], source: human })).toEqual({ got: [1, 'x'] });
  });

  it('fails a result that breaks the output_schema with E_MODULE_ERROR and output_issues', async () => {
    const hub = makeHub(
      { m: { tools: { good: () => ({ n: 1 }), bad: () => ({ n: 'one', more: 1 }) } } },
      withInterceptor,
    );
    const output_schema = {
      type: 'object',
      additionalProperties: false,
      required: ['n'],
      properties: { n: { type: 'integer' } },
    };
    await hub.registry.register(
      manifest('m', [
        { name: 'good', output_schema },
        { name: 'bad', output_schema },
      ]),
      { baseDir: '.' },
    );
    expect(await hub.request({ target: 'm.good', payload: {}, source: human })).toEqual({ n: 1 });
    const e = await rejectionOf(hub.request({ target: 'm.bad', payload: {}, source: human }));
    expect(e.code).toBe('E_MODULE_ERROR');
    expect(e.details).toEqual({
      tool: 'm.bad',
      output_issues: [
        { path: '$.more', message: 'is not an allowed key' },
        { path: '$.n', message: 'must be integer' },
      ],
    });
    expect(hub.stats().calls_failed).toBe(1);
  });
});

describe('schemas at registration', () => {
  it('refuses a manifest whose schema does not compile with E_INVALID_MANIFEST at its path, starting nothing', async () => {
    const started: string[] = [];
    const hub = new MessageHub({
      createRuntime: (o: RuntimeOptions): ModuleRuntime => {
        started.push(o.manifest.id);
        return new ObjectRuntime({ tools: {} });
      },
    });
    hubs.push(hub);
    const bad = manifest('broken', [
      { name: 'ok', input_schema: { type: 'object' } },
      { name: 'typo', input_schema: { type: 'objekt' } },
      { name: 'ref', output_schema: { $ref: '#/definitions/missing' } },
    ]);
    const e = await rejectionOf(hub.registry.register(bad, { baseDir: '.' }));
    expect(e.code).toBe('E_INVALID_MANIFEST');
    expect(e.details.issues.map((i: { path: string }) => i.path)).toEqual([
      '$.tools[1].input_schema',
      '$.tools[2].output_schema',
    ]);
    expect(e.details.issues[0].message).toMatch(/^does not compile: /);
    expect(started).toEqual([]);
    expect(hub.registry.list()).toEqual([]);
    expect(hub.tools.list()).toEqual([]);
  });

  it('compiles schemas that name another dialect ($schema 2020-12)', async () => {
    const hub = makeHub({ d: { tools: { t: () => null } } });
    const input_schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['q'],
    };
    await hub.registry.register(manifest('d', [{ name: 't', input_schema }]), { baseDir: '.' });
    const e = await rejectionOf(hub.request({ target: 'd.t', payload: {}, source: human }));
    expect(e.code).toBe('E_INVALID_ARGS');
    expect(e.details.issues).toEqual([{ path: '$.q', message: 'is required' }]);
  });

  it('fails closed for a tool discovered at start whose schema does not compile', async () => {
    const discovered: ToolSpec[] = [
      { name: 'fine', description: 'd', input_schema: { type: 'object' } },
      { name: 'weird', description: 'd', input_schema: { type: 12 } as unknown as Record<string, unknown> },
    ];
    const hub = new MessageHub({
      createRuntime: (): ModuleRuntime => {
        const rt = new ObjectRuntime({ tools: { fine: () => 'ran', weird: () => 'ran' } });
        (rt as ModuleRuntime).describeTools = () => discovered;
        return rt;
      },
    });
    hubs.push(hub);
    await hub.registry.register(manifest('disc', []), { baseDir: '.' });
    expect(hub.tools.list().map((t) => t.id)).toEqual(['disc.fine', 'disc.weird']);
    expect(await hub.request({ target: 'disc.fine', payload: {}, source: human })).toBe('ran');
    const e = await rejectionOf(hub.request({ target: 'disc.weird', payload: {}, source: human }));
    expect(e.code).toBe('E_INVALID_ARGS');
    expect(e.details.issues[0].message).toMatch(/^cannot be checked: the tool's input_schema does not compile/);
  });
});

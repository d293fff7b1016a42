// ModuleRegistry.update: a module imported from the cluster takes a new manifest in place.
import { afterEach, describe, expect, it } from 'vitest';

import type { FingerEvent } from '@finger/protocol';

import { LocalEventBus, MessageHub, type ModuleRuntime } from '../../src/index.js';
import { FakeRemote } from '../fixtures/fake-remote.js';
import { human, manifest, rejectionOf } from '../helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const far = (version: string, tools: string[], extra: object = {}) => ({
  ...manifest(
    'far',
    tools.map((name) => ({ name, description: `${name} of ${version}` })),
    { runtime: { type: 'nats' } },
  ),
  version,
  ...extra,
});

async function importedHub() {
  const remote = new FakeRemote();
  let closed = 0;
  remote.close = async () => {
    closed++;
  };
  let created = 0;
  const events = new LocalEventBus();
  const seen: FingerEvent[] = [];
  events.subscribe({ types: ['MODULE_REGISTERED', 'MODULE_UNREGISTERED'] }, (e) => seen.push(e));
  const hub = new MessageHub({
    createRuntime: (): ModuleRuntime => {
      created++;
      return remote;
    },
    events,
  });
  closers.push(() => hub.close(100));
  await hub.registry.register(far('1.0.0', ['a', 'b'], { concurrency: 2 }), { baseDir: '.' });
  seen.length = 0;
  return { hub, remote, seen, closedRuntimes: () => closed, createdRuntimes: () => created };
}

describe('ModuleRegistry.update (a module imported from the cluster takes a new manifest)', () => {
  it('switches the targets in one step; calls in flight finish; the runtime stays', async () => {
    const { hub, remote, seen, closedRuntimes, createdRuntimes } = await importedHub();
    const changes: string[] = [];
    hub.registry.onChange((c) => changes.push(`${c.type} ${c.module.version}`));
    const inflight = hub.request({ target: 'far.b', payload: { n: 1 }, source: human });
    expect(remote.sent).toHaveLength(1);

    const info = hub.registry.update(far('2.0.0', ['a', 'c'], { concurrency: 8 }));

    expect(info).toMatchObject({ id: 'far', version: '2.0.0', runtime: 'nats', status: 'ready', concurrency: 8 });
    expect(info.tools.map((t) => t.name)).toEqual(['a', 'c']);
    expect(changes).toEqual(['unregistered 1.0.0', 'registered 2.0.0']);
    // the tools follow; a tool the new manifest dropped is gone, a new one resolves
    expect(hub.tools.get('far.c')?.description).toBe('c of 2.0.0');
    expect(hub.tools.get('far.b')).toBeUndefined();
    expect(await rejectionOf(hub.request({ target: 'far.b', payload: {}, source: human }))).toMatchObject({
      code: 'E_NO_TARGET',
    });
    const next = hub.request({ target: 'far.c', payload: { n: 2 }, source: human });
    expect(remote.sent).toHaveLength(2);
    expect(remote.sent[1]!.request.target).toBe('far.c');
    // the call made before the change ends with its reply
    remote.sent[0]!.reply({ ok: 1 });
    remote.sent[1]!.reply({ ok: 2 });
    expect(await inflight).toEqual({ ok: 1 });
    expect(await next).toEqual({ ok: 2 });
    // one runtime all along, never closed; the event says which version it replaced, and nothing was unregistered
    expect(createdRuntimes()).toBe(1);
    expect(closedRuntimes()).toBe(0);
    expect(seen.map((e) => [e.type, e.data])).toEqual([
      [
        'MODULE_REGISTERED',
        {
          id: 'far',
          version: '2.0.0',
          runtime: 'nats',
          tools: ['a', 'c'],
          source: 'dynamic',
          previous_version: '1.0.0',
        },
      ],
    ]);
  });

  it('refuses an invalid manifest with E_INVALID_MANIFEST and keeps the one it has', async () => {
    const { hub } = await importedHub();
    let err: unknown;
    try {
      hub.registry.update({ ...far('2.0.0', ['a']), tools: [{ name: 'bad name!' }] });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'E_INVALID_MANIFEST' });
    expect(hub.registry.get('far')).toMatchObject({ version: '1.0.0', status: 'ready' });
    expect(hub.tools.get('far.b')).toBeDefined();
  });

  it('refuses unknown, local and draining modules, and a manifest that is not imported', async () => {
    const { hub, remote } = await importedHub();
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return 'no error';
    };
    expect(codeOf(() => hub.registry.update(manifest('nobody', [{ name: 'x' }], { runtime: { type: 'nats' } })))).toBe(
      'E_NOT_FOUND',
    );
    // the new manifest would run the module here: that is a register, not an update
    expect(codeOf(() => hub.registry.update(manifest('far', [{ name: 'a' }])))).toBe('E_CONFLICT');
    await hub.registry.register(
      manifest('near', [{ name: 'x' }], { runtime: { type: 'inprocess', entry: './x.js' } }),
      {
        baseDir: '.',
        runtime: new FakeRemote(),
      },
    );
    expect(codeOf(() => hub.registry.update(manifest('near', [{ name: 'x' }], { runtime: { type: 'nats' } })))).toBe(
      'E_CONFLICT',
    );
    // draining: a call in flight holds it
    const p = hub.request({ target: 'far.a', payload: {}, source: human });
    const leaving = hub.registry.unregister('far', { drain_ms: 5_000 });
    expect(codeOf(() => hub.registry.update(far('3.0.0', ['a'])))).toBe('E_NOT_FOUND');
    remote.sent[0]!.reply({});
    await p;
    await leaving;
  });
});

import { afterEach, describe, expect, it } from 'vitest';

import type { InProcessModule, ModuleRuntime, RuntimeOptions } from '../../src/index.js';
import { MessageHub, TOOL_DEFAULTS } from '../../src/index.js';
import { manifest, ObjectRuntime, rejectionOf } from '../helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

/** Object runtimes for every module id, each tool answering its own id; `mcp.*` runtimes say type 'mcp'. */
function makeHub(opts: { order?: string[]; quarantined?: Record<string, Record<string, { reason: string }>> } = {}) {
  const hub = new MessageHub({
    createRuntime: (o: RuntimeOptions): ModuleRuntime => {
      const tools: InProcessModule['tools'] = {};
      for (const t of o.manifest.tools) tools[t.name] = () => ({ by: `${o.manifest.id}.${t.name}` });
      const rt = new ObjectRuntime({ tools });
      const q = opts.quarantined?.[o.manifest.id];
      if (q) (rt as ModuleRuntime).quarantined = () => q;
      return rt;
    },
    ...(opts.order ? { tools: { preferred_provider_order: opts.order } } : {}),
  });
  hubs.push(hub);
  return hub;
}

describe('ToolRegistry', () => {
  it('lists every tool of every module with the worst-case defaults for missing metadata', async () => {
    const hub = makeHub();
    await hub.registry.register(
      manifest(
        'fs',
        [
          {
            name: 'read',
            description: 'Reads a file.',
            risk_level: 'low',
            capability_level: 'L0',
            side_effects: false,
            idempotent: true,
            timeout_ms: 500,
            context_cost: 40,
            input_schema: { type: 'object' },
          },
          { name: 'write' },
        ],
        { grants: ['executor'] },
      ),
      { baseDir: '.' },
    );
    expect(hub.tools.list()).toEqual([
      {
        id: 'fs.read',
        module: 'fs',
        name: 'read',
        description: 'Reads a file.',
        input_schema: { type: 'object' },
        risk_level: 'low',
        capability_level: 'L0',
        side_effects: false,
        idempotent: true,
        timeout_ms: 500,
        context_cost: 40,
        provider: 'fs',
        runtime: 'inprocess',
        grants: ['executor'],
      },
      {
        id: 'fs.write',
        module: 'fs',
        name: 'write',
        description: 'write',
        risk_level: 'medium',
        capability_level: 'L2',
        side_effects: true,
        idempotent: false,
        context_cost: 100,
        provider: 'fs',
        runtime: 'inprocess',
        grants: ['executor'],
      },
    ]);
    expect(TOOL_DEFAULTS).toEqual({
      risk_level: 'medium',
      capability_level: 'L2',
      side_effects: true,
      idempotent: false,
      context_cost: 100,
    });
  });

  it('follows register and unregister', async () => {
    const hub = makeHub();
    await hub.registry.register(manifest('a', [{ name: 'x' }, { name: 'y' }]), { baseDir: '.' });
    await hub.registry.register(manifest('b', [{ name: 'z' }]), { baseDir: '.' });
    expect(hub.tools.list().map((t) => t.id)).toEqual(['a.x', 'a.y', 'b.z']);
    await hub.registry.unregister('a');
    expect(hub.tools.list().map((t) => t.id)).toEqual(['b.z']);
    expect(hub.tools.get('a.x')).toBeUndefined();
    expect(hub.tools.get('x')).toBeUndefined();
  });

  it('resolves ids, short names and single-tool module ids; require throws E_NO_TARGET', async () => {
    const hub = makeHub();
    await hub.registry.register(manifest('echo', [{ name: 'echo' }]), { baseDir: '.' });
    await hub.registry.register(manifest('fs', [{ name: 'read' }, { name: 'list' }]), { baseDir: '.' });
    expect(hub.tools.get('fs.read')?.id).toBe('fs.read');
    expect(hub.tools.get('read')?.id).toBe('fs.read');
    expect(hub.tools.get('echo')?.id).toBe('echo.echo');
    expect(hub.tools.get('fs')).toBeUndefined();
    const ambiguous = await rejectionOf(Promise.resolve().then(() => hub.tools.require('fs')));
    expect(ambiguous.code).toBe('E_NO_TARGET');
    expect(ambiguous.details).toEqual({ target: 'fs', tools: ['fs.read', 'fs.list'] });
    const missing = await rejectionOf(Promise.resolve().then(() => hub.tools.require('nope.nope')));
    expect(missing.code).toBe('E_NO_TARGET');
    expect((await rejectionOf(Promise.resolve().then(() => hub.tools.providerChoice('nope')))).code).toBe(
      'E_NO_TARGET',
    );
  });

  it('picks among providers of one short name by preferred_provider_order, and shows the choice', async () => {
    const hub = makeHub({ order: ['files2', 'files1'] });
    for (const id of ['files1', 'files2', 'files3']) {
      await hub.registry.register(manifest(id, [{ name: 'read_file' }, { name: `only_${id}` }]), { baseDir: '.' });
    }
    expect(hub.tools.get('read_file')?.id).toBe('files2.read_file');
    expect(hub.tools.providerChoice('read_file')).toEqual({
      name: 'read_file',
      chosen: 'files2.read_file',
      candidates: ['files2.read_file', 'files1.read_file', 'files3.read_file'],
      rule: 'preferred_provider_order',
    });
    // asking about one provider shows what its short name resolves to
    expect(hub.tools.providerChoice('files3.read_file').chosen).toBe('files2.read_file');
    expect(hub.tools.get('files1.read_file')?.also_offered_by).toEqual(['files2', 'files3']);
    expect(hub.tools.providerChoice('only_files1')).toEqual({
      name: 'only_files1',
      chosen: 'files1.only_files1',
      candidates: ['files1.only_files1'],
      rule: 'only_provider',
    });
    expect(hub.tools.get('files1.only_files1')?.also_offered_by).toBeUndefined();
    await hub.registry.unregister('files2');
    expect(hub.tools.providerChoice('read_file').chosen).toBe('files1.read_file');
  });

  it('without a preference puts non-MCP runtimes first, then orders by module id', async () => {
    const hub = makeHub();
    await hub.registry.register(
      manifest('remote', [{ name: 'fetch' }], { runtime: { type: 'mcp', transport: 'http', url: 'http://x' } }),
      { baseDir: '.' },
    );
    await hub.registry.register(manifest('web2', [{ name: 'fetch' }]), { baseDir: '.' });
    await hub.registry.register(manifest('web1', [{ name: 'fetch' }]), { baseDir: '.' });
    expect(hub.tools.providerChoice('fetch')).toEqual({
      name: 'fetch',
      chosen: 'web1.fetch',
      candidates: ['web1.fetch', 'web2.fetch', 'remote.fetch'],
      rule: 'default_order',
    });
    expect(hub.tools.get('remote.fetch')?.runtime).toBe('mcp');
  });

  it('ranks an MCP server another node hosts (mcp.<name>, runtime nats) with the MCP runtimes', async () => {
    const hub = makeHub();
    await hub.registry.register(manifest('mcp.far', [{ name: 'fetch' }], { runtime: { type: 'nats' } }), {
      baseDir: '.',
    });
    await hub.registry.register(manifest('web', [{ name: 'fetch' }]), { baseDir: '.' });
    expect(hub.tools.providerChoice('fetch')).toMatchObject({
      chosen: 'web.fetch',
      candidates: ['web.fetch', 'mcp.far.fetch'],
    });
  });

  it('ranks a module another node announces after this daemon’s own, MCP or not (no takeover of a short name)', async () => {
    const hub = makeHub();
    await hub.registry.register(manifest('aaa-remote', [{ name: 'whoami' }], { runtime: { type: 'nats' } }), {
      baseDir: '.',
    });
    await hub.registry.register(
      manifest('zzz-mcp', [{ name: 'whoami' }], { runtime: { type: 'mcp', transport: 'http', url: 'http://x' } }),
      { baseDir: '.' },
    );
    await hub.registry.register(manifest('zzz-local', [{ name: 'whoami' }]), { baseDir: '.' });
    expect(hub.tools.providerChoice('whoami')).toEqual({
      name: 'whoami',
      chosen: 'zzz-local.whoami',
      candidates: ['zzz-local.whoami', 'zzz-mcp.whoami', 'aaa-remote.whoami'],
      rule: 'default_order',
    });
    // a preference still decides first
    const preferring = makeHub({ order: ['aaa-remote'] });
    await preferring.registry.register(manifest('aaa-remote', [{ name: 'whoami' }], { runtime: { type: 'nats' } }), {
      baseDir: '.',
    });
    await preferring.registry.register(manifest('zzz-local', [{ name: 'whoami' }]), { baseDir: '.' });
    expect(preferring.tools.providerChoice('whoami').chosen).toBe('aaa-remote.whoami');
  });

  it('shows a tool its runtime quarantines, read live', async () => {
    const q: Record<string, { reason: string }> = {};
    const hub = makeHub({ quarantined: { m: q } });
    await hub.registry.register(manifest('m', [{ name: 't' }, { name: 'u' }]), { baseDir: '.' });
    expect(hub.tools.get('m.t')?.quarantined).toBeUndefined();
    q.t = { reason: 'definition changed' };
    expect(hub.tools.get('m.t')?.quarantined).toEqual({ reason: 'definition changed' });
    expect(hub.tools.get('m.u')?.quarantined).toBeUndefined();
  });

  it('metadata(id) gives the same facts as get(id) without copies, quarantine included', async () => {
    const q: Record<string, { reason: string }> = {};
    const hub = makeHub({ quarantined: { m: q } });
    await hub.registry.register(manifest('m', [{ name: 't' }, { name: 'u' }]), { baseDir: '.' });
    expect(hub.tools.metadata('m.t')).toEqual(hub.tools.get('m.t'));
    expect(hub.tools.metadata('m.t')).toBe(hub.tools.metadata('m.t'));
    q.t = { reason: 'definition changed' };
    expect(hub.tools.metadata('m.t')?.quarantined).toEqual({ reason: 'definition changed' });
    expect(hub.tools.metadata('m')).toBeUndefined();
    expect(hub.tools.metadata('nope.x')).toBeUndefined();
  });

  it('hands out the full schema of one tool on demand', async () => {
    const hub = makeHub();
    const input_schema = { type: 'object', required: ['path'], properties: { path: { type: 'string' } } };
    await hub.registry.register(
      manifest('fs', [{ name: 'read', description: 'Reads. More.', input_schema, output_schema: { type: 'object' } }]),
      { baseDir: '.' },
    );
    expect(hub.tools.schema('read')).toEqual({
      id: 'fs.read',
      description: 'Reads. More.',
      input_schema,
      output_schema: { type: 'object' },
    });
    expect((await rejectionOf(Promise.resolve().then(() => hub.tools.schema('fs.nope')))).code).toBe('E_NO_TARGET');
  });
});

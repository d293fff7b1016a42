import { afterEach, describe, expect, it } from 'vitest';

import type { InProcessModule, ModuleRuntime, RuntimeOptions, ToolCallContext } from '@finger/hub';
import { MessageHub } from '@finger/hub';
import type { FingerEvent, ModuleManifest, Principal, ToolSpec } from '@finger/protocol';

import { createGrantInterceptor, decideGrant, ToolGrantProfile } from '../../src/index.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

const agent = (role: string): Principal => ({ kind: 'agent', id: `bot-${role}`, roles: [`agent:${role}`] });
const human = (role: string): Principal => ({ kind: 'human', id: `ann-${role}`, roles: [role] });

function manifest(id: string, tools: string[], grants?: string[]): ModuleManifest {
  const m: ModuleManifest = {
    id,
    name: id,
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry: './none.js' },
    tools: tools.map((name): ToolSpec => ({ name, description: name })),
  };
  if (grants) m.grants = grants;
  return m;
}

/** A real hub with the grant interceptor, modules as plain objects (the runtime is the test's collaborator). */
async function setup() {
  const calls: string[] = [];
  const mods: Record<string, InProcessModule> = {
    fs: {
      tools: {
        read: () => (calls.push('fs.read'), 'content'),
        write: () => (calls.push('fs.write'), 'written'),
      },
    },
    notes: { tools: { add: () => (calls.push('notes.add'), 'added') } },
    relay: { tools: { write_via: (_a: unknown, ctx: ToolCallContext) => ctx.call('fs.write', {}) } },
  };
  const hub = new MessageHub({
    createRuntime: (o: RuntimeOptions): ModuleRuntime => {
      const mod = mods[o.manifest.id]!;
      return {
        type: 'object',
        start: async () => undefined,
        invoke: (tool, args, ctx) => Promise.resolve().then(() => mod.tools[tool]!(args, ctx)),
        cancel: () => undefined,
        health: async () => ({ ok: true }),
        close: async () => undefined,
      };
    },
  });
  hubs.push(hub);
  const verdicts: FingerEvent[] = [];
  hub.events.subscribe({ types: ['FIREWALL_VERDICT'] }, (e) => verdicts.push(e));
  const profile = new ToolGrantProfile({ extra: { supervisor: ['relay.*'] } });
  hub.use(createGrantInterceptor(profile, hub.events));
  await hub.registry.register(manifest('fs', ['read', 'write']), { baseDir: '.' });
  await hub.registry.register(manifest('notes', ['add'], ['reviewer']), { baseDir: '.' });
  await hub.registry.register(manifest('relay', ['write_via']), { baseDir: '.' });
  return { hub, calls, verdicts, profile };
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; details?: unknown };
  }
  return { code: 'none' };
}

describe('grant interceptor', () => {
  it('refuses an agent role without the grant with E_FORBIDDEN and a FIREWALL_VERDICT, before dispatch', async () => {
    const { hub, calls, verdicts } = await setup();
    const e = await codeOf(
      hub.request({ target: 'fs.write', payload: {}, source: agent('supervisor'), request_id: 'r-1' }),
    );
    expect(e.code).toBe('E_FORBIDDEN');
    expect(e.details).toEqual({ role: 'supervisor', tool: 'fs.write' });
    expect(calls).toEqual([]);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.request_id).toBe('r-1');
    expect(verdicts[0]!.target).toBe('fs.write');
    expect(verdicts[0]!.data).toEqual({
      action: 'deny',
      level: 'DENY',
      layer: 'permission',
      tool: 'fs.write',
      role: 'supervisor',
      principal: { kind: 'agent', id: 'bot-supervisor' },
      reasons: ['role "supervisor" has no grant for "fs.write"'],
    });
  });

  it('lets granted roles through, including by a module manifest grant', async () => {
    const { hub, calls, verdicts } = await setup();
    expect(await hub.request({ target: 'fs.read', payload: {}, source: agent('supervisor') })).toBe('content');
    expect(await hub.request({ target: 'fs.write', payload: {}, source: agent('executor') })).toBe('written');
    expect(await hub.request({ target: 'notes.add', payload: {}, source: agent('reviewer') })).toBe('added');
    expect((await codeOf(hub.request({ target: 'notes.add', payload: {}, source: agent('supervisor') }))).code).toBe(
      'E_FORBIDDEN',
    );
    expect(calls).toEqual(['fs.read', 'fs.write', 'notes.add']);
    expect(verdicts).toHaveLength(1);
  });

  it('keeps the grant check on nested calls, which act for the root principal', async () => {
    const { hub, calls } = await setup();
    const e = await codeOf(hub.request({ target: 'relay.write_via', payload: {}, source: agent('supervisor') }));
    expect(e.code).toBe('E_FORBIDDEN');
    expect(e.details).toEqual({ role: 'supervisor', tool: 'fs.write' });
    expect(calls).toEqual([]);
  });

  it('follows grant changes at once', async () => {
    const { hub, profile } = await setup();
    expect((await codeOf(hub.request({ target: 'fs.write', payload: {}, source: agent('reviewer') }))).code).toBe(
      'E_FORBIDDEN',
    );
    profile.grant('reviewer', 'fs.write');
    expect(await hub.request({ target: 'fs.write', payload: {}, source: agent('reviewer') })).toBe('written');
    profile.revoke('reviewer', 'fs.write');
    expect((await codeOf(hub.request({ target: 'fs.write', payload: {}, source: agent('reviewer') }))).code).toBe(
      'E_FORBIDDEN',
    );
  });

  it('lets admin, operator and system call any tool; refuses viewers, and modules unless granted', async () => {
    const { hub, profile } = await setup();
    expect(await hub.request({ target: 'fs.write', payload: {}, source: human('admin') })).toBe('written');
    expect(await hub.request({ target: 'fs.write', payload: {}, source: human('operator'), direct: true })).toBe(
      'written',
    );
    const system: Principal = { kind: 'system', id: 'daemon', roles: [] };
    expect(await hub.request({ target: 'fs.write', payload: {}, source: system })).toBe('written');
    const viewer = await codeOf(hub.request({ target: 'fs.read', payload: {}, source: human('viewer') }));
    expect(viewer).toMatchObject({ code: 'E_FORBIDDEN', details: { role: 'viewer', tool: 'fs.read' } });
    const mod: Principal = { kind: 'module', id: 'relay', roles: [] };
    const denied = await codeOf(hub.request({ target: 'fs.read', payload: {}, source: mod }));
    expect(denied).toMatchObject({ code: 'E_FORBIDDEN', details: { role: 'module:relay', tool: 'fs.read' } });
    profile.grant('module:relay', 'fs.read');
    expect(await hub.request({ target: 'fs.read', payload: {}, source: mod })).toBe('content');
  });

  it('builds a capability snapshot of the tools an agent role is granted', async () => {
    const { hub, profile } = await setup();
    const granted = profile.granted('reviewer', hub.tools.list()).map((t) => t.id);
    expect(granted).toEqual(['fs.read', 'notes.add']);
    const snap = hub.tools.snapshot({ tool_ids: granted, budget_tokens: 100 });
    expect(snap.tools.map((t) => t.id)).toEqual(['fs.read', 'notes.add']);
    expect(snap.dropped).toEqual([]);
  });

  it('decides without a hub: an agent with no role has no grants', () => {
    const p = new ToolGrantProfile();
    expect(decideGrant(p, { kind: 'agent', id: 'x', roles: [] }, 'fs.read')).toEqual({
      allowed: false,
      role: '(none)',
      reason: 'agent "x" has no role, so no tool grants',
    });
  });
});

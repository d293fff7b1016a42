// McpGateway's own logic over real collaborators (a MessageHub with in-memory modules, the
// firewall's ToolGrantProfile): tool naming and hints, grant filtering per principal, and the
// outcome a call ends in — a result, an isError with code and reason, "held" with its claim, a
// task; progress relayed (the tool's own and the hold's, increasing); finger_claim single use and
// owner-checked; tasks/cancel withdrawing the pending approval. A stand-in gate (an interceptor
// that announces APPROVAL_REQUESTED and waits for the test's answer) plays the person.

import { afterEach, describe, expect, it } from 'vitest';

import { ToolGrantProfile } from '@finger/firewall';
import {
  type HubCall,
  type InProcessModule,
  InProcessTransport,
  MessageHub,
  type ModuleRuntime,
  type RuntimeOptions,
  type ToolCallContext,
} from '@finger/hub';
import { FingerError, type ModuleManifest, type Principal, type ToolSpec } from '@finger/protocol';

import {
  CLAIM_TOOL,
  definitionOf,
  type McpCallResult,
  McpGateway,
  type McpTaskResult,
  resultOf,
} from '../src/mcp-gateway/mcp-gateway.js';

const agent = (id: string, role = 'agent:executor'): Principal => ({ kind: 'agent', id, roles: [role] });
const ORIGIN = 'http://127.0.0.1:7770';

/** A runtime over an in-memory module object. */
function objectRuntime(mods: Record<string, InProcessModule>) {
  return (o: RuntimeOptions): ModuleRuntime => {
    const mod = mods[o.manifest.id]!;
    return {
      type: 'object',
      start: async () => undefined,
      invoke: (tool: string, args: unknown, ctx: ToolCallContext) =>
        Promise.resolve().then(() => mod.tools[tool]!(args, ctx)),
      cancel: () => undefined,
      health: async () => ({ ok: true }),
      close: async () => undefined,
    };
  };
}

function manifest(id: string, tools: (Partial<ToolSpec> & { name: string })[], grants?: string[]): ModuleManifest {
  return {
    id,
    name: id,
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry: './none.js' },
    tools: tools.map((t) => ({ description: `${t.name} tool`, ...t })),
    ...(grants !== undefined ? { grants } : {}),
  };
}

interface Hold {
  approval_id: string;
  approve(): void;
  reject(reason: string): void;
}

/** Plays the human gate: calls to `held` targets announce an approval and wait for the test. */
function holdingGate(hub: () => MessageHub, heldTools: Set<string>) {
  const holds: Hold[] = [];
  const byId = new Map<string, (e?: FingerError) => void>();
  let n = 0;
  const interceptor = (call: HubCall, next: () => Promise<unknown>): Promise<unknown> => {
    if (!heldTools.has(call.resolved.tool_id)) return next();
    const approval_id = `appr-${++n}`;
    return new Promise<void>((resolve, reject) => {
      const settle = (e?: FingerError): void => {
        byId.delete(approval_id);
        if (e === undefined) resolve();
        else reject(e);
      };
      byId.set(approval_id, settle);
      holds.push({
        approval_id,
        approve: () => settle(),
        reject: (reason) => settle(new FingerError('E_REJECTED_BY_HUMAN', reason)),
      });
      hub().events.emit('APPROVAL_REQUESTED', call.envelope, { id: approval_id });
    }).then(next);
  };
  const withdrawn: { id: string; by: string; reason: string }[] = [];
  const approvals = {
    withdraw: async (id: string, by: { kind: string; id: string }, reason: string) => {
      const settle = byId.get(id);
      if (settle === undefined) return false;
      withdrawn.push({ id, by: `${by.kind}:${by.id}`, reason });
      settle(new FingerError('E_WITHDRAWN', reason));
      return true;
    },
  };
  return { interceptor, holds, approvals, withdrawn };
}

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

async function setup(o: { hold_ms?: number; progress_ms?: number } = {}) {
  let ran = 0;
  const mods: Record<string, InProcessModule> = {
    notes: {
      tools: {
        read: (a) => ({ text: `notes of ${(a as { who?: string }).who ?? 'nobody'}` }),
        write: () => {
          ran++;
          return 'written';
        },
        fail: () => {
          throw new FingerError('E_INVALID_ARGS', 'no such note');
        },
        blocks: () => ({ content: [{ type: 'text', text: 'as it came' }] }),
        slow: (_a, ctx) => {
          ctx.progress('one', 0.3);
          ctx.progress('two', 0.6);
          return 'slow done';
        },
      },
    },
    secret: { tools: { peek: () => 'secret' } },
  };
  const held = new Set(['notes.write']);
  const ref: { hub?: MessageHub } = {};
  const gate = holdingGate(() => ref.hub!, held);
  const hub = new MessageHub({
    createRuntime: objectRuntime(mods),
    transport: new InProcessTransport({ copy: 'none' }),
    limits: { lease_sweep_ms: 5 },
    interceptors: [gate.interceptor],
  });
  ref.hub = hub;
  hubs.push(hub);
  await hub.registry.register(
    manifest('notes', [
      { name: 'read', side_effects: false, idempotent: true, capability_level: 'L0', input_schema: { type: 'object' } },
      { name: 'write', side_effects: true, idempotent: false, capability_level: 'L1' },
      { name: 'fail' },
      { name: 'blocks' },
      { name: 'slow' },
    ]),
    { baseDir: '.' },
  );
  await hub.registry.register(manifest('secret', [{ name: 'peek', capability_level: 'L2' }], ['supervisor']), {
    baseDir: '.',
  });
  const grants = new ToolGrantProfile({ defaults: { executor: ['notes.*'], reviewer: ['notes.read'] } });
  const gw = new McpGateway({
    hub,
    grants,
    approvals: gate.approvals,
    hold_ms: o.hold_ms ?? 50,
    progress_ms: o.progress_ms ?? 10,
  });
  return { hub, gw, gate, ran: () => ran };
}

const text = (r: McpCallResult | McpTaskResult): string => (r as McpCallResult).content.map((c) => c.text).join('');

describe('McpGateway tool naming', () => {
  it('names a tool by its id, keeps its schema, and derives the hints from finger’s metadata', () => {
    const def = definitionOf({
      id: 'fs.write',
      module_id: 'fs',
      name: 'write',
      description: 'writes',
      input_schema: { type: 'object', required: ['path'] },
      side_effects: true,
      idempotent: false,
      capability_level: 'L1',
    } as unknown as Parameters<typeof definitionOf>[0]);
    expect(def).toEqual({
      name: 'fs.write',
      description: 'writes',
      inputSchema: { type: 'object', required: ['path'] },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    });
    const open = definitionOf({
      id: 'web.fetch',
      description: 'fetches',
      side_effects: false,
      idempotent: true,
      capability_level: 'L2',
    } as unknown as Parameters<typeof definitionOf>[0]);
    expect(open.inputSchema).toEqual({ type: 'object' });
    expect(open.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
  });
});

describe('McpGateway grant filtering', () => {
  it('lists exactly what each principal is granted (profile globs and manifest grants), plus finger_claim', async () => {
    const { gw } = await setup();
    const names = (p: Principal) => gw.listTools(p).map((t) => t.name);
    expect(names(agent('a'))).toEqual([
      'notes.blocks',
      'notes.fail',
      'notes.read',
      'notes.slow',
      'notes.write',
      CLAIM_TOOL,
    ]);
    expect(names(agent('r', 'agent:reviewer'))).toEqual(['notes.read', CLAIM_TOOL]);
    expect(names(agent('s', 'agent:supervisor'))).toEqual(['secret.peek', CLAIM_TOOL]);
    // a person with a dispatching role may call every tool; a viewer none
    expect(names({ kind: 'human', id: 'op', roles: ['operator'] })).toHaveLength(7);
    expect(names({ kind: 'human', id: 'v', roles: ['viewer'] })).toEqual([CLAIM_TOOL]);
  });
});

describe('McpGateway outcomes', () => {
  it('an AUTO call returns its value as JSON text with structuredContent; a string as text; content blocks as they came', async () => {
    const { gw } = await setup();
    const r = (await gw.call(agent('a'), 'notes.read', { who: 'ann' }, { origin: ORIGIN })) as McpCallResult;
    expect(r).toEqual({
      content: [{ type: 'text', text: '{"text":"notes of ann"}' }],
      structuredContent: { text: 'notes of ann' },
    });
    expect(await gw.call(agent('a'), 'notes.slow', {}, { origin: ORIGIN })).toEqual({
      content: [{ type: 'text', text: 'slow done' }],
    });
    expect(await gw.call(agent('a'), 'notes.blocks', {}, { origin: ORIGIN })).toEqual({
      content: [{ type: 'text', text: 'as it came' }],
    });
    expect(gw.stats()).toEqual({ held: 0, pending: 0 });
  });

  it('a failure is an isError result naming the code and reason, never "not found"', async () => {
    const { gw } = await setup();
    const r = (await gw.call(agent('a'), 'notes.fail', {}, { origin: ORIGIN })) as McpCallResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('E_INVALID_ARGS: no such note');
    expect(r.structuredContent).toEqual({ error: { code: 'E_INVALID_ARGS', message: 'no such note' } });
    const missing = (await gw.call(agent('a'), 'nope.tool', {}, { origin: ORIGIN })) as McpCallResult;
    expect(text(missing)).toMatch(/^E_NO_TARGET: /);
    expect(resultOf({ ok: false })).toMatchObject({ isError: true, content: [{ text: 'E_INTERNAL: failed' }] });
  });

  it('relays the tool’s own progress, increasing', async () => {
    const { gw } = await setup();
    const seen: [string, number][] = [];
    await gw.call(agent('a'), 'notes.slow', {}, { origin: ORIGIN, progress: (m, p) => seen.push([m, p]) });
    expect(seen).toEqual([
      ['one', 1],
      ['two', 2],
    ]);
  });

  it('a call still held after hold_ms answers "held" with the page and the claim; it has not run', async () => {
    const { gw, gate, ran } = await setup();
    const progress: number[] = [];
    const r = (await gw.call(
      agent('a'),
      'notes.write',
      { x: 1 },
      {
        origin: ORIGIN,
        progress: (_m, p) => progress.push(p),
      },
    )) as McpCallResult;
    const id = gate.holds[0]!.approval_id;
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent).toEqual({
      status: 'held',
      approval_id: id,
      approval_url: `${ORIGIN}/ui/approvals/${id}`,
      claim: { tool: CLAIM_TOOL, arguments: { id } },
    });
    expect(text(r)).toContain(`held for a person as ${id}`);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(ran()).toBe(0);
    expect(gw.stats()).toEqual({ held: 1, pending: 1 });
  });

  it('finger_claim: waits again while pending, then hands the approved outcome over once, to its owner only', async () => {
    const { gw, gate, ran } = await setup();
    await gw.call(agent('a'), 'notes.write', {}, { origin: ORIGIN });
    const { approval_id: id, approve } = gate.holds[0]!;
    const again = (await gw.call(agent('a'), CLAIM_TOOL, { id }, { origin: ORIGIN })) as McpCallResult;
    expect(again.structuredContent).toMatchObject({ status: 'held', approval_id: id });
    const stranger = (await gw.call(agent('b'), CLAIM_TOOL, { id }, { origin: ORIGIN })) as McpCallResult;
    expect(text(stranger)).toMatch(/^E_NOT_FOUND: /);
    approve();
    const done = (await gw.call(agent('a'), CLAIM_TOOL, { id }, { origin: ORIGIN })) as McpCallResult;
    expect(done).toEqual({ content: [{ type: 'text', text: 'written' }] });
    expect(ran()).toBe(1);
    const twice = (await gw.call(agent('a'), CLAIM_TOOL, { id }, { origin: ORIGIN })) as McpCallResult;
    expect(text(twice)).toMatch(/^E_NOT_FOUND: /);
    const bad = (await gw.call(agent('a'), CLAIM_TOOL, {}, { origin: ORIGIN })) as McpCallResult;
    expect(bad.structuredContent).toEqual({ error: { code: 'E_INVALID_ARGS', message: 'id is required' } });
  });

  it('the same call retried finds its own held call; different arguments are a new call', async () => {
    const { gw, gate } = await setup();
    await gw.call(agent('a'), 'notes.write', { x: 1 }, { origin: ORIGIN });
    await gw.call(agent('a'), 'notes.write', { x: 1 }, { origin: ORIGIN });
    expect(gate.holds).toHaveLength(1);
    await gw.call(agent('a'), 'notes.write', { x: 2 }, { origin: ORIGIN });
    expect(gate.holds).toHaveLength(2);
    gate.holds[0]!.reject('not today');
    const r = (await gw.call(agent('a'), 'notes.write', { x: 1 }, { origin: ORIGIN })) as McpCallResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('E_REJECTED_BY_HUMAN: not today');
  });

  it('with the tasks extension a held call becomes a task; getTask completes it once, owner-checked', async () => {
    const { gw, gate } = await setup();
    const t = (await gw.call(agent('a'), 'notes.write', {}, { origin: ORIGIN, tasks: true })) as McpTaskResult;
    const id = gate.holds[0]!.approval_id;
    expect(t).toMatchObject({ resultType: 'task', taskId: id, status: 'working', ttlMs: 600_000 });
    expect(gw.getTask(agent('a'), id)).toMatchObject({ resultType: 'complete', status: 'working' });
    expect(gw.getTask(agent('b'), id)).toBeUndefined();
    gate.holds[0]!.approve();
    await expect.poll(() => gw.getTask(agent('a'), id)?.status).toBe('completed');
    expect(gw.getTask(agent('a'), id)).toBeUndefined();
  });

  it('tasks/cancel withdraws the pending approval as the caller; the call never runs and nothing is kept', async () => {
    const { gw, gate, ran } = await setup();
    await gw.call(agent('a'), 'notes.write', {}, { origin: ORIGIN, tasks: true });
    const id = gate.holds[0]!.approval_id;
    expect(await gw.cancelTask(agent('b'), id)).toBe(false);
    expect(gate.withdrawn).toEqual([]);
    expect(await gw.cancelTask(agent('a'), id)).toBe(true);
    expect(gate.withdrawn).toEqual([{ id, by: 'agent:a', reason: `withdrawn by the caller (tasks/cancel ${id})` }]);
    await expect.poll(() => gw.stats()).toEqual({ held: 0, pending: 0 });
    expect(ran()).toBe(0);
    expect(gw.getTask(agent('a'), id)).toBeUndefined();
  });

  it('after close() a call is refused with E_PROVIDER_CLOSED', async () => {
    const { gw } = await setup();
    gw.close();
    const r = (await gw.call(agent('a'), 'notes.read', {}, { origin: ORIGIN })) as McpCallResult;
    expect(text(r)).toMatch(/^E_PROVIDER_CLOSED: /);
  });
});

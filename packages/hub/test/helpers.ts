import type { ModuleManifest, ToolSpec } from '@finger/protocol';
import { FingerError, type Principal } from '@finger/protocol';
import { waitUntil } from '@finger/testkit/core';

import type { InProcessModule, ModuleRuntime, RuntimeHealth, RuntimeOptions, ToolCallContext } from '../src/index.js';

/** A runtime over an in-memory module object (test collaborator of the hub). */
export class ObjectRuntime implements ModuleRuntime {
  readonly type = 'object';
  healthy: RuntimeHealth = { ok: true };
  closed = false;
  cancelled: string[] = [];
  constructor(private readonly mod: InProcessModule) {}
  async start(): Promise<void> {}
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    if (this.closed) return Promise.reject(new FingerError('E_PROVIDER_CLOSED', 'closed'));
    const fn = this.mod.tools[tool];
    if (!fn) return Promise.reject(new FingerError('E_NO_TARGET', `no tool ${tool}`));
    return Promise.resolve().then(() => fn(args, ctx));
  }
  cancel(call_id: string): void {
    this.cancelled.push(call_id);
  }
  async health(): Promise<RuntimeHealth> {
    return this.healthy;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Lets a test map module ids to module objects; falls back to nothing. */
export function objectRuntimes(mods: Record<string, InProcessModule>, made: Record<string, ObjectRuntime> = {}) {
  return (o: RuntimeOptions): ModuleRuntime => {
    const mod = mods[o.manifest.id];
    if (!mod) throw new Error(`test has no module object for ${o.manifest.id}`);
    const rt = new ObjectRuntime(mod);
    made[o.manifest.id] = rt;
    return rt;
  };
}

/** A minimal valid manifest. */
export function manifest(
  id: string,
  tools: (Partial<ToolSpec> & { name: string })[],
  extra: Partial<ModuleManifest> = {},
): ModuleManifest {
  return {
    id,
    name: id,
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry: './none.js' },
    tools: tools.map((t) => ({ description: t.name, ...t })),
    ...extra,
  };
}

export const human: Principal = { kind: 'human', id: 'tester', roles: ['operator'] };

/** Awaits a promise expected to reject and returns the error (fails the test otherwise). */
export async function rejectionOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: any }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details?: any };
  }
  throw new Error('expected a rejection');
}

/** Polls `cond` until true (bounded), for waiting on background effects without timing assertions. */
export function until(cond: () => boolean, what = 'condition', ms = 10_000): Promise<void> {
  return waitUntil(what, cond, ms, 5);
}

// MCP servers as tool providers, against the real third-party servers from npm (run from
// node_modules with this node, so no network): server-filesystem and server-everything over stdio,
// server-everything over streamable HTTP, through a real MessageHub.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createRuntime,
  mcpManifest,
  type McpRuntime,
  type McpServerConfig,
  MessageHub,
  type ModuleRuntime,
  type RuntimeHealth,
  type RuntimeOptions,
  type ToolCallContext,
} from '@finger/hub';
import type { FingerEvent, Principal } from '@finger/protocol';
import { FingerError } from '@finger/protocol';
import { waitUntil } from '@finger/testkit/core';

const NM = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/', import.meta.url));
const FS_SERVER = path.join(NM, 'server-filesystem', 'dist', 'index.js');
const EVERYTHING = path.join(NM, 'server-everything', 'dist', 'index.js');
const human: Principal = { kind: 'human', id: 'tester', roles: ['operator'] };

/** What the runtime did with a call's context (progress reports, lease extensions). */
interface Observed {
  progress: [string, number | undefined][];
  leases: number[];
}

/** Wraps a runtime to record progress and lease extensions on the way to the caller. */
class ObservedRuntime implements ModuleRuntime {
  readonly type: string;
  constructor(
    readonly inner: ModuleRuntime,
    private readonly seen: Observed,
  ) {
    this.type = inner.type;
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    const seen = this.seen;
    const wrapped = Object.create(ctx, {
      progress: { value: (m: string, f?: number) => (seen.progress.push([m, f]), ctx.progress(m, f)) },
      extendLease: { value: (ttl: number) => (seen.leases.push(ttl), ctx.extendLease(ttl)) },
    }) as ToolCallContext;
    return this.inner.invoke(tool, args, wrapped);
  }
  cancel(id: string, reason: string): void {
    this.inner.cancel(id, reason);
  }
  health(t: number): Promise<RuntimeHealth> {
    return this.inner.health(t);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  describeTools() {
    return this.inner.describeTools?.() ?? [];
  }
}

async function failure(p: Promise<unknown>): Promise<FingerError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FingerError) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** server-everything in streamableHttp mode on a free port (it takes its port from PORT). */
async function startHttpEverything(): Promise<{ child: ChildProcess; url: string }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ok = await new Promise<boolean>((resolve) => {
      let err = '';
      child.stderr!.on('data', (d: Buffer) => {
        err += String(d);
        if (err.includes('listening on port')) resolve(true);
      });
      child.once('exit', () => resolve(false));
    });
    if (ok) return { child, url: `http://127.0.0.1:${port}/mcp` };
    if (attempt >= 3) throw new Error('server-everything (streamableHttp) did not start');
  }
}

let home: string;
let hub: MessageHub;
const seen: Observed = { progress: [], leases: [] };
const runtimes: Record<string, ObservedRuntime> = {};
const events: FingerEvent[] = [];
let http: { child: ChildProcess; url: string } | undefined;

async function register(entry: McpServerConfig) {
  return hub.registry.register(mcpManifest(entry), { baseDir: home });
}
const mcp = (id: string) => runtimes[id]!.inner as McpRuntime;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'finger-mcp-int-'));
  await writeFile(path.join(home, 'note.txt'), 'hello from the workspace\n');
  hub = new MessageHub({
    settingsFor: () => ({ home }),
    createRuntime: (o: RuntimeOptions) => (runtimes[o.manifest.id] = new ObservedRuntime(createRuntime(o), seen)),
  });
  hub.events.subscribe({ types: ['MODULE_HEALTH'] }, (e) => events.push(e));
  http = await startHttpEverything();
});

afterAll(async () => {
  await hub?.close(0);
  http?.child.kill('SIGKILL');
  await rm(home, { recursive: true, force: true });
});

describe('MCP: @modelcontextprotocol/server-filesystem over stdio', () => {
  it('lists its tools under mcp.<name>.*; annotations count only for a trusted server', async () => {
    const trusted = await register({
      name: 'fs',
      transport: 'stdio',
      command: [process.execPath, FS_SERVER, home],
      trusted: true,
    });
    const untrusted = await register({
      name: 'fs_untrusted',
      transport: 'stdio',
      command: [process.execPath, FS_SERVER, home],
    });
    const names = trusted.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'read_text_file', 'write_file', 'list_directory']));
    expect(hub.resolveTarget('mcp.fs.read_text_file').tool_id).toBe('mcp.fs.read_text_file');
    const risk = (tools: typeof trusted.tools, name: string) => tools.find((t) => t.name === name);
    expect(risk(trusted.tools, 'read_file')).toMatchObject({
      risk_level: 'low',
      capability_level: 'L0',
      side_effects: false,
    });
    expect(risk(trusted.tools, 'write_file')).toMatchObject({
      risk_level: 'high',
      capability_level: 'L2',
      idempotent: true,
    });
    expect(risk(trusted.tools, 'create_directory')).toMatchObject({ risk_level: 'medium' });
    for (const t of untrusted.tools) expect([t.name, t.risk_level, t.capability_level]).toEqual([t.name, 'high', 'L2']);
  });

  it('reads a file through the hub', async () => {
    const r = (await hub.request({
      target: 'mcp.fs.read_text_file',
      payload: { path: path.join(home, 'note.txt') },
      source: human,
    })) as { content: { type: string; text: string }[] };
    expect(r.content).toEqual([{ type: 'text', text: 'hello from the workspace\n' }]);
  });

  it("the server's own refusal (a path outside its roots) is E_MODULE_ERROR with its message", async () => {
    const err = await failure(
      hub.request({ target: 'mcp.fs.read_text_file', payload: { path: '/etc/hostname' }, source: human }),
    );
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.message).toContain('outside allowed directories');
  });
});

describe('MCP: @modelcontextprotocol/server-everything over stdio', () => {
  beforeAll(async () => {
    await register({
      name: 'every',
      transport: 'stdio',
      command: [process.execPath, EVERYTHING, 'stdio'],
      timeout_ms: 1500,
    });
  });

  it('lists and calls echo', async () => {
    const tools = hub.registry.get('mcp.every')!.tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']));
    expect(await hub.request({ target: 'mcp.every.echo', payload: { message: 'hi' }, source: human })).toEqual({
      content: [{ type: 'text', text: 'Echo: hi' }],
    });
  });

  it('a call past its timeout is E_TIMEOUT', async () => {
    const err = await failure(
      hub.request({
        target: 'mcp.every.trigger-long-running-operation',
        payload: { duration: 20, steps: 2 },
        source: human,
        timeout_ms: 400,
      }),
    );
    expect(err.code).toBe('E_TIMEOUT');
  });

  it('progress notifications reach the caller and extend the lease past its 1.5 s ttl', async () => {
    seen.progress.length = 0;
    seen.leases.length = 0;
    const r = await hub.request({
      target: 'mcp.every.trigger-long-running-operation',
      payload: { duration: 4, steps: 8 },
      source: human,
      timeout_ms: 30_000,
    });
    expect(r).toEqual({
      content: [{ type: 'text', text: 'Long running operation completed. Duration: 4 seconds, Steps: 8.' }],
    });
    expect(seen.progress.length).toBeGreaterThanOrEqual(4);
    expect(seen.progress[0]).toEqual(['1/8', 0.125]);
    expect(seen.leases.every((t) => t === 1500)).toBe(true);
    expect(seen.leases.length).toBe(seen.progress.length);
  });

  it('a crashed server fails the in-flight call with E_MODULE_CRASHED, then comes back', async () => {
    const rt = mcp('mcp.every');
    const pid = rt.stats().pid!;
    const call = failure(
      hub.request({
        target: 'mcp.every.trigger-long-running-operation',
        payload: { duration: 30, steps: 30 },
        source: human,
      }),
    );
    await waitUntil('call in flight', () => rt.stats().inflight === 1, 10_000, 25);
    process.kill(pid, 'SIGKILL');
    expect((await call).code).toBe('E_MODULE_CRASHED');
    await waitUntil(
      'crash event',
      () => events.some((e) => e.target === 'mcp.every' && e.data.runtime === 'crashed'),
      10_000,
      25,
    );
    // calls wait for the restart instead of failing
    expect(
      await hub.request({ target: 'mcp.every.echo', payload: { message: 'again' }, source: human, timeout_ms: 20_000 }),
    ).toEqual({
      content: [{ type: 'text', text: 'Echo: again' }],
    });
    expect(rt.stats()).toMatchObject({ state: 'running', restarts: 1 });
    expect(rt.stats().pid).not.toBe(pid);
  });

  it('close kills the child; calls after close fail E_PROVIDER_CLOSED; close again is a no-op', async () => {
    const rt = mcp('mcp.every');
    const pid = rt.stats().pid!;
    await rt.close();
    await waitUntil('server process gone', () => !alive(pid), 10_000, 25);
    await rt.close();
    const err = await failure(hub.request({ target: 'mcp.every.echo', payload: { message: 'x' }, source: human }));
    expect(err.code).toBe('E_PROVIDER_CLOSED');
  });
});

describe('MCP: @modelcontextprotocol/server-everything over streamable HTTP', () => {
  it('lists, calls and reports progress', async () => {
    const info = await register({ name: 'web', transport: 'http', url: http!.url });
    expect(info.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'trigger-long-running-operation']));
    expect(info.tools.every((t) => t.risk_level === 'high')).toBe(true);
    expect(await hub.request({ target: 'mcp.web.echo', payload: { message: 'over http' }, source: human })).toEqual({
      content: [{ type: 'text', text: 'Echo: over http' }],
    });
    seen.progress.length = 0;
    await hub.request({
      target: 'mcp.web.trigger-long-running-operation',
      payload: { duration: 1, steps: 2 },
      source: human,
    });
    expect(seen.progress[0]).toEqual(['1/2', 0.5]);
    const err = await failure(
      hub.request({
        target: 'mcp.web.trigger-long-running-operation',
        payload: { duration: 20, steps: 2 },
        source: human,
        timeout_ms: 300,
      }),
    );
    expect(err.code).toBe('E_TIMEOUT');
    await hub.registry.unregister('mcp.web');
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

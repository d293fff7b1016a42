import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { FingerEvent, ModuleManifest } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import { MessageHub } from '../../src/message-hub.js';
import type { McpRuntime } from '../../src/runtime/mcp.js';
import { mcpManifest } from '../../src/runtime/mcp-config.js';
import { human, until } from '../helpers.js';

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/mcp/fixture-server.mjs', import.meta.url));

function fixture(env: Record<string, string> = {}, trusted = false): ModuleManifest {
  return mcpManifest({ name: 'fix', transport: 'stdio', command: [process.execPath, FIXTURE], env, trusted });
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

describe('McpRuntime against the fixture server', () => {
  let home: string;
  let hub: MessageHub;
  let events: FingerEvent[];

  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'finger-mcp-'));
    hub = new MessageHub({ settingsFor: () => ({ home }) });
    events = [];
    hub.events.subscribe({ types: ['MODULE_HEALTH', 'FIREWALL_VERDICT', 'MODULE_REGISTERED'] }, (e) => events.push(e));
  });
  afterEach(async () => {
    await hub.close(0);
    await rm(home, { recursive: true, force: true });
  });

  it('lists tools as mcp.fix.*, pins them, calls them; isError → E_MODULE_ERROR; bad args → E_INVALID_ARGS', async () => {
    const info = await hub.registry.register(fixture({ FIXTURE_DESCRIPTION: 'v1' }), { baseDir: home });
    expect(info.tools.map((t) => t.name)).toEqual(['hello', 'sleep', 'fail']);
    expect(info.tools[0]).toMatchObject({ description: 'v1', risk_level: 'high', capability_level: 'L2' });
    expect(hub.resolveTarget('mcp.fix.hello').tool_id).toBe('mcp.fix.hello');
    expect(await hub.request({ target: 'mcp.fix.hello', payload: { name: 'finger' }, source: human })).toEqual({
      content: [{ type: 'text', text: 'hello finger' }],
    });
    const err = await failure(hub.request({ target: 'mcp.fix.fail', payload: {}, source: human }));
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.message).toBe('MCP tool "mcp.fix.fail" failed: it failed on purpose');
    const bad = await failure(hub.request({ target: 'mcp.fix.hello', payload: [1], source: human }));
    expect(bad.code).toBe('E_INVALID_ARGS');
    const pins = JSON.parse(await readFile(path.join(home, 'state', 'mcp-pins.json'), 'utf8'));
    expect(Object.keys(pins.servers['mcp.fix'])).toEqual(['hello', 'sleep', 'fail']);
    expect(pins.servers['mcp.fix'].hello.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('a trusted server gets risk from annotations', async () => {
    const info = await hub.registry.register(fixture({}, true), { baseDir: home });
    expect(info.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.idempotent])).toEqual([
      ['hello', 'low', 'L0', true],
      ['sleep', 'high', 'L2', false],
      ['fail', 'high', 'L2', false],
    ]);
  });

  it('drift: a changed description quarantines the tool (E_FORBIDDEN + event) until trust re-pins it', async () => {
    await hub.registry.register(fixture({ FIXTURE_DESCRIPTION: 'v1' }), { baseDir: home });
    await hub.registry.unregister('mcp.fix');
    await hub.registry.register(fixture({ FIXTURE_DESCRIPTION: 'v2 — now also uploads your keys' }), { baseDir: home });
    const rt = hub.registry.runtimeOf('mcp.fix') as McpRuntime;
    const q = rt.quarantined().hello!;
    expect(q).toMatchObject({ reason: 'definition changed', tool: 'mcp.fix.hello' });
    expect(q.pinned_hash).not.toBe(q.current_hash);

    const err = await failure(hub.request({ target: 'mcp.fix.hello', payload: {}, source: human }));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.details).toEqual({
      reason: 'definition changed',
      tool: 'mcp.fix.hello',
      pinned_hash: q.pinned_hash,
      current_hash: q.current_hash,
    });
    const verdict = events.find((e) => e.type === 'FIREWALL_VERDICT');
    expect(verdict?.target).toBe('mcp.fix');
    expect(verdict?.data).toMatchObject({
      action: 'quarantine',
      quarantined: 'mcp.fix.hello',
      reason: 'definition changed',
    });
    // the other tools are untouched
    expect(await hub.request({ target: 'mcp.fix.sleep', payload: { ms: 1 }, source: human })).toEqual({
      content: [{ type: 'text', text: 'slept 1' }],
    });

    const stale = await failure(rt.trust('hello', q.pinned_hash));
    expect(stale.code).toBe('E_CONFLICT');
    expect((await failure(rt.trust('nope'))).code).toBe('E_NOT_FOUND');
    expect(await rt.trust('hello', q.current_hash)).toEqual({ tool: 'mcp.fix.hello', pinned_hash: q.current_hash });
    expect(rt.quarantined()).toEqual({});
    expect(await hub.request({ target: 'mcp.fix.hello', payload: {}, source: human })).toEqual({
      content: [{ type: 'text', text: 'hello world' }],
    });

    // the new pin persists: the next start sees no drift
    await hub.registry.unregister('mcp.fix');
    await hub.registry.register(fixture({ FIXTURE_DESCRIPTION: 'v2 — now also uploads your keys' }), { baseDir: home });
    expect((hub.registry.runtimeOf('mcp.fix') as McpRuntime).quarantined()).toEqual({});
  });

  it('a failing tools/list leaves the module registered with no tools and a MODULE_HEALTH event', async () => {
    const info = await hub.registry.register(fixture({ FIXTURE_FAIL_LIST: '1' }), { baseDir: home });
    expect(info.tools).toEqual([]);
    expect(hub.registry.get('mcp.fix')?.tools).toEqual([]);
    const health = events.find((e) => e.type === 'MODULE_HEALTH');
    expect(health?.target).toBe('mcp.fix');
    expect(health?.data).toMatchObject({ id: 'mcp.fix', healthy: false, tools: 0 });
    expect(String(health?.data.detail)).toContain('tools/list failed');
    expect(events.find((e) => e.type === 'MODULE_REGISTERED')?.data).toMatchObject({ id: 'mcp.fix', tools: [] });
    expect(await hub.registry.checkHealth('mcp.fix')).toMatchObject({ healthy: false });
  });

  it('a timed-out call is E_TIMEOUT and the server receives notifications/cancelled', async () => {
    const log = path.join(home, 'cancel.log');
    await hub.registry.register(fixture({ FIXTURE_CANCEL_LOG: log }), { baseDir: home });
    const err = await failure(
      hub.request({ target: 'mcp.fix.sleep', payload: { ms: 30_000 }, source: human, timeout_ms: 300 }),
    );
    expect(err.code).toBe('E_TIMEOUT');
    await until(() => existsSync(log), 'the server saw the cancellation');
    expect(await readFile(log, 'utf8')).toBe('cancelled 30000\n');
  });

  it('close is idempotent; calls after close fail E_PROVIDER_CLOSED; start after close too', async () => {
    await hub.registry.register(fixture(), { baseDir: home });
    const rt = hub.registry.runtimeOf('mcp.fix') as McpRuntime;
    const pid = rt.stats().pid!;
    expect(pid).toBeGreaterThan(0);
    const inflight = failure(hub.request({ target: 'mcp.fix.sleep', payload: { ms: 30_000 }, source: human }));
    await until(() => rt.stats().inflight === 1, 'call in flight');
    await Promise.all([rt.close(), rt.close()]);
    expect((await inflight).code).toBe('E_PROVIDER_CLOSED');
    await until(() => !alive(pid), 'the server process is gone');
    expect((await failure(hub.request({ target: 'mcp.fix.hello', payload: {}, source: human }))).code).toBe(
      'E_PROVIDER_CLOSED',
    );
    expect((await failure(rt.start())).code).toBe('E_PROVIDER_CLOSED');
  });

  it('a server that cannot start refuses the registration with E_MODULE_UNHEALTHY', async () => {
    const m = mcpManifest({ name: 'nope', transport: 'stdio', command: [path.join(home, 'no-such-binary')] });
    expect((await failure(hub.registry.register(m, { baseDir: home }))).code).toBe('E_MODULE_UNHEALTHY');
    expect(hub.registry.get('mcp.nope')).toBeUndefined();
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

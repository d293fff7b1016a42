import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';
import { waitFor } from '@finger/testkit/core';

import { MessageHub } from '../../src/message-hub.js';
import type { McpRuntime } from '../../src/runtime/mcp.js';
import { mcpManifest } from '../../src/runtime/mcp-config.js';
import { human } from '../helpers.js';

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/mcp/fixture-server.mjs', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

describe('halt kills a stdio MCP server (McpRuntime.kill through hub.abortAll)', () => {
  let home: string;
  let hub: MessageHub;
  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'finger-mcp-kill-'));
    hub = new MessageHub({ settingsFor: () => ({ home }) });
  });
  afterEach(async () => {
    await hub.close(0);
    await rm(home, { recursive: true, force: true });
  });

  it('a running call fails with E_HALTED and the server process is gone when abortAll resolves', async () => {
    const manifest = mcpManifest({ name: 'fix', transport: 'stdio', command: [process.execPath, FIXTURE] });
    await hub.registry.register(manifest, { baseDir: home });
    const rt = hub.registry.runtimeOf('mcp.fix') as McpRuntime;
    const pid = rt.stats().pid!;
    expect(alive(pid)).toBe(true);
    const call = hub
      .request({ target: 'mcp.fix.sleep', payload: { ms: 60_000 }, source: human, timeout_ms: 120_000 })
      .catch((e: unknown) => e);
    // started at the server (what abortAll cancels and kills), not still on its way
    await waitFor('the call running at the server', async () =>
      hub.registry.get('mcp.fix')?.inflight ? true : undefined,
    );
    const r = await hub.abortAll(new FingerError('E_HALTED', 'halted'), 0);
    expect(r).toMatchObject({ cancelled: 1, aborted: 1, killed: ['mcp.fix'] });
    expect(await call).toMatchObject({ code: 'E_HALTED' });
    await waitFor('the server process gone', async () => (alive(pid) ? undefined : true), 5000);
  });
});

// MCP servers from the daemon config (mcp.servers), drift across daemon restarts, and re-pinning
// through POST /v1/tools/:id/trust and `myfinger tool trust`.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { runCli, type TempDir, tempDir } from '@finger/testkit';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/fixture-server.mjs', import.meta.url));

let home: TempDir;
let app: FingerApp | undefined;

beforeEach(async () => {
  home = await tempDir('finger-mcp-daemon-');
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await home.remove();
});

async function start(description: string, extra: unknown[] = []): Promise<{ url: string; token: string }> {
  const servers = [
    {
      name: 'fix',
      transport: 'stdio',
      command: [process.execPath, FIXTURE],
      env: { FIXTURE_DESCRIPTION: description },
    },
    ...extra,
  ];
  app = await build({
    home: home.path,
    env: {},
    config: {
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      modules: { builtin: false },
      mcp: { servers },
    },
  });
  const { url } = await app.listen();
  const token = (await readFile(join(home.path, 'token'), 'utf8')).trim();
  return { url, token };
}

async function http(d: { url: string; token: string }, method: string, path: string, body?: unknown) {
  const res = await fetch(d.url + path, {
    method,
    headers: {
      authorization: `Bearer ${d.token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('mcp.servers in the daemon config', () => {
  it('loads the good entries; bad and duplicate ones are skipped and listed in moduleErrors', async () => {
    const d = await start('v1', [
      { name: 'Bad', transport: 'stdio', command: ['x'] },
      { name: 'fix', transport: 'http', url: 'http://127.0.0.1:9/mcp' },
      { name: 'gone', transport: 'stdio', command: [join(home.path, 'no-such-server')] },
    ]);
    const mods = await http(d, 'GET', '/v1/modules');
    expect(mods.body.modules.map((m: { id: string }) => m.id)).toEqual(['mcp.fix', 'supervisor']);
    expect(app!.moduleErrors.map((e) => e.code).sort()).toEqual(['E_CONFLICT', 'E_INVALID_ARGS', 'E_MODULE_UNHEALTHY']);
    const run = await http(d, 'POST', '/v1/tools/mcp.fix.hello/run', { args: { name: 'daemon' } });
    expect(run.status).toBe(200);
    expect(run.body.result).toEqual({ content: [{ type: 'text', text: 'hello daemon' }] });
  });

  it('drift across restarts quarantines the tool until POST /v1/tools/:id/trust, then `tool trust` is a no-op re-pin', async () => {
    let d = await start('v1');
    expect((await http(d, 'POST', '/v1/tools/mcp.fix.hello/run', { args: {} })).status).toBe(200);
    await app!.close();

    d = await start('v2: changed behind your back');
    const refused = await http(d, 'POST', '/v1/tools/mcp.fix.hello/run', { args: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('E_FORBIDDEN');
    expect(refused.body.error.details).toMatchObject({ reason: 'definition changed', tool: 'mcp.fix.hello' });
    const { current_hash, pinned_hash } = refused.body.error.details;

    const viewer = await http(d, 'POST', '/v1/tokens', { name: 'v', role: 'viewer' });
    const asViewer = await fetch(`${d.url}/v1/tools/mcp.fix.hello/trust`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer.body.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(asViewer.status).toBe(403);

    const stale = await http(d, 'POST', '/v1/tools/mcp.fix.hello/trust', { expected_hash: pinned_hash });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'E_CONFLICT']);
    const trusted = await http(d, 'POST', '/v1/tools/mcp.fix.hello/trust', { expected_hash: current_hash });
    expect(trusted).toEqual({ status: 200, body: { id: 'mcp.fix.hello', pinned_hash: current_hash } });
    expect((await http(d, 'POST', '/v1/tools/mcp.fix.hello/run', { args: {} })).status).toBe(200);

    const notMcp = await http(d, 'POST', '/v1/tools/mcp.fix.nope/trust', {});
    expect([notMcp.status, notMcp.body.error.code]).toEqual([404, 'E_NO_TARGET']);

    const cli = await runCli(['tool', 'trust', 'mcp.fix.hello', '--json'], {
      FINGER_HOME: home.path,
      FINGER_URL: d.url,
    });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ id: 'mcp.fix.hello', pinned_hash: current_hash });
  });
});

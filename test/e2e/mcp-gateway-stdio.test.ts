// `myfinger mcp` (issue 24, item 5): the built CLI as a stdio MCP server, spawned by a real MCP
// client (@modelcontextprotocol/client's StdioClientTransport, both eras), relaying to a running
// daemon's /mcp gateway; and `myfinger mcp config <client>` printing each client's snippet.

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MYFINGER_BIN, runCli, startTestDaemon, type TestDaemon } from '@finger/testkit';

let d: TestDaemon;
let executor: string;

beforeAll(async () => {
  d = await startTestDaemon();
  executor = await d.token('agent:executor', 'stdio-exec');
}, 60_000);

afterAll(async () => {
  await d?.close();
});

async function spawnRelay(mode: 'legacy' | 'auto', token: string): Promise<Client> {
  const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MYFINGER_BIN, 'mcp'],
      env: { PATH: process.env.PATH ?? '', FINGER_URL: d.url, FINGER_MCP_TOKEN: token, FINGER_HOME: d.home },
      stderr: 'ignore',
    }),
  );
  return client;
}

describe.each([
  { era: '2025-11-25', mode: 'legacy' as const },
  { era: '2026-07-28', mode: 'auto' as const },
])('myfinger mcp (stdio relay), $era era', ({ era, mode }) => {
  it('lists the granted tools and runs an AUTO call through the gateway', async () => {
    const client = await spawnRelay(mode, executor);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(era);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('shell.exec');
      expect(names).toContain('finger_claim');
      const r = await client.callTool({ name: 'echo.echo', arguments: { text: `relayed ${mode}` } });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.content)).toContain(`relayed ${mode}`);
    } finally {
      await client.close();
    }
  });
});

describe('myfinger mcp with a bad token', () => {
  it('answers each request with the daemon’s refusal (E_UNAUTHENTICATED) instead of hanging', async () => {
    await expect(spawnRelay('legacy', 'fgr_not-a-token')).rejects.toThrow(/E_UNAUTHENTICATED/);
  });
});

describe('myfinger mcp config <client>', () => {
  const env = (): Record<string, string> => ({ FINGER_URL: d.url, FINGER_TOKEN: d.adminToken, FINGER_HOME: d.home });
  it.each(['claude', 'codex', 'cursor', 'vscode'])('%s: a snippet naming the gateway and no token', async (client) => {
    const r = await runCli(['mcp', 'config', client, '--json'], env());
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { client: string; url: string; text: string; file: string };
    expect(out.client).toBe(client);
    expect(out.url).toBe(`${d.url}/mcp`);
    expect(out.text).toContain(client === 'codex' ? `FINGER_URL = "${d.url}"` : `${d.url}/mcp`);
    expect(out.text).not.toContain(d.adminToken);
  });
  it('an unknown client is E_INVALID_ARGS', async () => {
    const r = await runCli(['mcp', 'config', 'notepad', '--json'], env());
    expect(r.code).not.toBe(0);
    expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe('E_INVALID_ARGS');
  });
});

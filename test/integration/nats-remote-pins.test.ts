import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import {
  binaryForTests,
  natsServerBinary,
  type NatsServerChild,
  startCli,
  startConfiguredNats,
  testClusterName,
  waitFor,
} from '@finger/testkit';

// An MCP server hosted by `module serve` keeps its pinned tool definitions in `--pins-file`, so a
// restart of the host checks them against the pins (and quarantines a changed one) instead of
// pinning whatever the server says then.
const bin = binaryForTests(
  natsServerBinary(),
  'NATS remote MCP pins tests',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const KEY = 'nats-remote-pins-key-0123456789abcd';
const cluster = testClusterName('pins');

describe.skipIf(bin === undefined)('module serve of an MCP server with --pins-file', () => {
  let server: NatsServerChild | undefined;
  let dir: string;

  beforeAll(async () => {
    server = await startConfiguredNats(bin!, '');
    dir = mkdtempSync(join(tmpdir(), 'finger-remote-pins-'));
    writeFileSync(
      join(dir, 'module.json'),
      JSON.stringify({
        id: 'mcp.every',
        name: 'server-everything',
        version: '1.0.0',
        kind: 'tool',
        runtime: { type: 'mcp', transport: 'stdio', command: [process.execPath, EVERYTHING, 'stdio'] },
        tools: [],
      }),
    );
  });
  afterAll(() => {
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pins the tool definitions in the file, and says nothing of in-memory pins', async () => {
    const pins = join(dir, 'state', 'pins.json');
    const host = startCli(
      ['module', 'serve', dir, '--nats', server!.url, '--cluster', cluster, '--pins-file', pins],
      { FINGER_SERVE_KEY: serveKeyOf(KEY, 'mcp.every') },
      { timeout_ms: 60_000 },
    );
    try {
      await waitFor('module serve to start', async () =>
        /serving mcp\.every on cluster/.test(host.out()) || !host.running() ? true : undefined,
      );
      expect(host.running()).toBe(true);
      expect(existsSync(pins)).toBe(true);
      const file = JSON.parse(readFileSync(pins, 'utf8')) as {
        version: number;
        servers: Record<string, Record<string, { hash: string }>>;
      };
      expect(file.version).toBe(1);
      expect(file.servers['mcp.every']?.echo?.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(host.err()).not.toMatch(/MCP pins are kept in memory only/);
    } finally {
      host.kill('SIGTERM');
      await host.done;
    }
  });
});

import { describe, expect, it } from 'vitest';

import { assertManifest, manifestIssues } from '@finger/protocol';

import { mcpManifest, parseMcpServers } from '../../src/runtime/mcp-config.js';

describe('parseMcpServers', () => {
  it('skips bad and duplicate entries with an error each; the others load', () => {
    const { servers, errors } = parseMcpServers([
      { name: 'fs', transport: 'stdio', command: ['node', 'fs.js'], trusted: true, timeout_ms: 5000 },
      { name: 'Bad-Name', transport: 'stdio', command: ['x'] },
      { name: 'web', transport: 'http', url: 'http://127.0.0.1:9/mcp' },
      { name: 'fs', transport: 'http', url: 'http://127.0.0.1:9/mcp' },
      { name: 'nocmd', transport: 'stdio' },
      { name: 'mixed', transport: 'http', url: 'http://x/mcp', command: ['y'] },
      'garbage',
    ]);
    expect(servers.map((s) => s.name)).toEqual(['fs', 'web']);
    expect(errors.map((e) => [e.code, (e.details as { index?: number }).index])).toEqual([
      ['E_INVALID_ARGS', 1],
      ['E_CONFLICT', 3],
      ['E_INVALID_ARGS', 4],
      ['E_INVALID_ARGS', 5],
      ['E_INVALID_ARGS', 6],
    ]);
    expect((errors[0]!.details as { issues: unknown }).issues).toEqual([
      { path: '$.name', message: 'must match pattern "^[a-z0-9_]{1,60}$"' },
    ]);
    expect((errors[2]!.details as { issues: unknown }).issues).toEqual([{ path: '$.command', message: 'is required' }]);
    expect((errors[3]!.details as { issues: unknown }).issues).toEqual([
      { path: '$.command', message: 'is not allowed with transport "http"' },
    ]);
    expect(errors[1]!.message).toBe('mcp.servers[3] ("fs") skipped: duplicates mcp.servers[0]');
  });

  it('accepts no servers and refuses a non-array', () => {
    expect(parseMcpServers(undefined)).toEqual({ servers: [], errors: [] });
    expect(parseMcpServers({}).errors).toEqual([{ code: 'E_INVALID_ARGS', message: 'mcp.servers must be an array' }]);
  });
});

describe('mcpManifest', () => {
  it('builds a valid module manifest `mcp.<name>`', () => {
    const m = mcpManifest({
      name: 'fs',
      transport: 'stdio',
      command: ['node', 'fs.js'],
      env: { A: '1' },
      trusted: true,
      timeout_ms: 5000,
    });
    expect(assertManifest(m)).toEqual({
      id: 'mcp.fs',
      name: 'MCP server fs',
      version: '0.0.0',
      description: 'MCP server "fs" over stdio (trusted)',
      kind: 'tool',
      runtime: { type: 'mcp', transport: 'stdio', command: ['node', 'fs.js'], env: { A: '1' }, trusted: true },
      tools: [],
      lease: { ttl_ms: 5000 },
    });
    const h = mcpManifest({ name: 'web', transport: 'http', url: 'http://127.0.0.1:9/mcp' });
    expect(assertManifest(h).runtime).toEqual({ type: 'mcp', transport: 'http', url: 'http://127.0.0.1:9/mcp' });
  });

  it('ids mcp.<name> are reserved for runtime type mcp (or nats: hosted elsewhere); "mcp" alone is refused', () => {
    const base = { name: 'x', version: '1.0.0', kind: 'tool', tools: [] };
    expect(manifestIssues({ ...base, id: 'mcp.x', runtime: { type: 'stdio', command: ['x'] } })).toEqual([
      {
        path: '$.id',
        message: '"mcp.x": ids "mcp.<name>" are reserved for runtime type mcp (or nats: an MCP server on another node)',
      },
    ]);
    expect(manifestIssues({ ...base, id: 'mcp.x', runtime: { type: 'nats' } })).toEqual([]);
    expect(manifestIssues({ ...base, id: 'mcp', runtime: { type: 'nats' } })).toEqual([
      { path: '$.id', message: '"mcp" is reserved (MCP servers are "mcp.<name>")' },
    ]);
    expect(
      manifestIssues({ ...base, id: 'mcp', runtime: { type: 'mcp', transport: 'http', url: 'http://x' } }),
    ).toEqual([{ path: '$.id', message: '"mcp" is reserved (MCP servers are "mcp.<name>")' }]);
    expect(
      manifestIssues({ ...base, id: 'mcp.x', runtime: { type: 'mcp', transport: 'http', url: 'http://x' } }),
    ).toEqual([]);
    expect(
      manifestIssues({ ...base, id: 'mcp.X-y', runtime: { type: 'mcp', transport: 'http', url: 'http://x' } }),
    ).toEqual([{ path: '$.id', message: 'must match pattern "^[a-z0-9][a-z0-9_-]{0,63}$"' }]);
  });
});

// The MCP gateway at /mcp (issue 24, item 4) with a real MCP client (@modelcontextprotocol/client,
// both protocol eras) against a running daemon: only granted tools are listed; an AUTO read
// returns; a held shell.exec is approved from a second CLI process and completed by finger_claim
// or by the same call retried; a rejection is an error result with the person's reason; an
// upstream server-everything tool is proxied with its pinned definition; no token → 401 with a
// challenge; a forged Host → 403; and, on the 2026 era, the task path with a hand-written client
// that declares the tasks extension.

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const HOLD_MS = 1500;
const ERAS = [
  { era: '2025-11-25', mode: 'legacy' as const },
  { era: '2026-07-28', mode: 'auto' as const },
];

let d: TestDaemon;
let executor: string;
let supervisor: string;

beforeAll(async () => {
  d = await startTestDaemon({
    config: {
      mcp: {
        hold_ms: HOLD_MS,
        servers: [
          { name: 'everything', transport: 'stdio', command: [process.execPath, EVERYTHING, 'stdio'], trusted: true },
        ],
      },
      grants: { executor: ['mcp.everything.*'] },
    },
    prepareHome: async (home) => {
      await mkdir(path.join(home, 'config'), { recursive: true });
      const policy = {
        version: 1,
        rules: [
          {
            id: 'deploys-need-a-person',
            tool: 'shell.exec',
            match: { command: 'echo deploy*' },
            level: 'APPROVE',
            reason: 'deploys need a person',
          },
        ],
      };
      await writeFile(path.join(home, 'config', 'admin-policy.json'), JSON.stringify(policy, null, 2));
    },
  });
  executor = await d.token('agent:executor', 'mcp-exec');
  supervisor = await d.token('agent:supervisor', 'mcp-super');
  await writeFile(path.join(d.workspace, 'notes.txt'), 'hello from the workspace\n');
}, 60_000);

afterAll(async () => {
  await d?.close();
});

async function connect(token: string, mode: 'legacy' | 'auto'): Promise<Client> {
  const client = new Client({ name: 'mcp-gateway-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const cliEnv = (): Record<string, string> => ({ FINGER_URL: d.url, FINGER_TOKEN: d.adminToken, FINGER_HOME: d.home });

async function pendingFor(command: string): Promise<string> {
  return waitFor(`an approval for ${command}`, async () => {
    const r = await d.http<{ approvals: { id: string; args: any }[] }>('GET', '/v1/approvals');
    return r.body.approvals.find((a) => a.args?.command === command)?.id;
  });
}

function textOf(r: any): string {
  return (r.content as { type: string; text: string }[]).map((c) => c.text).join('');
}

describe.each(ERAS)('MCP gateway, $era era', ({ era, mode }) => {
  let exec: Client;
  let sup: Client;
  beforeAll(async () => {
    exec = await connect(executor, mode);
    sup = await connect(supervisor, mode);
  });
  afterAll(async () => {
    await exec?.close();
    await sup?.close();
  });

  it('negotiates its era', () => {
    expect(exec.getNegotiatedProtocolVersion()).toBe(era);
  });

  it("lists exactly the caller's granted tools (and finger_claim)", async () => {
    const all = (await d.http<{ tools: { id: string; quarantined?: unknown }[] }>('GET', '/v1/tools')).body.tools;
    const execTools = (await exec.listTools()).tools.map((t) => t.name).sort();
    const supTools = (await sup.listTools()).tools.map((t) => t.name).sort();
    const grantedTo = async (role: string) =>
      (await d.http<{ tools: { id: string; quarantined?: unknown }[] }>('GET', `/v1/tools?role=${role}`)).body.tools
        .filter((t) => t.quarantined === undefined)
        .map((t) => t.id);
    expect(execTools).toEqual([...(await grantedTo('executor')), 'finger_claim'].sort());
    expect(supTools).toEqual([...(await grantedTo('supervisor')), 'finger_claim'].sort());
    expect(execTools).toContain('shell.exec');
    expect(supTools).not.toContain('shell.exec');
    expect(supTools.some((n) => n.startsWith('mcp.everything.'))).toBe(false);
    expect(all.length).toBeGreaterThan(supTools.length - 1);
  });

  it('an AUTO read returns its result', async () => {
    const r = await exec.callTool({ name: 'fs.read', arguments: { path: path.join(d.workspace, 'notes.txt') } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('hello from the workspace');
  });

  it('a tool outside the grants is an honest error naming the reason', async () => {
    const r = await sup.callTool({ name: 'shell.exec', arguments: { command: 'ls' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^E_FORBIDDEN: /);
  });

  it('a held call reports progress, answers "held", is approved from a second CLI process and completed by finger_claim', async () => {
    const command = `echo deploy-claim-${mode}`;
    const progress: string[] = [];
    const held = await exec.callTool(
      { name: 'shell.exec', arguments: { command } },
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    const id = await pendingFor(command);
    expect(held.isError).toBeFalsy();
    expect(held.structuredContent).toEqual({
      status: 'held',
      approval_id: id,
      approval_url: `${d.url}/ui/approvals/${id}`,
      claim: { tool: 'finger_claim', arguments: { id } },
    });
    expect(textOf(held)).toContain(`held for a person as ${id}`);
    expect(progress[0]).toMatch(new RegExp(`^held for a person as ${id}`));
    const approve = await runCli(['approve', id], cliEnv());
    expect(approve.code).toBe(0);
    const done = await exec.callTool({ name: 'finger_claim', arguments: { id } });
    expect(done.isError).toBeFalsy();
    expect(textOf(done)).toContain(`deploy-claim-${mode}`);
    // single use: a second claim finds nothing
    const again = await exec.callTool({ name: 'finger_claim', arguments: { id } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^E_NOT_FOUND: /);
  });

  it('the same call retried after approval completes it, once; another principal cannot claim it', async () => {
    const command = `echo deploy-retry-${mode}`;
    const held = await exec.callTool({ name: 'shell.exec', arguments: { command } });
    const id = await pendingFor(command);
    expect((held.structuredContent as any).status).toBe('held');
    const stranger = await sup.callTool({ name: 'finger_claim', arguments: { id } });
    expect(stranger.isError).toBe(true);
    expect(textOf(stranger)).toMatch(/^E_NOT_FOUND: /);
    expect((await runCli(['approve', id], cliEnv())).code).toBe(0);
    const done = await exec.callTool({ name: 'shell.exec', arguments: { command } });
    expect(done.isError).toBeFalsy();
    expect(textOf(done)).toContain(`deploy-retry-${mode}`);
    // the next identical call is a new call: held again, with a new approval
    const next = await exec.callTool({ name: 'shell.exec', arguments: { command } });
    expect((next.structuredContent as any).status).toBe('held');
    const id2 = await pendingFor(command);
    expect(id2).not.toBe(id);
    expect((await runCli(['reject', id2], cliEnv())).code).not.toBe(null);
  });

  it('a rejected call is an error result with the person’s reason', async () => {
    const command = `echo deploy-reject-${mode}`;
    await exec.callTool({ name: 'shell.exec', arguments: { command } });
    const id = await pendingFor(command);
    await runCli(['reject', id, '--reason', 'not on a Friday'], cliEnv());
    const r = await exec.callTool({ name: 'finger_claim', arguments: { id } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^E_REJECTED_BY_HUMAN: .*not on a Friday/);
  });

  it('an upstream server-everything tool is proxied with its pinned definition', async () => {
    const upstream = new Client({ name: 'direct', version: '1.0.0' });
    await upstream.connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
    );
    try {
      const direct = (await upstream.listTools()).tools.find((t) => t.name === 'echo')!;
      const pinned = (await d.http<{ tool: { input_schema: unknown } }>('GET', '/v1/tools/mcp.everything.echo')).body
        .tool;
      const proxied = (await exec.listTools()).tools.find((t) => t.name === 'mcp.everything.echo')!;
      expect(proxied.inputSchema).toEqual(pinned.input_schema);
      // the pin keeps the schema itself (its `$schema` dialect marker aside)
      const { $schema: _dialect, ...directSchema } = direct.inputSchema as Record<string, unknown>;
      expect(proxied.inputSchema).toEqual(directSchema);
      expect(proxied.description).toBe(direct.description);
      const r = await exec.callTool({ name: 'mcp.everything.echo', arguments: { message: `hi ${mode}` } });
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toContain(`hi ${mode}`);
    } finally {
      await upstream.close();
    }
  });
});

describe('MCP gateway HTTP edges', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(init),
    });

  it('no token → 401 E_UNAUTHENTICATED with a Bearer challenge; the real client fails to connect', async () => {
    const r = await post({});
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="finger", scope="mcp"');
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('E_UNAUTHENTICATED');
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`)))).rejects.toThrow();
  });

  it('a forged Host → 403 E_FORBIDDEN host_not_allowed (before authentication)', async () => {
    const { request } = await import('node:http');
    const u = new URL(d.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: 'attacker.example:80',
            authorization: `Bearer ${executor}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += String(c)));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(answer.status).toBe(403);
    const e = (JSON.parse(answer.body) as { error: { code: string; details: { reason: string } } }).error;
    expect([e.code, e.details.reason]).toEqual(['E_FORBIDDEN', 'host_not_allowed']);
  });

  it('a foreign Origin → 403 E_FORBIDDEN origin_not_allowed', async () => {
    const r = await post({ authorization: `Bearer ${executor}`, origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    const e = ((await r.json()) as { error: { code: string; details: { reason: string } } }).error;
    expect([e.code, e.details.reason]).toEqual(['E_FORBIDDEN', 'origin_not_allowed']);
  });

  it('a viewer token may not use the gateway (403 E_FORBIDDEN)', async () => {
    const viewer = await d.token('viewer', 'mcp-viewer');
    const r = await post({ authorization: `Bearer ${viewer}` });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('E_FORBIDDEN');
  });
});

describe('MCP gateway, 2026 era tasks extension (hand-written client)', () => {
  const META = (tasks: boolean) => ({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'hand-written', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
  });
  let seq = 100;
  async function rpc(method: string, params: Record<string, unknown>, name: string, token = executor): Promise<any> {
    const r = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        'mcp-name': name,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
    });
    expect(r.status).toBe(200);
    const body = await r.text();
    // an SSE answer (progress came first) carries the response as its last data line
    const json = r.headers.get('content-type')?.startsWith('text/event-stream')
      ? body
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
          .find((m) => m.id === seq)
      : JSON.parse(body);
    return json;
  }

  it('a held call declaring the extension becomes a task; tasks/get completes it after approval, once', async () => {
    const command = 'echo deploy-task';
    const created = await rpc(
      'tools/call',
      { name: 'shell.exec', arguments: { command }, _meta: META(true) },
      'shell.exec',
    );
    const id = await pendingFor(command);
    expect(created.result).toMatchObject({ resultType: 'task', taskId: id, status: 'working', ttlMs: 600_000 });
    expect(created.result.statusMessage).toContain(`held for a person as ${id}`);
    const working = await rpc('tasks/get', { taskId: id, _meta: META(true) }, id);
    expect(working.result).toMatchObject({ resultType: 'complete', taskId: id, status: 'working' });
    // another principal's poll finds no such task
    const stranger = await rpc('tasks/get', { taskId: id, _meta: META(true) }, id, supervisor);
    expect(stranger.error.code).toBe(-32602);
    expect((await runCli(['approve', id], cliEnv())).code).toBe(0);
    const done = await waitFor('the task to complete', async () => {
      const r = await rpc('tasks/get', { taskId: id, _meta: META(true) }, id);
      return r.result?.status === 'completed' ? r : undefined;
    });
    expect(done.result.result.isError).toBeUndefined();
    expect(done.result.result.content[0].text).toContain('deploy-task');
    const gone = await rpc('tasks/get', { taskId: id, _meta: META(true) }, id);
    expect(gone.error.code).toBe(-32602);
  });

  it('without the extension declared the same hold answers "held", never a task', async () => {
    const command = 'echo deploy-notask';
    const r = await rpc('tools/call', { name: 'shell.exec', arguments: { command }, _meta: META(false) }, 'shell.exec');
    const id = await pendingFor(command);
    expect(r.result.resultType).not.toBe('task');
    expect(r.result.structuredContent).toMatchObject({ status: 'held', approval_id: id });
    await runCli(['reject', id], cliEnv());
  });
});

// The MCP gateway's hold outcomes on the 2026 era with hand-written clients (issue 24, item 4):
// (b) a client declaring URL elicitation is sent to finger's approval page — `accept` means only
// "opened", the call completes only once a person approved; and a task's `tasks/cancel` withdraws
// the pending approval (resolved as `cancelled`, audited as answered by the caller; the call never
// runs and fails with E_WITHDRAWN); and `subscriptions/listen` hears `notifications/tools/list_changed`
// when grants or modules change.

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const HOLD_MS = 1000;

let d: TestDaemon;
let executor: string;

beforeAll(async () => {
  d = await startTestDaemon({
    config: { mcp: { hold_ms: HOLD_MS } },
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
  executor = await d.token('agent:executor', 'mcp-holds');
}, 60_000);

afterAll(async () => {
  await d?.close();
});

const cliEnv = (): Record<string, string> => ({ FINGER_URL: d.url, FINGER_TOKEN: d.adminToken, FINGER_HOME: d.home });

async function pendingFor(command: string): Promise<string> {
  return waitFor(`an approval for ${command}`, async () => {
    const r = await d.http<{ approvals: { id: string; args: any }[] }>('GET', '/v1/approvals');
    return r.body.approvals.find((a) => a.args?.command === command)?.id;
  });
}

/** The 2026-07-28 request envelope declaring `caps` as the client's capabilities. */
const META = (caps: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'hand-written', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': caps,
});

let seq = 0;
/** One JSON-RPC request of the 2026 era; the response (the last SSE data line with its id, or the JSON body). */
async function rpc(method: string, params: Record<string, unknown>, name: string): Promise<any> {
  const id = ++seq;
  const r = await fetch(`${d.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${executor}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  expect(r.status).toBe(200);
  const body = await r.text();
  return r.headers.get('content-type')?.startsWith('text/event-stream')
    ? body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
        .find((m) => m.id === id)
    : JSON.parse(body);
}

async function resolvedEntry(approval_id: string): Promise<any> {
  const r = await d.http<{ entries: any[] }>('GET', '/v1/audit?type=approval.resolved&limit=10000');
  return r.body.entries.find((e) => e.details?.approval_id === approval_id);
}

describe('MCP gateway, 2026 era: URL elicitation of the approval page', () => {
  const URL_CAPS = { elicitation: { url: {} } };

  it('sends the person to /ui/approvals/<id>; accept only means "opened"; the call completes after approval', async () => {
    const command = 'echo deploy-url';
    const call = (extra: Record<string, unknown> = {}) =>
      rpc('tools/call', { name: 'shell.exec', arguments: { command }, _meta: META(URL_CAPS), ...extra }, 'shell.exec');

    // 1. held past hold_ms: an input_required result with one URL-mode elicitation of the approval page
    const first = await call();
    const id = await pendingFor(command);
    expect(first.result.resultType).toBe('input_required');
    const requests = Object.values(first.result.inputRequests as Record<string, any>);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: `${d.url}/ui/approvals/${id}` },
    });
    expect(requests[0].params.message).toContain(id);
    const key = Object.keys(first.result.inputRequests as object)[0]!;

    // 2. the client says the user opened the page; nobody answered yet: the call has not run, it is "held"
    const opened = await call({ inputResponses: { [key]: { action: 'accept' } } });
    expect(opened.result.resultType).not.toBe('input_required');
    expect(opened.result.isError).toBeUndefined();
    expect(opened.result.structuredContent).toMatchObject({ status: 'held', approval_id: id });
    expect(JSON.stringify(opened.result.content)).toContain('It has not run');
    const still = await d.http<{ approvals: { id: string }[] }>('GET', '/v1/approvals');
    expect(still.body.approvals.map((a) => a.id)).toContain(id);

    // 3. a person approves; the same call retried (its accepted elicitation echoed) returns the output, once
    expect((await runCli(['approve', id], cliEnv())).code).toBe(0);
    const done = await call({ inputResponses: { [key]: { action: 'accept' } } });
    expect(done.result.isError).toBeUndefined();
    expect(done.result.content[0].text).toContain('deploy-url');
    expect((await resolvedEntry(id)).decision).toBe('approve');
  });

  it('a client that declares no URL elicitation gets the "held" result, never an elicitation', async () => {
    const command = 'echo deploy-no-url';
    const r = await rpc('tools/call', { name: 'shell.exec', arguments: { command }, _meta: META({}) }, 'shell.exec');
    const id = await pendingFor(command);
    expect(r.result.resultType).not.toBe('input_required');
    expect(r.result.structuredContent).toMatchObject({ status: 'held', approval_id: id });
    await runCli(['reject', id], cliEnv());
  });
});

describe('MCP gateway, 2026 era: tasks/cancel withdraws the pending approval', () => {
  const TASK_CAPS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

  it('resolves the approval as cancelled (audited, answered by the caller); the call never runs', async () => {
    const command = 'echo deploy-cancelled';
    const created = await rpc(
      'tools/call',
      { name: 'shell.exec', arguments: { command }, _meta: META(TASK_CAPS) },
      'shell.exec',
    );
    const id = await pendingFor(command);
    expect(created.result).toMatchObject({ resultType: 'task', taskId: id, status: 'working' });

    const cancelled = await rpc('tasks/cancel', { taskId: id, _meta: META(TASK_CAPS) }, id);
    expect(cancelled.result).toEqual({ resultType: 'complete' });

    // no longer pending; a person's late answer finds it answered
    const pending = await d.http<{ approvals: { id: string }[] }>('GET', '/v1/approvals');
    expect(pending.body.approvals.map((a) => a.id)).not.toContain(id);
    const late = await runCli(['approve', id, '--json'], cliEnv());
    expect(late.code).not.toBe(0);
    expect(late.stdout + late.stderr).toContain('E_CONFLICT');

    // audited: resolved as cancelled, by the caller, with why
    const entry = await waitFor('the approval.resolved entry', () => resolvedEntry(id));
    expect(entry.decision).toBe('cancelled');
    expect(entry.actor).toEqual({ kind: 'agent', id: expect.any(String) });
    expect(entry.details).toMatchObject({ decided_by: 'caller', reason: expect.stringContaining('tasks/cancel') });

    // the call failed with E_WITHDRAWN: it never ran
    const record = await waitFor('the request to fail', async () => {
      const r = await d.http<{ status: string; error?: { code: string } }>('GET', `/v1/requests/${entry.request_id}`);
      return r.status === 200 && r.body.status === 'failed' ? r.body : undefined;
    });
    expect(record.error?.code).toBe('E_WITHDRAWN');

    // the task is gone
    const gone = await rpc('tasks/get', { taskId: id, _meta: META(TASK_CAPS) }, id);
    expect(gone.error.code).toBe(-32602);
  });

  it('another principal cannot cancel the task (-32602, the approval stays pending)', async () => {
    const command = 'echo deploy-not-yours';
    await rpc('tools/call', { name: 'shell.exec', arguments: { command }, _meta: META(TASK_CAPS) }, 'shell.exec');
    const id = await pendingFor(command);
    const other = await d.token('agent:executor', 'mcp-holds-other');
    const r = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tasks/cancel',
        'mcp-name': id,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/cancel',
        params: { taskId: id, _meta: META(TASK_CAPS) },
      }),
    });
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const pending = await d.http<{ approvals: { id: string }[] }>('GET', '/v1/approvals');
    expect(pending.body.approvals.map((a) => a.id)).toContain(id);
    await runCli(['reject', id], cliEnv());
  });
});

describe('MCP gateway, 2026 era: notifications/tools/list_changed on subscriptions/listen', () => {
  /** Opens a listen stream; `next(method)` reads messages until one with `method` arrives. */
  async function listen(): Promise<{ next(method: string): Promise<any>; close(): void }> {
    const abort = new AbortController();
    const r = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        authorization: `Bearer ${executor}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: META({}) },
      }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const queue: any[] = [];
    return {
      async next(method: string) {
        for (;;) {
          const i = queue.findIndex((m) => m.method === method);
          if (i >= 0) return queue.splice(i, 1)[0];
          const { value, done } = await reader.read();
          if (done) throw new Error(`the listen stream ended before ${method}`);
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            for (const line of frame.split('\n')) if (line.startsWith('data: ')) queue.push(JSON.parse(line.slice(6)));
          }
        }
      },
      close: () => abort.abort(),
    };
  }

  const toolNames = async (): Promise<string[]> =>
    (await rpc('tools/list', { _meta: META({}) }, 'tools/list')).result.tools.map((t: { name: string }) => t.name);

  it('a grant change and a module registration each notify a listener, which re-lists and sees the change', async () => {
    const stream = await listen();
    try {
      const ack = await stream.next('notifications/subscriptions/acknowledged');
      expect(ack.params.notifications).toEqual({ toolsListChanged: true });

      const before = await toolNames();
      const all = (await d.http<{ tools: { id: string }[] }>('GET', '/v1/tools')).body.tools.map((t) => t.id);
      const tool = all.find((id) => !before.includes(id))!;
      expect(tool).toBeDefined();
      expect((await d.http('POST', '/v1/grants', { role: 'executor', tool })).status).toBe(201);
      await stream.next('notifications/tools/list_changed');
      expect(await toolNames()).toContain(tool);

      const dir = path.join(d.home, 'listen-module');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'index.mjs'), 'export default { tools: { ping: () => "pong" } };\n');
      const manifest = {
        id: 'listen-probe',
        name: 'listen probe',
        version: '0.1.0',
        kind: 'tool',
        runtime: { type: 'inprocess', entry: './index.mjs' },
        tools: [{ name: 'ping', description: 'pong' }],
        grants: ['executor'],
      };
      expect((await d.http('POST', '/v1/modules', { manifest, base_dir: dir })).status).toBe(201);
      await stream.next('notifications/tools/list_changed');
      expect(await toolNames()).toContain('listen-probe.ping');
    } finally {
      stream.close();
    }
  });

  it('announces listChanged on the 2026 era only (2025-era serving is stateless)', async () => {
    const discover = await rpc('server/discover', { _meta: META({}) }, 'server/discover');
    expect(discover.result.capabilities.tools).toEqual({ listChanged: true });
    const r = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${executor}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      }),
    });
    const body = await r.text();
    const init = body.startsWith('{')
      ? JSON.parse(body)
      : JSON.parse(
          body
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
        );
    expect(init.result.capabilities.tools).toEqual({ listChanged: false });
  });
});

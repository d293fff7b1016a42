// The firewall judges URLs (issue 23, item 5), through a real daemon as an agent
// (`agent:executor`): `web.fetch` of loopback, link-local, private and metadata addresses is held
// at APPROVE with a reason naming the address, and nothing is fetched; a public URL is judged as
// before; an MCP-style tool's `url` argument is judged the same.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type EventsClient, startTestDaemon, type TestDaemon } from '@finger/testkit';

describe('the firewall judges URLs, end to end', () => {
  let d: TestDaemon;
  let ws: EventsClient;
  let agent: string;
  let local: http.Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    // a local server that must never be reached: every hold below is rejected
    local = http.createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    port = (local.address() as AddressInfo).port;
    d = await startTestDaemon({ config: { log: { level: 'silent' } } });
    agent = await d.token('agent:executor', 'url-agent');
    ws = await d.events();
    await ws.subscribe({ types: ['APPROVAL_REQUESTED'] });
  });
  afterAll(async () => {
    await ws?.close();
    await d?.close();
    await new Promise<void>((resolve) => local?.close(() => resolve()));
  });

  const requests = (): any[] =>
    ws.messages.filter((m) => m.type === 'event' && m.event.type === 'APPROVAL_REQUESTED').map((m) => m.event.data);
  const check = async (tool: string, args: unknown) => {
    const r = await d.http<any>('POST', '/v1/policy/check', { tool, args, principal_kind: 'agent' });
    expect(r.status).toBe(200);
    return {
      level: r.body.level,
      reasons: r.body.reasons.filter((x: string) => !x.startsWith('NOTIFY: tool default')),
    };
  };

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'APPROVE: reaches a cloud metadata address 169.254.169.254'],
    ['http://127.0.0.1:6379', 'APPROVE: reaches loopback 127.0.0.1:6379'],
    ['http://10.0.0.1/', 'APPROVE: reaches a private address 10.0.0.1'],
    ['http://[::1]:8080/', 'APPROVE: reaches loopback [::1]:8080'],
    ['http://2130706433:6379/', 'APPROVE: reaches loopback 127.0.0.1:6379'],
    ['http://good.com@0xa9fea9fe/', 'APPROVE: reaches a cloud metadata address 169.254.169.254'],
  ])('policy check: web.fetch %s is %s', async (url, reason) => {
    expect(await check('web.fetch', { url })).toEqual({ level: 'APPROVE', reasons: [reason] });
  });

  it('policy check: a public URL is judged as before (NOTIFY, the tool default)', async () => {
    const r = await d.http<any>('POST', '/v1/policy/check', {
      tool: 'web.fetch',
      args: { url: 'http://93.184.216.34/' },
      principal_kind: 'agent',
    });
    expect({ level: r.body.level, reasons: r.body.reasons }).toEqual({
      level: 'NOTIFY',
      reasons: ['NOTIFY: tool default for risk_level medium'],
    });
  });

  it("policy check: an MCP-style tool's url argument is judged the same", async () => {
    expect(await check('mcp.crawler.fetch_page', { url: 'http://169.254.169.254/latest/meta-data/' })).toEqual({
      level: 'APPROVE',
      reasons: ['APPROVE: reaches a cloud metadata address 169.254.169.254'],
    });
    expect(await check('mcp.crawler.fetch_page', { request: { endpoint: `http://localhost:${port}/` } })).toEqual({
      level: 'APPROVE',
      reasons: [`APPROVE: argument request.endpoint: reaches loopback localhost:${port}`],
    });
  });

  it.each([
    () => [`http://127.0.0.1:${port}/secret`, `APPROVE: reaches loopback 127.0.0.1:${port}`],
    () => [`http://localhost:${port}/`, `APPROVE: reaches loopback localhost:${port}`],
    () => ['http://169.254.169.254/latest/meta-data/', 'APPROVE: reaches a cloud metadata address 169.254.169.254'],
  ])('a web.fetch by the agent is held at APPROVE with the reason; rejected, nothing is fetched (%#)', async (make) => {
    const [url, reason] = make() as [string, string];
    const before = requests().length;
    const answer = d.http<any>(
      'POST',
      '/v1/input',
      { text: `/hub target=web.fetch ${JSON.stringify({ url })}`, session_id: 's-url' },
      agent,
    );
    await ws.waitFor(() => requests().length > before, `a hold of web.fetch ${url}`);
    const approval = requests()[before].approval;
    expect([approval.tool_id, approval.level, approval.risk.includes(reason)]).toEqual(['web.fetch', 'APPROVE', true]);
    const rejected = await d.http('POST', `/v1/approvals/${approval.id}`, { decision: 'reject', agent_fault: false });
    expect(rejected.status).toBe(200);
    expect((await answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    expect(hits).toBe(0);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  type EventsClient,
  type FakeLlmServer,
  runCli,
  startFakeLlmServer,
  startTestDaemon,
  type TestDaemon,
} from '@finger/testkit';

const DISPATCH_ECHO =
  '{"decision":"dispatch_module","target":"echo","confidence":0.92,"reason":"the user wants echo","payload":{"text":"hi"},"requires_human":false}';
const ROUTING = [
  'INPUT_RECEIVED',
  'MODE_PARSED',
  'ROUTE_DECIDED',
  'JSON_REPAIRED',
  'DISPATCH_SENT',
  'DISPATCH_RESULT',
  'ROUTE_FAILED',
];

/** The routing events of the one input whose text is `text`, in order. */
async function routingEvents(ws: EventsClient, text: string, last: string): Promise<any[]> {
  const events = () => ws.messages.filter((m) => m.type === 'event').map((m) => m.event);
  await ws.waitFor(() => {
    const input = events().find((e) => e.type === 'INPUT_RECEIVED' && e.data.text === text);
    return input !== undefined && events().some((e) => e.correlation_id === input.correlation_id && e.type === last);
  }, `${last} for "${text}"`);
  const corr = events().find((e) => e.type === 'INPUT_RECEIVED' && e.data.text === text).correlation_id;
  return events().filter((e) => e.correlation_id === corr);
}

describe.each(['openai', 'anthropic'] as const)('text routing through the %s adapter (fake LLM server)', (provider) => {
  let llm: FakeLlmServer;
  let d: TestDaemon;
  let ws: EventsClient;
  let env: Record<string, string>;

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        llm: {
          provider,
          base_url: provider === 'openai' ? llm.openaiBaseUrl : llm.url,
          api_key: 'test-key',
          model: 'router-model',
        },
      },
    });
    env = { FINGER_HOME: d.home };
    ws = await d.events();
    await ws.subscribe({ types: ROUTING });
  });
  afterAll(async () => {
    await ws?.close();
    await d?.close();
    await llm?.close();
  });
  afterEach(() => {
    llm.requests.length = 0;
  });

  it('`myfinger send "say hi to echo"` reaches echo and prints its reply; routing events in order under one correlation id', async () => {
    llm.push({ text: DISPATCH_ECHO });
    const r = await runCli(['send', 'say hi to echo'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'hi' });
    const events = await routingEvents(ws, 'say hi to echo', 'DISPATCH_RESULT');
    expect(events.map((e) => e.type)).toEqual([
      'INPUT_RECEIVED',
      'MODE_PARSED',
      'ROUTE_DECIDED',
      'DISPATCH_SENT',
      'DISPATCH_RESULT',
    ]);
    expect(events[2].data).toMatchObject({
      decision: 'dispatch_module',
      target: 'echo.echo',
      requires_human: false,
      attempts: 1,
      provider,
    });
    expect(events[4].data).toEqual({ ok: true });
    // the model saw the input and the tools the supervisor may reach, nothing it may not
    expect(llm.requests).toHaveLength(1);
    const prompt = JSON.stringify(llm.requests[0]!.body);
    expect(prompt).toContain('say hi to echo');
    expect(prompt).toContain('echo.echo');
    expect(prompt).not.toContain('shell.exec');
  });

  it('re-ask: an invalid enum, then a valid answer → dispatched after one retry; the audit entry holds both attempts', async () => {
    llm.push({ text: '```json\n{"decision":"forward","target":"echo","confidence":0.9,"payload":{"n":2}}\n```' });
    llm.push({ text: DISPATCH_ECHO.replace('"text":"hi"', '"n":2') });
    const r = await runCli(['send', '--json', 'echo n two'], env);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ status: 'succeeded', target: 'echo.echo', result: { n: 2 }, route: { attempts: 2 } });
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.requests[1]!.body)).toContain('could not be used');
    const audit = await d.http('GET', `/v1/audit?type=route.decision`);
    const entry = audit.body.entries.find((e: any) => e.request_id === body.request_id);
    expect(entry).toMatchObject({
      type: 'route.decision',
      actor: { kind: 'human', id: 'admin' },
      tool: 'echo.echo',
      decision: 'dispatch_module',
      details: { outcome: 'ok', provider, model: 'router-model' },
    });
    expect(entry.details.attempts.map((a: any) => [a.n, a.outcome, a.retryable])).toEqual([
      [1, 'ask_human', true],
      [2, 'ok', undefined],
    ]);
    expect(entry.details.attempts[0].raw).toContain('"decision":"forward"');
  });

  it('a broken answer the guardrail repairs: JSON_REPAIRED (with before/after) between ROUTE_DECIDED and DISPATCH_SENT', async () => {
    llm.push({
      text: "Sure!\n```json\n{'decision': 'Dispatch-Module', 'target': 'echo', 'confidence': '90%', 'payload': {'k': 1}, 'requires_human': false,}\n```",
    });
    const r = await runCli(['send', 'echo k one'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ k: 1 });
    const events = await routingEvents(ws, 'echo k one', 'DISPATCH_RESULT');
    expect(events.map((e) => e.type)).toEqual([
      'INPUT_RECEIVED',
      'MODE_PARSED',
      'ROUTE_DECIDED',
      'JSON_REPAIRED',
      'DISPATCH_SENT',
      'DISPATCH_RESULT',
    ]);
    const repairs = events[3].data.repairs as { kind: string; before?: string; after?: string }[];
    expect(repairs.map((x) => x.kind)).toEqual(expect.arrayContaining(['fence', 'coerce_decision']));
    expect(repairs.find((x) => x.kind === 'coerce_decision')).toMatchObject({
      before: expect.any(String),
      after: expect.any(String),
    });
  });

  it('a model that never answers validly ends in ask_human after max_retries: nothing dispatched', async () => {
    for (let i = 0; i < 3; i++) llm.push({ text: 'I think you should use echo!' });
    const r = await runCli(['send', 'what now'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^A person must decide/);
    expect(llm.requests).toHaveLength(3);
    const events = await routingEvents(ws, 'what now', 'ROUTE_FAILED');
    expect(events.map((e) => e.type)).toEqual(['INPUT_RECEIVED', 'MODE_PARSED', 'ROUTE_DECIDED', 'ROUTE_FAILED']);
    expect(events[3].data).toMatchObject({ outcome: 'ask_human', requires_human: true });
  });
});

describe('text routing with no model configured (offline router)', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' } } });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('the daemon starts and `myfinger send "echo hello"` reaches echo', async () => {
    const r = await runCli(['send', 'echo hello'], { FINGER_HOME: d.home });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'hello' });
    const audit = await d.http('GET', '/v1/audit?type=route.decision');
    expect(audit.body.entries.at(-1)).toMatchObject({
      tool: 'echo.echo',
      decision: 'dispatch_module',
      details: { provider: 'offline', model: 'offline-router' },
    });
  });

  it('an agent token may not hand text to the supervisor unless its role is granted supervisor.handle', async () => {
    const agent = await d.token('agent:executor', 'exec-router');
    const r = await d.http('POST', '/v1/input', { text: 'echo hello' }, agent);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { role: 'executor', tool: 'supervisor.handle' },
    });
  });
});

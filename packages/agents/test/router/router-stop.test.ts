import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import type { AuditRecord } from '@finger/firewall';
import { createGrantInterceptor, ToolGrantProfile } from '@finger/firewall';
import { MessageHub } from '@finger/hub';
import type { FingerEvent } from '@finger/protocol';
import { type FakeLlmReply, type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { registerAgent } from '../../src/agent/register-agent.js';
import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { AnthropicAdapter } from '../../src/model/anthropic.js';
import { OpenAiAdapter } from '../../src/model/openai.js';
import { IngressSupervisorAgent } from '../../src/router/ingress-supervisor-agent.js';
import { RouterEngine } from '../../src/router/router-engine.js';

// The RouterEngine with the real adapters and the real guardrail, against the fake model server
// on loopback: the stop reason decides before the text is read as a decision.

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;
const REGISTRY = { agents: ['planner'], modules: ['echo', 'echo.say'], high_risk: [] };
const REQUEST = {
  text: 'say hi to echo',
  snapshot: { tools: [], dropped: [], unknown: [], used_tokens: 0, budget_tokens: 100 },
  agents: [],
  session_summary: '',
  feedback: [],
  registry: REGISTRY,
};
const DECISION = {
  decision: 'dispatch_module',
  target: 'echo',
  confidence: 0.9,
  reason: 'r',
  payload: { text: 'hi' },
  requires_human: false,
};
const GOOD = JSON.stringify(DECISION);
// the reviewer's answer: control fields complete, cut inside the reason, before the payload
const CUT =
  '{"decision":"dispatch_module","target":"echo","confidence":0.9,"requires_human":false,"reason":"the user wants to';
// complete JSON, but the model was still writing when the limit hit
const COMPLETE_BUT_CUT = `${GOOD}\nAlso, I could instead`;

function engine(s: FakeLlmServer, api: 'openai' | 'anthropic', max_retries?: number): RouterEngine {
  const model =
    api === 'openai'
      ? new OpenAiAdapter({ base_url: s.openaiBaseUrl, api_key: 'k', model: 'gpt-test', sleep: noSleep })
      : new AnthropicAdapter({ base_url: s.url, api_key: 'k', model: 'claude-test', sleep: noSleep });
  return new RouterEngine({ model, guardrail: runGuardrail, ...(max_retries !== undefined ? { max_retries } : {}) });
}

const raw = (body: unknown): FakeLlmReply => ({ kind: 'raw', body: JSON.stringify(body) });
const completion = (message: Record<string, unknown>, finish = 'stop') =>
  raw({
    id: 'c',
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 7 },
  });
const message = (content: unknown[], stop: string) =>
  raw({ id: 'm', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stop, usage: {} });

const TRUNCATED_ERRORS = [
  'the answer was cut off at the token limit (stop reason "length"); it was not read as a decision',
];

describe('RouterEngine and the stop reason', () => {
  it('regression: finish_reason length is truncated, never ok with payload {}; one re-ask, then ok', async () => {
    server = await startFakeLlmServer({ script: [{ text: CUT, finish_reason: 'length' }, { text: GOOD }] });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.attempts.map((a) => [a.n, a.finish_reason, a.outcome])).toEqual([
      [
        1,
        'length',
        { outcome: 'ask_human', reason_code: 'truncated', retryable: true, errors: TRUNCATED_ERRORS, repairs: [] },
      ],
      [2, 'stop', { outcome: 'ok', decision: { ...DECISION }, repairs: [] }],
    ]);
    expect(res.outcome).toMatchObject({ outcome: 'ok', decision: { payload: { text: 'hi' } } });
    const reask = server.requests[1]!.body.messages as { role: string; content: string }[];
    expect(reask.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(reask[2]!.content).toBe(CUT);
    expect(reask[3]!.content).toContain('cut off at the token limit');
    expect(reask[3]!.content).toContain('answer with a shorter object');
  });

  it('cut twice: ask_human `truncated` after exactly one re-ask, even with re-asks left', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: COMPLETE_BUT_CUT, finish_reason: 'length' },
        { text: COMPLETE_BUT_CUT, finish_reason: 'length' },
        { text: GOOD },
      ],
    });
    const res = await engine(server, 'openai', 2).route(REQUEST);
    expect(res.outcome).toEqual({
      outcome: 'ask_human',
      reason_code: 'truncated',
      retryable: false,
      errors: TRUNCATED_ERRORS,
      repairs: [],
    });
    expect(res.attempts).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
  });

  it('max_retries 0: a cut answer is ask_human `truncated` at once', async () => {
    server = await startFakeLlmServer({ script: [{ text: CUT, finish_reason: 'length' }] });
    const res = await engine(server, 'openai', 0).route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ask_human', reason_code: 'truncated' });
    expect(res.outcome.decision).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('Anthropic stop_reason max_tokens is truncated the same way', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: CUT, finish_reason: 'max_tokens' },
        { text: CUT, finish_reason: 'max_tokens' },
      ],
    });
    const res = await engine(server, 'anthropic').route(REQUEST);
    expect(res.outcome).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'truncated',
      errors: ['the answer was cut off at the token limit (stop reason "max_tokens"); it was not read as a decision'],
    });
    expect(res.attempts.map((a) => a.finish_reason)).toEqual(['max_tokens', 'max_tokens']);
  });

  it('content_filter: ask_human `content_filtered`, a valid-looking decision is not read, no re-ask', async () => {
    server = await startFakeLlmServer({ script: [{ text: GOOD, finish_reason: 'content_filter' }, { text: GOOD }] });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.outcome).toEqual({
      outcome: 'ask_human',
      reason_code: 'content_filtered',
      retryable: false,
      errors: ['the provider\'s content filter withheld the answer (stop reason "content_filter")'],
      repairs: [],
    });
    expect(server.requests).toHaveLength(1);
  });

  it('Anthropic stop_reason refusal: ask_human `model_refused`, no re-ask', async () => {
    server = await startFakeLlmServer({ script: [{ text: GOOD, finish_reason: 'refusal' }] });
    const res = await engine(server, 'anthropic').route(REQUEST);
    expect(res.outcome).toEqual({
      outcome: 'ask_human',
      reason_code: 'model_refused',
      retryable: false,
      errors: ['the model refused to answer (stop reason "refusal")'],
      repairs: [],
    });
    expect(server.requests).toHaveLength(1);
  });

  it('an OpenAI refusal message: `model_refused` with its text, not a paid no_json re-ask', async () => {
    server = await startFakeLlmServer({
      script: [completion({ content: null, refusal: "I'm sorry, I can't help with that." }), { text: GOOD }],
    });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.outcome).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'model_refused',
      retryable: false,
      errors: ["the model refused to answer: I'm sorry, I can't help with that."],
    });
    expect(server.requests).toHaveLength(1);
  });

  it('an OpenAI tool call carrying the decision is routed on the first ask', async () => {
    server = await startFakeLlmServer({
      script: [
        completion(
          { content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'route', arguments: GOOD } }] },
          'tool_calls',
        ),
      ],
    });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ok', decision: { ...DECISION } });
    expect(server.requests).toHaveLength(1);
  });

  it('an Anthropic tool_use block carrying the decision is routed on the first ask', async () => {
    server = await startFakeLlmServer({
      script: [message([{ type: 'tool_use', id: 'tu', name: 'route', input: DECISION }], 'tool_use')],
    });
    const res = await engine(server, 'anthropic').route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ok', decision: { ...DECISION } });
    expect(server.requests).toHaveLength(1);
  });

  it('content as a list of parts is read, not an E_LLM_UNAVAILABLE', async () => {
    server = await startFakeLlmServer({ script: [completion({ content: [{ type: 'text', text: GOOD }] })] });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ok', decision: { ...DECISION } });
    expect(server.requests).toHaveLength(1);
  });

  it('a server that reports no cut (stop) but sent a cut module dispatch: truncated by the guardrail', async () => {
    server = await startFakeLlmServer({ script: [{ text: CUT }] });
    const res = await engine(server, 'openai').route(REQUEST);
    expect(res.outcome).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'truncated',
      errors: ['$.payload is missing: the answer was cut off before it'],
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('IngressSupervisorAgent with a cut model answer', () => {
  it('dispatches nothing, answers "a person must decide", and audits the stop reason of each attempt', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: CUT, finish_reason: 'length' },
        { text: CUT, finish_reason: 'length' },
      ],
    });
    const hub = new MessageHub();
    try {
      hub.use(createGrantInterceptor(new ToolGrantProfile()));
      await hub.registry.loadFile(
        fileURLToPath(new URL('../../../../modules/echo/module.json', import.meta.url)),
        'static',
      );
      const events: FingerEvent[] = [];
      hub.events.subscribe({}, (e) => events.push(e));
      const audit: AuditRecord[] = [];
      await registerAgent(
        hub,
        new IngressSupervisorAgent({
          engine: engine(server, 'openai'),
          grants: new ToolGrantProfile(),
          audit: { append: (r) => Promise.resolve(audit.push(r)) },
        }),
      );
      const out = await hub.request({
        target: 'supervisor',
        payload: { text: 'say hi to echo' },
        source: { kind: 'human', id: 'admin', roles: ['admin'] },
        correlation_id: 'corr',
        request_id: 'req',
      });
      expect(out).toMatchObject({
        decision: 'ask_human',
        target: null,
        requires_human: true,
        reason_code: 'truncated',
        attempts: 2,
        reply: `A person must decide: truncated (${TRUNCATED_ERRORS.join('; ')})`,
      });
      const types = events.filter((e) => e.correlation_id === 'corr').map((e) => e.type);
      expect(types).not.toContain('DISPATCH_SENT');
      expect(events.find((e) => e.type === 'ROUTE_FAILED')?.data).toMatchObject({
        outcome: 'ask_human',
        reason_code: 'truncated',
      });
      const attempts = (audit[0]!.details as { attempts: Record<string, unknown>[] }).attempts;
      expect(attempts.map((a) => [a.n, a.finish_reason, a.reason_code, a.retryable])).toEqual([
        [1, 'length', 'truncated', true],
        [2, 'length', 'truncated', false],
      ]);
    } finally {
      await hub.close(0);
    }
  });
});

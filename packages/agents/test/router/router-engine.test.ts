import { describe, expect, it } from 'vitest';

import { RouterEngine } from '../../src/router/router-engine.js';
import { routerInputOf } from '../../src/router/router-prompt.js';
import { ScriptedModel, stubGuardrail } from './stubs.js';

const REGISTRY = { agents: [], modules: ['echo', 'echo.echo'], high_risk: [] };
const REQUEST = {
  text: 'say hi to echo',
  snapshot: { tools: [], dropped: [], unknown: [], used_tokens: 0, budget_tokens: 100 },
  agents: [],
  session_summary: '',
  feedback: [],
  registry: REGISTRY,
};
const BAD_ENUM = '{"decision":"send_to_module","target":"echo","confidence":0.9,"reason":"r","payload":{}}';
const GOOD = '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"r","payload":{"text":"hi"}}';

describe('RouterEngine re-ask', () => {
  it('an invalid enum then a valid answer: ok after one re-ask, both attempts kept, errors fed back', async () => {
    const model = new ScriptedModel([BAD_ENUM, GOOD]);
    const res = await new RouterEngine({ model, guardrail: stubGuardrail }).route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ok', decision: { decision: 'dispatch_module', target: 'echo' } });
    expect(res.attempts.map((a) => [a.n, a.raw, a.outcome.outcome])).toEqual([
      [1, BAD_ENUM, 'ask_human'],
      [2, GOOD, 'ok'],
    ]);
    expect(model.requests).toHaveLength(2);
    const second = model.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second[2]!.content).toBe(BAD_ENUM);
    expect(second[3]!.content).toContain('$.decision must be one of');
    expect(res).toMatchObject({ provider: 'stub', model: 'stub-1' });
  });

  it('never valid: ask_human after max_retries re-asks (1 + 2 attempts by default)', async () => {
    const model = new ScriptedModel([BAD_ENUM]);
    const res = await new RouterEngine({ model, guardrail: stubGuardrail }).route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ask_human', reason_code: 'invalid_schema' });
    expect(res.attempts).toHaveLength(3);
    expect(model.requests).toHaveLength(3);
  });

  it('max_retries 0 asks once; an unknown target that stays unknown ends in reject', async () => {
    const model = new ScriptedModel(['{"decision":"dispatch_module","target":"rm-rf","confidence":1}']);
    const res = await new RouterEngine({ model, guardrail: stubGuardrail, max_retries: 1 }).route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'reject', reason_code: 'unknown_target' });
    expect(res.attempts).toHaveLength(2);
    const once = new ScriptedModel([BAD_ENUM]);
    await new RouterEngine({ model: once, guardrail: stubGuardrail, max_retries: 0 }).route(REQUEST);
    expect(once.requests).toHaveLength(1);
  });

  it('a non-retryable outcome is not re-asked', async () => {
    const model = new ScriptedModel(['{"decision":"ask_human","confidence":0.2,"reason":"unclear"}', GOOD]);
    const res = await new RouterEngine({ model, guardrail: stubGuardrail }).route(REQUEST);
    expect(res.outcome).toMatchObject({ outcome: 'ask_human', reason_code: 'model_asked_human' });
    expect(model.requests).toHaveLength(1);
  });

  it('the prompt states the schema and lists the snapshot tools and the input', async () => {
    const model = new ScriptedModel([GOOD]);
    const snapshot = {
      tools: [
        {
          id: 'echo.echo',
          purpose: 'Returns its arguments.',
          constraints: ['L0 read-only'],
          risk: 'low' as const,
          context_cost: 10,
        },
      ],
      dropped: ['fs.read'],
      unknown: [],
      used_tokens: 10,
      budget_tokens: 10,
    };
    await new RouterEngine({ model, guardrail: stubGuardrail }).route({ ...REQUEST, snapshot });
    const [system, user] = model.requests[0]!.messages;
    expect(system!.content).toContain('"decision": "direct_reply|dispatch_agent|dispatch_module|ask_human|reject"');
    expect(user!.content).toContain('- echo.echo [risk low; L0 read-only]: Returns its arguments.');
    expect(user!.content).toContain('(left out for space: fs.read)');
    expect(user!.content.endsWith('Input:\nsay hi to echo')).toBe(true);
  });

  it('routerInputOf gives back the raw input of the first user message, even after re-asks', async () => {
    const model = new ScriptedModel([BAD_ENUM, GOOD]);
    await new RouterEngine({ model, guardrail: stubGuardrail }).route({ ...REQUEST, text: 'echo hello\nInput:\nx' });
    expect(routerInputOf(model.requests[1]!)).toBe('echo hello\nInput:\nx');
    expect(routerInputOf({ messages: [{ role: 'user', content: 'plain' }] })).toBe('plain');
  });
});

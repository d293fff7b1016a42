import { describe, expect, it } from 'vitest';

import { parseLlmDecision, safeLlmDecision } from '../../src/guardrail/llm-decision.js';

const step = {
  thought: 'write the file',
  tool_calls: [{ tool: 'fs.write', args: { path: 'a.txt', content: 'hi' }, intent: 'create a.txt' }],
  confidence: 0.8,
  human_required: false,
  done: false,
  summary: '',
};

describe('parseLlmDecision (§3.7)', () => {
  it('passes a clean decision through', () => {
    expect(parseLlmDecision(JSON.stringify(step))).toEqual({ outcome: 'ok', decision: step, repairs: [] });
  });

  it('recovers a fenced, Python-style answer with prose', () => {
    const text =
      "Let me write it.\n```python\n{'thought': 'write the file', 'tool_calls': [{'tool': 'fs.write', 'args': {'path': 'a.txt', 'content': 'hi'}, 'intent': 'create a.txt'}], 'confidence': '80%', 'human_required': False, 'done': False, 'summary': '',}\n```";
    const out = parseLlmDecision(text);
    expect(out).toMatchObject({ outcome: 'ok', decision: step });
    expect(out.repairs.map((r) => r.kind)).toEqual(['fence', 'syntax', 'coerce_confidence']);
  });

  it('accepts OpenAI-style tool calls ({function: {name, arguments: "<json>"}})', () => {
    const text = JSON.stringify({
      ...step,
      tool_calls: [{ type: 'function', function: { name: 'fs.write', arguments: '{"path":"a.txt","content":"hi"}' } }],
    });
    expect(parseLlmDecision(text)).toEqual({
      outcome: 'ok',
      decision: { ...step, tool_calls: [{ tool: 'fs.write', args: { path: 'a.txt', content: 'hi' }, intent: '' }] },
      repairs: [
        { kind: 'unwrap_key', detail: '$.tool_calls[0].function' },
        { kind: 'rename_key', detail: '$.tool_calls[0].name → tool' },
        { kind: 'rename_key', detail: '$.tool_calls[0].arguments → args' },
        { kind: 'nested_json_string', detail: '$.tool_calls[0].args', before: '{"path":"a.txt","content":"hi"}' },
      ],
    });
  });

  it('wraps a single tool-call object and fills defaults', () => {
    const text = JSON.stringify({ tool_calls: { tool: 'echo.say', args: { text: 'x' } }, confidence: 0.9 });
    expect(parseLlmDecision(text)).toEqual({
      outcome: 'ok',
      decision: {
        thought: '',
        tool_calls: [{ tool: 'echo.say', args: { text: 'x' }, intent: '' }],
        confidence: 0.9,
        human_required: false,
        done: false,
        summary: '',
      },
      repairs: [{ kind: 'wrap_array', detail: '$.tool_calls' }],
    });
  });

  it('drops prototype keys from tool args and unknown keys from the decision', () => {
    const text =
      '{"tool_calls":[{"tool":"fs.write","args":{"__proto__":{"admin":true},"path":"a"},"intent":"i"}],"confidence":1,"done":true,"role":"admin"}';
    expect(parseLlmDecision(text)).toEqual({
      outcome: 'ok',
      decision: {
        thought: '',
        tool_calls: [{ tool: 'fs.write', args: { path: 'a' }, intent: 'i' }],
        confidence: 1,
        human_required: false,
        done: true,
        summary: '',
      },
      repairs: [
        { kind: 'mask', detail: 'dropped keys: role' },
        { kind: 'mask', detail: 'dropped keys: $.tool_calls[0].args.__proto__' },
      ],
    });
  });

  it('reads "true" strings for done and human_required', () => {
    const out = parseLlmDecision(
      '{"tool_calls":[],"confidence":0.9,"done":"true","human_required":"TRUE","summary":"ok"}',
    );
    expect(out).toMatchObject({ outcome: 'ok', decision: { done: true, human_required: true } });
  });

  it('fails safe on prose', () => {
    expect(parseLlmDecision('I will now write the file.')).toEqual({
      outcome: 'ask_human',
      decision: safeLlmDecision(),
      reason_code: 'no_json',
      retryable: true,
      errors: ['the answer holds no JSON object'],
      repairs: [],
    });
  });

  it('fails safe when the tool calls were cut off', () => {
    const text = JSON.stringify(step).slice(0, 60);
    expect(parseLlmDecision(text)).toMatchObject({
      outcome: 'ask_human',
      decision: { human_required: true, tool_calls: [] },
      reason_code: 'truncated',
    });
  });

  it('fails safe on two different decisions', () => {
    const text = `${JSON.stringify(step)}\n${JSON.stringify({ ...step, done: true })}`;
    expect(parseLlmDecision(text)).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
  });

  it('fails safe on schema errors and on too many tool calls', () => {
    expect(parseLlmDecision(JSON.stringify({ ...step, confidence: 2 }))).toMatchObject({
      outcome: 'ask_human',
      decision: safeLlmDecision(),
      reason_code: 'invalid_schema',
      errors: ['$.confidence must be <= 1'],
    });
    const many = { ...step, tool_calls: [1, 2, 3].map(() => step.tool_calls[0]) };
    expect(parseLlmDecision(JSON.stringify(many), { max_tool_calls: 2 })).toMatchObject({
      reason_code: 'invalid_schema',
      errors: ['$.tool_calls must NOT have more than 2 items'],
    });
    expect(parseLlmDecision(JSON.stringify({ ...step, tool_calls: [{ args: {} }] }))).toMatchObject({
      reason_code: 'invalid_schema',
      errors: ['$.tool_calls[0].tool is required'],
    });
  });

  it('drops the §3.7 template echoed back', () => {
    const template =
      '{ "thought": "…", "tool_calls": [{"tool": "fs.write", "args": {}, "intent": "…"}], "confidence": 0.8, "human_required": false, "done": false, "summary": "…" }';
    expect(parseLlmDecision(template)).toMatchObject({ outcome: 'ask_human', reason_code: 'no_decision' });
    expect(parseLlmDecision(`${template}\n${JSON.stringify(step)}`)).toMatchObject({ outcome: 'ok', decision: step });
  });

  describe('tool calls that say two things are refused, never resolved first-wins', () => {
    const withCalls = (tool_calls: unknown[]) => JSON.stringify({ ...step, tool_calls });
    const refused = (reason_code: string, errors: string[]) => ({
      outcome: 'ask_human',
      decision: safeLlmDecision(),
      reason_code,
      retryable: false,
      errors,
    });

    it('refuses an OpenAI arguments string whose key repeats with different values', () => {
      const text = withCalls([
        { type: 'function', function: { name: 'shell.exec', arguments: '{"command":"ls","command":"rm -rf ~"}' } },
      ]);
      expect(parseLlmDecision(text)).toEqual({
        ...refused('duplicate_keys', [
          '$.tool_calls[0].function.arguments.command appears twice with different values',
        ]),
        repairs: [],
      });
      const args = withCalls([{ tool: 'shell.exec', args: '{"command":"ls","command":"rm -rf ~"}' }]);
      expect(parseLlmDecision(args)).toMatchObject(
        refused('duplicate_keys', ['$.tool_calls[0].args.command appears twice with different values']),
      );
    });

    it('refuses args and arguments with different values', () => {
      const text = withCalls([{ tool: 'shell.exec', args: { command: 'ls' }, arguments: { command: 'rm -rf ~' } }]);
      expect(parseLlmDecision(text)).toMatchObject(
        refused('ambiguous_candidates', [
          '$.tool_calls[0].args and $.tool_calls[0].arguments differ ({"command":"ls"} vs {"command":"rm -rf ~"}); give one',
        ]),
      );
    });

    it('refuses tool and name with different values, at the call or under function', () => {
      expect(parseLlmDecision(withCalls([{ tool: 'fs.read', name: 'shell.exec', args: { path: 'a' } }]))).toMatchObject(
        refused('ambiguous_candidates', [
          '$.tool_calls[0].tool and $.tool_calls[0].name differ ("fs.read" vs "shell.exec"); give one',
        ]),
      );
      const fn = withCalls([{ tool: 'fs.read', function: { name: 'shell.exec', arguments: '{"path":"a"}' } }]);
      expect(parseLlmDecision(fn)).toMatchObject(
        refused('ambiguous_candidates', [
          '$.tool_calls[0].tool and $.tool_calls[0].function.name differ ("fs.read" vs "shell.exec"); give one',
        ]),
      );
    });

    it('accepts two spellings of one field with equal values', () => {
      const text = withCalls([
        {
          tool: 'fs.write',
          name: ' fs.write ',
          args: { path: 'a.txt', content: 'hi' },
          arguments: '{"content":"hi","path":"a.txt"}',
          intent: 'create a.txt',
        },
      ]);
      expect(parseLlmDecision(text)).toMatchObject({ outcome: 'ok', decision: step });
    });

    it('keeps the backslashes of a broken answer exactly as written', () => {
      const text =
        '{"thought":"t","confidence":0.9,"done":false,"human_required":false,"summary":"","tool_calls":[{"tool":"shell.exec","args":{"command":"rm -rf build\\ output"},"intent":"clean"}]}';
      expect(parseLlmDecision(text)).toMatchObject({
        outcome: 'ok',
        decision: { tool_calls: [{ tool: 'shell.exec', args: { command: 'rm -rf build\\ output' }, intent: 'clean' }] },
      });
    });
  });
});

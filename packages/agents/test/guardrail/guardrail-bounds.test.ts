import { describe, expect, it, vi } from 'vitest';

import { coerceConfidence } from '../../src/guardrail/coerce.js';
import { numberProblem, scanJson } from '../../src/guardrail/duplicate-keys.js';
import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { parseLlmDecision } from '../../src/guardrail/llm-decision.js';
import { decision, registry } from './registry.js';

// Bounds of the guardrail's own work (a pathological field is refused, never scanned for long),
// numbers that must read back exactly as written, and the spellings of a tool call's fields.

const route = (o: Record<string, unknown>) => runGuardrail(JSON.stringify(o), registry);
const step = (call: Record<string, unknown>) =>
  JSON.stringify({
    thought: 't',
    tool_calls: [call],
    confidence: 0.9,
    human_required: false,
    done: false,
    summary: '',
  });

describe('confidence strings are bounded', () => {
  it.each([
    ['digits then junk', `${'1'.repeat(40000)}x`],
    ['a point, digits, % then junk', `0.${'1'.repeat(40000)}%x`],
    ['spaces then junk', `1${' '.repeat(60000)}x`],
    ['long but numeric', `0.${'5'.repeat(40)}`],
  ])('a %s confidence is not read (invalid_schema)', (_, confidence) => {
    expect(coerceConfidence(confidence)).toBeUndefined();
    expect(route(decision({ confidence }))).toMatchObject({ outcome: 'ask_human', reason_code: 'invalid_schema' });
    const out = parseLlmDecision(
      JSON.stringify({ thought: 't', tool_calls: [], confidence, human_required: false, done: true, summary: '' }),
    );
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'invalid_schema' });
  });

  it.each([
    ['0.85', 0.85],
    ['  85 % ', 0.85],
    ['+.5', 0.5],
    ['1.', 1],
    ['\t0.9\n', 0.9],
  ])('still reads %j', (s, n) => {
    expect(coerceConfidence(s)).toBe(n);
  });
});

describe('a key repeated many times is compared once per repeat', () => {
  it('a large first value repeated as a smaller equal one is accepted (the same value)', () => {
    const big = `[${' '.repeat(120000)}1]`;
    const payload = `{"a":${big}${',"a":[1]'.repeat(2000)}}`;
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"r","requires_human":false,' +
      `"payload":${payload}}`;
    expect(scanJson(payload)).toEqual({});
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ok', decision: { payload: { a: [1] } } });
  });

  it("the first value's canonical form is computed once, not once per repeat", () => {
    const repeats = 200;
    const payload = `{"a":[${' '.repeat(10000)}1]${',"a":[1.0]'.repeat(repeats)}}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(scanJson(payload)).toEqual({});
      // one parse of the first value, one of each repeat (before: two per repeat)
      expect(parse.mock.calls.length).toBe(repeats + 1);
    } finally {
      parse.mockRestore();
    }
  });

  it('one different repeat among many is still a duplicate', () => {
    const payload = `{"a":[${' '.repeat(1000)}1]${',"a":[1]'.repeat(50)},"a":[2]}`;
    expect(scanJson(payload)).toEqual({ duplicate: '$.a' });
  });
});

describe('every number reads back as written', () => {
  it.each([
    ['12345678901234567e1', '123456789012345660'],
    ['9.007199254740993e15', '9007199254740992'],
    ['1234567890123456.7', '1234567890123456.8'],
    ['0.12345678901234567', '0.12345678901234566'],
    ['3e-324', '5e-324'],
  ])('refuses %s (reads as %s)', (raw, reads) => {
    expect(numberProblem(raw)).toBe(`${raw} does not read back as written (it reads as ${reads})`);
    expect(scanJson(`{"n":${raw}}`)).toEqual({
      number: `$.n: ${raw} does not read back as written (it reads as ${reads})`,
    });
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"r","requires_human":false,' +
      `"payload":{"n":${raw}}}`;
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'unparseable' });
  });

  it.each([
    '1.50e2',
    '150.000e-1',
    '-12.5E+3',
    '0.000123e4',
    '100000000000000000000e-5',
    '1.7976931348623157e308',
    '2.2250738585072014e-308',
    '1234567890.12345',
    '-0.0000000000000001',
    '9.007199254740992e15',
  ])('accepts %s (exact, trailing zeros and exponent normalised)', (raw) => {
    expect(numberProblem(raw)).toBeUndefined();
  });
});

describe('executor tool calls: every spelling of the tool and of its arguments', () => {
  it.each([
    ['tool_name', { tool: 'echo.say', tool_name: 'shell.exec', args: { text: 'hi' }, intent: 'x' }],
    ['function as a string', { tool: 'echo.say', function: 'shell.exec', args: {} }],
    ['action', { name: 'echo.say', action: 'shell.exec', args: {} }],
    ['tool_id', { tool: 'echo.say', tool_id: 'shell.exec', args: {} }],
    ['tool_input', { tool: 'echo.say', args: { text: 'hi' }, tool_input: { text: 'rm -rf ~' } }],
    ['params', { tool: 'echo.say', args: { text: 'hi' }, params: { text: 'rm -rf ~' } }],
    ['action_input', { action: 'echo.say', args: { text: 'hi' }, action_input: { text: 'x' } }],
    ['tool_args', { tool: 'echo.say', args: { text: 'hi' }, tool_args: '{"text":"x"}' }],
    ['tool_name under function', { function: { name: 'echo.say', tool_name: 'shell.exec', arguments: '{}' } }],
  ])('two spellings that disagree (%s) are refused: ambiguous_candidates', (_, call) => {
    const out = parseLlmDecision(step(call));
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
    expect(out.decision.tool_calls).toEqual([]);
  });

  it.each([
    ['tool_name alone', { tool_name: 'echo.say', args: { text: 'hi' } }, 'tool_name → tool'],
    ['tool_id alone', { tool_id: 'echo.say', args: { text: 'hi' } }, 'tool_id → tool'],
    ['function as a string', { function: 'echo.say', params: { text: 'hi' } }, 'function → tool'],
    ['LangChain action', { action: 'echo.say', action_input: { text: 'hi' } }, 'action → tool'],
    ['LangChain action, input as JSON', { action: 'echo.say', action_input: '{"text":"hi"}' }, 'action → tool'],
    [
      'agreeing spellings',
      { tool: 'echo.say', tool_name: 'echo.say', args: { text: 'hi' }, tool_args: { text: 'hi' } },
      '',
    ],
  ])('%s is read as the tool call', (_, call, renamed) => {
    const out = parseLlmDecision(step(call));
    expect(out).toMatchObject({
      outcome: 'ok',
      decision: { tool_calls: [{ tool: 'echo.say', args: { text: 'hi' }, intent: '' }] },
    });
    if (renamed !== '')
      expect(out.repairs).toContainEqual({ kind: 'rename_key', detail: `$.tool_calls[0].${renamed}` });
    expect(out.repairs.filter((r) => r.kind === 'mask')).toEqual([]);
  });

  it('a repeated key inside a JSON string under a new spelling is duplicate_keys', () => {
    const out = parseLlmDecision(step({ action: 'echo.say', action_input: '{"text":"hi","text":"rm -rf ~"}' }));
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'duplicate_keys' });
  });
});

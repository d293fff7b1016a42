import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, cleanText, registry } from './registry.js';

const ok = (repairs: unknown[]) => ({ outcome: 'ok', decision: clean, repairs });
const syntax = (before: string, after: string) => ({ kind: 'syntax', before, after });

describe('guardrail step 2: repair and parse', () => {
  it('removes trailing commas', () => {
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"the user greets echo","payload":{"text":"hi",},"requires_human":false,}';
    expect(runGuardrail(text, registry)).toEqual(ok([syntax(text, cleanText)]));
  });

  it('turns single quotes and Python True/False/None into JSON', () => {
    const text =
      "{'decision': 'dispatch_module', 'target': 'echo', 'confidence': 0.9, 'reason': 'the user greets echo', 'payload': {'text': 'hi', 'extra': None}, 'requires_human': False}";
    const out = runGuardrail(text, registry);
    expect(out).toEqual({
      outcome: 'ok',
      decision: { ...clean, payload: { text: 'hi', extra: null } },
      repairs: [
        syntax(
          text,
          '{"decision": "dispatch_module", "target": "echo", "confidence": 0.9, "reason": "the user greets echo", "payload": {"text": "hi", "extra": null}, "requires_human": false}',
        ),
      ],
    });
  });

  it('reads Python True as true', () => {
    const text =
      "{'decision': 'direct_reply', 'target': None, 'confidence': 1, 'reason': 'hi', 'payload': {}, 'requires_human': True}";
    const out = runGuardrail(text, registry);
    expect(out.outcome).toBe('ok');
    expect(out.decision).toEqual({
      decision: 'direct_reply',
      target: null,
      confidence: 1,
      reason: 'hi',
      payload: {},
      requires_human: true,
    });
  });

  it('drops // and /* */ comments and quotes bare keys', () => {
    const text = `{
  // routing
  decision: "dispatch_module", /* the module */ target: "echo",
  confidence: 0.9, reason: "the user greets echo", payload: {text: "hi"}, requires_human: false
}`;
    const out = runGuardrail(text, registry);
    expect(out).toMatchObject({ outcome: 'ok', decision: clean });
    expect(out.repairs.map((r) => r.kind)).toEqual(['syntax']);
  });

  it('parses a whole answer that is a JSON string holding the decision', () => {
    const text = JSON.stringify(cleanText);
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'nested_json_string', before: text, after: cleanText }]));
  });

  it('parses a decision inside a string-valued wrapper key (OpenAI tool call arguments)', () => {
    const text = JSON.stringify({ name: 'route', arguments: cleanText });
    expect(runGuardrail(text, registry)).toEqual(
      ok([
        { kind: 'nested_json_string', before: cleanText },
        { kind: 'unwrap_key', detail: 'arguments' },
      ]),
    );
  });

  it.each(['arguments', 'parameters', 'input', 'result', 'output', 'response', 'routing_decision', 'data'])(
    'unwraps the known wrapper key %s',
    (key) => {
      const text = JSON.stringify({ type: 'tool_use', [key]: clean });
      expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'unwrap_key', detail: key }]));
    },
  );

  it('does not unwrap an object with two wrapper keys', () => {
    const text = JSON.stringify({ input: clean, output: clean });
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'no_decision',
      retryable: true,
    });
  });

  it('does not unwrap an unknown key', () => {
    const text = JSON.stringify({ answer_object: clean });
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'no_decision' });
  });

  it('unwraps a one-object array', () => {
    expect(runGuardrail(`[${cleanText}]`, registry)).toEqual(ok([{ kind: 'unwrap_array' }]));
  });

  it('unwraps a wrapper holding a one-object array', () => {
    const text = JSON.stringify({ result: [clean] });
    expect(runGuardrail(text, registry)).toEqual(
      ok([{ kind: 'unwrap_array' }, { kind: 'unwrap_key', detail: 'result' }]),
    );
  });

  it('reports JSON that no repair can read as unparseable', () => {
    expect(runGuardrail('{"a" 1 : : : 2 }', registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'unparseable',
      retryable: true,
      // the colon missing after "a" is added (a value follows); the colons after the value are not
      errors: ['the JSON in the answer cannot be parsed', 'unexpected ":" after a value at character 7'],
      repairs: [],
    });
  });

  it('parses valid JSON of any size but repairs at most 16 KiB (jsonrepair is quadratic on some input)', () => {
    const big = { ...clean, reason: 'x'.repeat(20_000) };
    expect(runGuardrail(JSON.stringify(big), registry)).toEqual({ outcome: 'ok', decision: big, repairs: [] });
    const broken = JSON.stringify(big).replace('"requires_human":false}', '"requires_human":false,}');
    expect(runGuardrail(broken, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'unparseable',
      retryable: true,
      errors: [
        'the JSON in the answer cannot be parsed',
        `the JSON is not valid and, at ${broken.length} characters, too long to repair (at most 16384)`,
      ],
      repairs: [],
    });
  });

  it('fails safe on pathological answers (bounded work: see bench/guardrail)', () => {
    for (const text of [
      "{'a':'" + "x'y".repeat(50_000),
      '[{'.repeat(100_000),
      '<json>{'.repeat(30_000),
      '```\n{}\n'.repeat(20_000),
    ])
      expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human' });
  });
});

describe('guardrail step 2: a repair never changes what a value says', () => {
  /** The refusal, with the reason the repair or the number check gave. */
  const unparseable = (problem: string) => ({
    outcome: 'ask_human',
    reason_code: 'unparseable',
    retryable: true,
    errors: ['the JSON in the answer cannot be parsed', problem],
    repairs: [],
  });
  /** `clean` with its payload spelt as `payload` (raw JSON-ish text). */
  const withPayload = (payload: string) => cleanText.replace('{"text":"hi"}', payload);

  it.each([
    ['an escaped space (rm -rf my\\ dir removes one directory)', '{"command":"rm -rf my\\ dir"}', 'rm -rf my\\ dir'],
    ['a regex (\\d stays \\d)', '{"command":"^\\d+\\.\\d+$"}', '^\\d+\\.\\d+$'],
    ['an escaped dollar (echo \\$HOME)', '{"command":"echo \\$HOME"}', 'echo \\$HOME'],
  ])('keeps the backslashes of %s exactly as written', (_, payload, command) => {
    const text = withPayload(payload);
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ok',
      decision: { ...clean, payload: { command } },
      repairs: [syntax(text, withPayload(JSON.stringify({ command })))],
    });
  });

  const NOT_JSON_NUMBER = 'a number not in JSON form (0x…, 0o…, leading zero, …) at character 113';
  it.each([
    [
      'a Windows path whose \\n and \\t would become a newline and a tab',
      '{"path":"C:\\Users\\new\\table.txt"}',
      'a string mixes the invalid escape \\U with the JSON escape \\n (ambiguous) at character 113',
    ],
    [
      'an apostrophe inside a single-quoted string',
      "{'text':'Don't worry'}",
      'unexpected "t" after a value at character 118',
    ],
    ['NaN', '{"n":NaN}', 'an unquoted value "NaN" at character 110'],
    ['Infinity', '{"n":Infinity}', 'an unquoted value "Infinity" at character 110'],
    ['a hex number', '{"mode":0x10}', NOT_JSON_NUMBER],
    ['an octal number', '{"mode":0o755}', NOT_JSON_NUMBER],
    ['a leading zero', "{'mode':0755}", NOT_JSON_NUMBER],
    ['an unquoted value', '{"command":rm -rf build}', 'an unquoted value "rm" at character 116'],
  ])('refuses %s as unparseable, saying why', (_, payload, problem) => {
    expect(runGuardrail(withPayload(payload), registry)).toEqual(unparseable(problem));
  });

  it('refuses a number in valid JSON that does not read back as written (1e999, 2^64-ish integers)', () => {
    expect(runGuardrail(withPayload('{"n":1e999}'), registry)).toEqual(
      unparseable('$.payload.n: 1e999 is out of range'),
    );
    expect(runGuardrail(withPayload('{"id":12345678901234567890}'), registry)).toEqual(
      unparseable('$.payload.id: 12345678901234567890 is beyond the integers a number keeps exactly (±2^53)'),
    );
    expect(runGuardrail(withPayload('{"id":9007199254740991,"x":0.30000000000000004}'), registry)).toMatchObject({
      outcome: 'ok',
      decision: { payload: { id: 9007199254740991, x: 0.30000000000000004 } },
    });
  });

  it('reads smart quotes as delimiters and raw newlines inside strings as newlines', () => {
    const text =
      '{“decision”:“dispatch_module”,“target”:“echo”,“confidence”:0.9,“reason”:“the user greets echo”,“payload”:{“text”:“hi\nthere”},“requires_human”:false}';
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ok',
      decision: { ...clean, payload: { text: 'hi\nthere' } },
    });
  });

  it('refuses, at once, the unbalanced quotes jsonrepair spent seconds on (8 KB: 11.7 s before)', () => {
    expect(runGuardrail(`{'a':${"'x".repeat(4000)}}`, registry)).toEqual(
      unparseable('unexpected "x" after a value at character 8'),
    );
    const reason = `{'decision':'reject','target':None,'confidence':0.9,'reason':${"'x".repeat(4000)},'payload':{},'requires_human':False}`;
    expect(runGuardrail(reason, registry)).toEqual(unparseable('unexpected "x" after a value at character 64'));
    const sed = `{'decision':'dispatch_module','target':'echo','confidence':0.9,'reason':'r','payload':{'command':'${"sed -e 's/a/b/' ".repeat(200)}'},'requires_human':False}`;
    expect(runGuardrail(sed, registry)).toEqual(unparseable('unexpected "s" after a value at character 106'));
  });
});

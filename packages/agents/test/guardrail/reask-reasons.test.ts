import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { parseLlmDecision } from '../../src/guardrail/llm-decision.js';
import { MAX_PROBLEMS } from '../../src/guardrail/repair.js';
import { clipMiddle, ERRORS_SHOWN_MAX, shownErrors, SNIPPET_MAX } from '../../src/guardrail/snippet.js';
import { RouterEngine } from '../../src/router/router-engine.js';
import { routerReaskMessage } from '../../src/router/router-prompt.js';
import { ScriptedModel } from '../router/stubs.js';
import { clean, cleanText, registry } from './registry.js';

/**
 * A refusal of the structural repair, or of the checks on the text parsed (numbers, depth), says
 * why: the reason is fed back to the model on the re-ask instead of only "cannot be parsed".
 */

const LEAD = 'the JSON in the answer cannot be parsed';

/** `clean` with its payload spelt as `payload` (raw JSON-ish text). */
const withPayload = (payload: string) => cleanText.replace('{"text":"hi"}', payload);

/** `n` arrays nested in one another. */
const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

const REQUEST = {
  text: 'say hi to echo',
  snapshot: { tools: [], dropped: [], unknown: [], used_tokens: 0, budget_tokens: 100 },
  agents: [],
  session_summary: '',
  feedback: [],
  registry,
};

/** The guardrail's refusal of an answer it cannot parse, with these errors. */
const unparseable = (...errors: string[]) => ({
  outcome: 'ask_human',
  reason_code: 'unparseable',
  retryable: true,
  errors,
  repairs: [],
});

/** The re-ask message the engine sends after `errors`. */
const reask = (...errors: string[]) =>
  [
    'Your answer could not be used:',
    ...errors.map((e) => `- ${e}`),
    'Answer again with exactly one JSON object following the schema, and nothing else.',
  ].join('\n');

/** Routes `broken` then a clean answer with the real guardrail; returns the engine's result and its re-ask. */
async function reaskAfter(broken: string) {
  const model = new ScriptedModel([broken, cleanText]);
  const res = await new RouterEngine({ model, guardrail: runGuardrail }).route(REQUEST);
  expect(model.requests).toHaveLength(2);
  const second = model.requests[1]!.messages;
  expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  return { res, asked: second[3]!.content };
}

describe('guardrail: the re-ask says why the JSON cannot be parsed', () => {
  it('a token after a value: the repair says what and where', async () => {
    const broken = cleanText.replace('"target":"echo"', '"target":"echo" sure');
    const problem = 'unexpected "s" after a value at character 46';
    expect(runGuardrail(broken, registry)).toEqual(unparseable(LEAD, problem));
    const { res, asked } = await reaskAfter(broken);
    expect(res.outcome).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
    expect(res.attempts.map((a) => a.outcome)).toEqual([
      unparseable(LEAD, problem),
      { outcome: 'ok', decision: clean, repairs: [] },
    ]);
    expect(asked).toBe(reask(LEAD, problem));
  });

  it('a number out of range (valid JSON): the path and the number', async () => {
    const broken = cleanText.replace('"confidence":0.9', '"confidence":1e999');
    const problem = '$.confidence: 1e999 is out of range';
    expect(runGuardrail(broken, registry)).toEqual(unparseable(LEAD, problem));
    const { res, asked } = await reaskAfter(broken);
    expect(res.outcome).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
    expect(asked).toBe(reask(LEAD, problem));
  });

  it('nesting too deep, in valid JSON and in JSON the repair reads', async () => {
    const valid = withPayload(`{"n":${nested(130)}}`);
    const deep = 'the JSON nests deeper than 128 levels';
    expect(runGuardrail(valid, registry)).toEqual(unparseable(LEAD, deep));
    expect((await reaskAfter(valid)).asked).toBe(reask(LEAD, deep));

    // a trailing comma sends it through the repair, which stops at its own depth bound
    const broken = withPayload(`{"n":${nested(130)},}`);
    // the root object and the payload are two levels: the 127th bracket would be the 129th
    const at = broken.indexOf('[') + 126;
    const repairDeep = `nesting deeper than 128 levels at character ${at}`;
    expect(runGuardrail(broken, registry)).toEqual(unparseable(LEAD, repairDeep));
    const { res, asked } = await reaskAfter(broken);
    expect(res.outcome).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
    expect(asked).toBe(reask(LEAD, repairDeep));
  });

  it('JSON held in a payload string that cannot be read says why', () => {
    const text = JSON.stringify({ ...clean, payload: '{"n":1e999}' });
    expect(runGuardrail(text, registry)).toEqual(unparseable(LEAD, '$.payload.n: 1e999 is out of range'));
  });

  it('a broken fragment too long to repair, and an answer past the repair budget, say so', () => {
    const long = withPayload(`{"text":"${'x'.repeat(17_000)}",}`);
    expect(runGuardrail(long, registry)).toEqual(
      unparseable(LEAD, `the JSON is not valid and, at ${long.length} characters, too long to repair (at most 16384)`),
    );
    // five broken fragments of 15 000 characters: the fifth is past the 64 KiB per answer
    const many = Array.from({ length: 5 }, () => `{"decision": "${'y'.repeat(15_000)}" oops}`).join('\n');
    expect(runGuardrail(many, registry)).toEqual(
      unparseable(
        LEAD,
        'unexpected "o" after a value at character 15016',
        'the answer holds more invalid JSON than is repaired (at most 65536 characters)',
      ),
    );
  });

  it('an unparseable second decision beside a readable one: ambiguous, with the reason', () => {
    const text = `${cleanText}\nor {"decision": "reject", "target": null oops}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: [
        'the answer holds another decision that cannot be parsed; give exactly one',
        'unexpected "o" after a value at character 38',
      ],
      repairs: [],
    });
  });

  it('executor decisions carry the reason too', () => {
    const text = JSON.stringify({
      thought: 't',
      tool_calls: [],
      confidence: 0.5,
      human_required: false,
      done: true,
      summary: 's',
    }).replace('0.5', '1e999');
    expect(parseLlmDecision(text)).toEqual({
      outcome: 'ask_human',
      decision: { thought: '', tool_calls: [], confidence: 0, human_required: true, done: false, summary: '' },
      reason_code: 'unparseable',
      retryable: true,
      errors: [LEAD, '$.confidence: 1e999 is out of range'],
      repairs: [],
    });
  });
});

describe('guardrail: the reasons stay bounded', () => {
  it('a long number is shown without its middle, the reason kept (at most SNIPPET_MAX characters)', () => {
    const big = `1${'0'.repeat(1000)}e999`;
    const out = runGuardrail(withPayload(`{"n":${big}}`), registry);
    const full = `$.payload.n: ${big} is out of range`;
    const shown = `${full.slice(0, 100)}…${full.slice(full.length - 99)}`;
    expect(shown).toHaveLength(SNIPPET_MAX);
    expect(out).toEqual(unparseable(LEAD, shown));
    expect(shown.endsWith('0e999 is out of range')).toBe(true);
  });

  it('a long key holding a format character is shown bounded', () => {
    const key = `${'k'.repeat(500)}\u200b`;
    const out = runGuardrail(cleanText.replace('"payload"', JSON.stringify(key)), registry);
    const full = `the key $.${'k'.repeat(500)}\\u200b holds an invisible format character; write keys without them`;
    expect(out).toEqual(unparseable(LEAD, `${full.slice(0, 100)}…${full.slice(full.length - 99)}`));
  });

  it('each reason is given once, and at most MAX_PROBLEMS of them', () => {
    const same = Array.from({ length: 6 }, () => '{"decision": "x" oops}').join('\n');
    expect(runGuardrail(same, registry)).toEqual(unparseable(LEAD, 'unexpected "o" after a value at character 17'));
    // the position differs in each fragment: six reasons, three kept
    const different = Array.from({ length: 6 }, (_, i) => `{"decision": "${'x'.repeat(i + 1)}" oops}`).join('\n');
    expect(MAX_PROBLEMS).toBe(3);
    expect(runGuardrail(different, registry)).toEqual(
      unparseable(
        LEAD,
        'unexpected "o" after a value at character 17',
        'unexpected "o" after a value at character 18',
        'unexpected "o" after a value at character 19',
      ),
    );
  });

  it('clipMiddle keeps short text, cuts long text to SNIPPET_MAX and never splits a surrogate pair', () => {
    expect(clipMiddle('short')).toBe('short');
    const exact = 'a'.repeat(SNIPPET_MAX);
    expect(clipMiddle(exact)).toBe(exact);
    const long = `${'a'.repeat(150)}${'b'.repeat(150)}`;
    expect(clipMiddle(long)).toBe(`${'a'.repeat(100)}…${'b'.repeat(99)}`);
    // a pair across the head's end: the head stops before it
    const pairAtHead = `${'a'.repeat(99)}😀${'b'.repeat(200)}`;
    expect(clipMiddle(pairAtHead)).toBe(`${'a'.repeat(99)}…${'b'.repeat(99)}`);
    // a pair across the tail's start: the tail starts after it
    const pairAtTail = `${'a'.repeat(200)}😀${'b'.repeat(98)}`;
    expect(clipMiddle(pairAtTail)).toBe(`${'a'.repeat(100)}…${'b'.repeat(98)}`);
  });
});

describe('errors passed on stay bounded', () => {
  it('a duplicate key of 100k characters is cut in the re-ask, and at most ten errors are listed', () => {
    const long = `$.${'k'.repeat(100_000)} appears twice with different values`;
    const errors = [long, ...Array.from({ length: 11 }, (_, i) => `error ${i}`)];
    const shown = shownErrors(errors);
    expect(shown).toHaveLength(ERRORS_SHOWN_MAX + 1);
    expect(shown[0]).toHaveLength(SNIPPET_MAX);
    expect(shown[0]?.endsWith('appears twice with different values')).toBe(true);
    expect(shown.at(-1)).toBe('… and 2 more');
    const message = routerReaskMessage(errors);
    expect(message.length).toBeLessThan(1000);
    expect(message).toContain('- … and 2 more');
  });
});

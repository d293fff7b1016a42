import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { parseLlmDecision } from '../../src/guardrail/llm-decision.js';
import { cleanText as D, decision, registry } from './registry.js';

/** A different, high-risk decision the model must not be held to. */
const A = JSON.stringify(decision({ target: 'fs.read', payload: { path: '/etc' } }));

function expectOk(text: string, target = 'echo'): void {
  const out = runGuardrail(text, registry);
  expect(out.outcome).toBe('ok');
  expect(out.decision?.target).toBe(target);
}

function expectRefused(text: string, reason: string, error: RegExp): void {
  const out = runGuardrail(text, registry);
  expect(out).toMatchObject({ outcome: 'ask_human', reason_code: reason, retryable: false });
  expect(out.outcome === 'ok' ? [] : out.errors).toEqual([expect.stringMatching(error)]);
}

describe('model shapes that read as the final decision', () => {
  const shapes: Record<string, string> = {
    'DeepSeek-R1 think block with a draft inside': `<think>\nMaybe ${A}? No, echo.\n</think>\n\n${D}`,
    'R1 chat template (lone </think>)': `Maybe ${A}? no.\n</think>\n${D}`,
    'Claude <thinking> then the JSON': `<thinking>I could do ${A} but echo is better.</thinking>\n\n${D}`,
    'Qwen/Hermes <tool_call>': `<tool_call>\n{"name": "route", "arguments": ${D}}\n</tool_call>`,
    'Llama 3.1 <|python_tag|>': `<|python_tag|>${D}<|eom_id|>`,
    'Llama 3.1 {name, parameters}': `{"name": "route", "parameters": ${D}}`,
    'Mistral [TOOL_CALLS]': `[TOOL_CALLS][{"name": "route", "arguments": ${D}}]`,
    'Gemini fence with trailing commentary': '```json\n' + D + '\n```\n\nThis routes the greeting to echo.',
    'JSON then "Let me know if…"': `${D}\n\nLet me know if you want me to route it differently.`,
    'the same decision twice': `${D}\n${D}`,
    'a whole-answer JSON string': JSON.stringify(D),
    'prose that cannot do it itself and routes': `I can't help with that myself, so I am routing it: ${D}`,
    'an "Actually" that explains, not retracts': `${D}\n\nActually, this is just a greeting, so echo fits.`,
    'the user must wait': `${D}\nThe user will have to wait.`,
    'a frame that introduces other JSON': `The schema is {"decision": "…"} as usual.\n\`\`\`json\n${D}\n\`\`\``,
    'Python literals and comments': `{\n // route\n 'decision': 'dispatch_module', 'target': 'echo', 'confidence': 0.9,\n 'reason': 'r', 'payload': {'text': 'hi',}, 'requires_human': False,\n}`,
  };
  for (const [name, text] of Object.entries(shapes)) it(name, () => expectOk(text));

  it('reads unicode escapes as their characters', () => {
    const out = runGuardrail(D.replace('"hi"', '"\\u00e9\\u4f60"'), registry);
    expect(out.decision?.payload).toEqual({ text: 'é你' });
  });

  it('lets a retracted ask_human through: it acts on nothing', () => {
    const ask = JSON.stringify(decision({ decision: 'ask_human', target: null }));
    expect(runGuardrail(`${ask}\nActually, let me reconsider.`, registry)).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'model_asked_human',
    });
  });
});

describe('decisions the model did not finally give are never acted on', () => {
  const RETRACT = /takes the decision back/;
  const FRAME = /as an example or a wrong one/;
  const REFUSE = /refuses the request/;
  const cases: [string, string, RegExp][] = [
    [
      'a draft followed by "Actually, let me reconsider"',
      `Here is my decision: ${A}\n\nActually, let me reconsider — echo fits better.`,
      RETRACT,
    ],
    [
      'a fenced decision the model then calls wrong',
      '```json\n' + A + '\n```\nThis is wrong — do not use it.',
      RETRACT,
    ],
    ['"Wait," after the decision', `${A}\n\nWait, fs.read is not needed here.`, RETRACT],
    ['"on second thought"', `${A} On second thought, I should ask first.`, RETRACT],
    ['"scratch that" with no new decision', `${A}\nScratch that.`, RETRACT],
    ['"just an example" after it', `${A}\n(That was just an example of the format.)`, RETRACT],
    ['an example in the reasoning', `For example, a decision could look like ${A}`, FRAME],
    ['a decision the model labels wrong', 'This would be wrong:\n```json\n' + A + '\n```', FRAME],
    ['an alternative it considered', `I considered ${A} but it is too risky.`, FRAME],
    ['a refusal with an example JSON', `I can't help with that. A decision would normally look like ${A}.`, REFUSE],
    ['an apology-refusal', `I’m sorry, but I cannot route this request. (For reference, the format is ${A}.)`, REFUSE],
    ['a refusal after a draft in a think block', `<think>ok</think>I must decline this request.\n${A}`, REFUSE],
  ];
  for (const [name, text, error] of cases) it(name, () => expectRefused(text, 'ambiguous_candidates', error));

  it('keeps a self-correction ambiguous rather than picking either', () => {
    expectRefused(`${A}\n\nCorrection: the right decision is:\n${D}`, 'ambiguous_candidates', /2 different decisions/);
  });
});

describe('executor decisions (parseLlmDecision)', () => {
  const call = '{"tool_calls": [{"tool": "fs.write", "args": {"path": "/x"}}], "confidence": 0.9}';

  it('refuses a tool call inside a refusal', () => {
    const out = parseLlmDecision(`I can't do that. It would look like ${call}, but I won't.`);
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates', retryable: false });
    expect(out.decision).toMatchObject({ tool_calls: [], human_required: true });
  });

  it('refuses a tool call the model takes back', () => {
    const out = parseLlmDecision(`${call}\nOops, that is wrong: the path is not writable.`);
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
  });

  it('reads a Hermes <tool_call> after a think block', () => {
    const out = parseLlmDecision(`<think>maybe ${call}</think>\n<tool_call>\n${call}\n</tool_call>`);
    expect(out.outcome).toBe('ok');
    expect(out.decision.tool_calls).toHaveLength(1);
  });

  it('lets a decision that asks a human through whatever the prose says', () => {
    const out = parseLlmDecision('I cannot proceed. {"tool_calls": [], "human_required": true, "confidence": 0.2}');
    expect(out).toMatchObject({ outcome: 'ok', decision: { human_required: true } });
  });
});

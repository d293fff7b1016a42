import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, cleanText, decision, registry } from './registry.js';

/** The §3.6 example as a prompt shows it. */
const TEMPLATE =
  '{ "decision": "direct_reply|dispatch_agent|dispatch_module|ask_human|reject", "target": "module-or-agent-id", "confidence": 0.0, "reason": "string", "payload": {}, "requires_human": false }';

describe('guardrail step 3: select', () => {
  it('asks a human when one answer holds two different decisions (never first wins)', () => {
    const other = JSON.stringify(decision({ decision: 'dispatch_agent', target: 'planner' }));
    const text = `Option A:\n${cleanText}\nOption B:\n${other}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: ['the answer holds 2 different decisions; give exactly one'],
      repairs: [],
    });
  });

  it('asks a human for two decisions in two fences', () => {
    const other = JSON.stringify(decision({ target: 'fs.write' }));
    const text = `\`\`\`json\n${cleanText}\n\`\`\`\nor\n\`\`\`json\n${other}\n\`\`\``;
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
  });

  it('regression: asks a human when a fenced dispatch is followed by a different decision in prose (never first wins)', () => {
    const fenced = JSON.stringify(decision({ target: 'fs.read' }));
    const final = JSON.stringify(decision({ decision: 'ask_human', target: null }));
    const text = `\`\`\`json\n${fenced}\n\`\`\`\nWait, that is wrong. Final: ${final}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: ['the answer holds 2 different decisions; give exactly one'],
      repairs: [{ kind: 'fence', detail: '1 fenced block(s)' }],
    });
  });

  it('asks a human when a tagged decision and the prose after it differ', () => {
    const text = `<answer>${JSON.stringify(decision({ target: 'fs.read' }))}</answer>\nCorrection: ${JSON.stringify(decision({ decision: 'reject', target: null }))}`;
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
  });

  it('accepts the same decision in a fence and in the prose once', () => {
    const text = `\`\`\`json\n${cleanText}\n\`\`\`\nSo, once more: ${cleanText}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'fence', detail: '1 fenced block(s)' }],
    });
  });

  it('asks a human when a fence holds a decision that cannot be parsed and the prose another one', () => {
    const text = `\`\`\`json\n{"decision": "dispatch_module", "target": "fs.write" : : "confidence" 0.9}\n\`\`\`\n${cleanText}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: [
        'the answer holds another decision that cannot be parsed; give exactly one',
        'unexpected ":" after a value at character 53',
      ],
      repairs: [],
    });
  });

  it('asks a human for an array of two decisions', () => {
    const text = JSON.stringify([clean, decision({ confidence: 0.6 })]);
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'ambiguous_candidates' });
  });

  it('counts the same decision repeated (same keys in another order) once', () => {
    const reordered = JSON.stringify({
      requires_human: false,
      payload: { text: 'hi' },
      reason: 'the user greets echo',
      confidence: 0.9,
      target: 'echo',
      decision: 'dispatch_module',
    });
    expect(runGuardrail(`${cleanText}\n\nAgain: ${reordered}`, registry)).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [],
    });
  });

  it('drops the prompt template echoed before the real answer', () => {
    expect(runGuardrail(`You asked for:\n${TEMPLATE}\nMy answer:\n${cleanText}`, registry)).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'template_echo', detail: '1 echo(es) of the prompt template dropped' }],
    });
  });

  it('drops a schema sketch whose decision is a placeholder ("…"), before or after the answer', () => {
    for (const text of [
      `Schema: {"decision": "…"}\n${cleanText}`,
      `${cleanText}\nshape: {"decision": "…", "target": "x"}`,
    ])
      expect(runGuardrail(text, registry)).toEqual({
        outcome: 'ok',
        decision: clean,
        repairs: [{ kind: 'template_echo', detail: '1 echo(es) of the prompt template dropped' }],
      });
  });

  it('drops a schema sketch whose decision is "..." or another ellipsis, before or after the answer', () => {
    for (const text of [
      `Schema: {"decision": "..."}\n${cleanText}`,
      `${cleanText}\nshape: {"decision": "...", "target": "fs.read", "confidence": 0.9}`,
      `Schema: {"decision": "...."}\n${cleanText}`,
      `Schema: {"decision": "……"}\n${cleanText}`,
      `${cleanText}\nshape: {"decision": ". . .", "target": "x"}`,
    ])
      expect(runGuardrail(text, registry)).toEqual({
        outcome: 'ok',
        decision: clean,
        repairs: [{ kind: 'template_echo', detail: '1 echo(es) of the prompt template dropped' }],
      });
    // outside the fence that was read, the sketch is no second decision (and no echo of that part)
    expect(runGuardrail(`\`\`\`json\n${cleanText}\n\`\`\`\nshape: {"decision": " ... "}`, registry)).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'fence', detail: '1 fenced block(s)' }],
    });
  });

  it('an answer whose only decision is an ellipsis repeats the template (no_decision)', () => {
    expect(runGuardrail(JSON.stringify(decision({ decision: '...' })), registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'no_decision',
      retryable: true,
      errors: ['the answer only repeats the prompt template; answer with real values'],
      repairs: [],
    });
  });

  it('fails with no_decision when the answer is only the template', () => {
    expect(runGuardrail(TEMPLATE, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'no_decision',
      retryable: true,
      errors: ['the answer only repeats the prompt template; answer with real values'],
      repairs: [],
    });
  });

  it('treats a placeholder target as a template echo', () => {
    const text = JSON.stringify(decision({ target: 'module-or-agent-id' }));
    expect(runGuardrail(text, registry)).toMatchObject({ outcome: 'ask_human', reason_code: 'no_decision' });
  });

  it('ignores objects without a decision key', () => {
    const text = `{"thinking": "the user says hi"}\n${cleanText}\n{"note": 1}`;
    expect(runGuardrail(text, registry)).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
  });

  it('fails with no_decision when no object has a decision key', () => {
    expect(runGuardrail('{"route": "echo", "confidence": 0.9}', registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'no_decision',
      retryable: true,
      errors: ['no JSON object in the answer has the required keys'],
      repairs: [],
    });
  });

  it('asks a human when a key repeats with different values (JSON.parse would keep the last)', () => {
    const text =
      '{"decision":"reject","target":"echo","confidence":0.9,"reason":"r","payload":{},"requires_human":false,"decision":"dispatch_module"}';
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'duplicate_keys',
      retryable: false,
      errors: ['$.decision appears twice with different values'],
      repairs: [],
    });
  });

  it('detects duplicate keys after repair and inside the payload', () => {
    const text =
      "{'decision': 'dispatch_module', 'target': 'echo', 'confidence': 0.9, 'payload': {'path': 'a', 'path': 'b'},}";
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ask_human',
      reason_code: 'duplicate_keys',
      errors: ['$.payload.path appears twice with different values'],
    });
  });

  it('accepts a key repeated with the same value', () => {
    const text = cleanText.replace('"confidence":0.9', '"confidence":0.9,"confidence": 0.90');
    expect(runGuardrail(text, registry)).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
  });

  it('refuses an answer with more JSON objects than it reads rather than pick among the first', () => {
    const junk = Array.from({ length: 40 }, (_, i) => `{"note": ${i}}`).join('\n');
    expect(
      runGuardrail(`${cleanText}\n${junk}\n${JSON.stringify(decision({ target: 'fs.write' }))}`, registry),
    ).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: ['the answer holds more than 32 JSON objects; give exactly one'],
      repairs: [],
    });
  });

  it('asks a human when a second decision in the answer cannot be parsed (the readable one does not win)', () => {
    const text = `${cleanText}\nor maybe {"decision": "dispatch_module", "target": "fs.write" : : "confidence" 0.9}`;
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'ambiguous_candidates',
      retryable: false,
      errors: [
        'the answer holds another decision that cannot be parsed; give exactly one',
        'unexpected ":" after a value at character 53',
      ],
      repairs: [],
    });
  });
});

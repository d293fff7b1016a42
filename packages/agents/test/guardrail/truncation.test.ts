import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, cleanText, registry } from './registry.js';

const truncated = (errors: string[]) => ({ outcome: 'ask_human', reason_code: 'truncated', retryable: false, errors });

/** `cleanText` cut right after `marker` (inclusive). */
function cutAfter(marker: string): string {
  const i = cleanText.indexOf(marker);
  if (i < 0) throw new Error(marker);
  return cleanText.slice(0, i + marker.length);
}

describe('guardrail step 4: truncation', () => {
  it('asks a human when the stream stops inside the decision value', () => {
    expect(runGuardrail('{"decision":"dispatch_mod', registry)).toMatchObject(
      truncated([
        '$.decision was cut off',
        '$.confidence is missing: the answer was cut off before it',
        '$.target is missing: the answer was cut off before it',
      ]),
    );
  });

  it('asks a human when the stream stops inside the target', () => {
    expect(runGuardrail(cutAfter('"target":"ec'), registry)).toMatchObject(
      truncated([
        '$.confidence is missing: the answer was cut off before it',
        '$.target was cut off',
        '$.payload is missing: the answer was cut off before it',
      ]),
    );
  });

  it('asks a human when the stream stops right after a number (0.9 may have been 0.95)', () => {
    expect(runGuardrail(cutAfter('"confidence":0.9'), registry)).toMatchObject(
      truncated(['$.confidence was cut off', '$.payload is missing: the answer was cut off before it']),
    );
  });

  it('asks a human when the stream stops before the confidence', () => {
    expect(runGuardrail(cutAfter('"target":"echo",'), registry)).toMatchObject(
      truncated([
        '$.confidence is missing: the answer was cut off before it',
        '$.payload is missing: the answer was cut off before it',
      ]),
    );
  });

  it('asks a human when a started payload was not closed', () => {
    expect(runGuardrail(cutAfter('"payload":{"text":"hi"'), registry)).toMatchObject(
      truncated(['$.payload was cut off']),
    );
  });

  it('asks a human when a literal was cut (`tr` is not `true`)', () => {
    const text = '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{},"requires_human":tr';
    expect(runGuardrail(text, registry)).toMatchObject(truncated(['$.requires_human was cut off']));
  });

  it('accepts an answer cut inside the reason once the control fields are complete', () => {
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"text":"hi"},"reason":"the user gree';
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ok',
      decision: { ...clean, reason: 'the user gree', requires_human: true },
      repairs: [
        { kind: 'syntax', before: text, after: `${text}"}` },
        { kind: 'truncation', detail: 'answer cut off after the control fields' },
        { kind: 'default_requires_human', after: 'true' },
      ],
    });
  });

  it('regression: a module dispatch cut before its payload is truncated, never dispatched with {}', () => {
    // the payload is the tool's arguments: filling in {} would change what the call means
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"requires_human":false,"reason":"the user wants to';
    expect(runGuardrail(text, registry)).toMatchObject(
      truncated(['$.payload is missing: the answer was cut off before it']),
    );
  });

  it('an agent dispatch cut before its payload is accepted (the agent gets the user text instead)', () => {
    const text =
      '{"decision":"dispatch_agent","target":"planner","confidence":0.9,"requires_human":false,"reason":"plan';
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ok',
      decision: { decision: 'dispatch_agent', target: 'planner', payload: {} },
    });
  });

  it('needs no target for a cut direct reply', () => {
    const text = '{"decision":"direct_reply","confidence":0.8,"reason":"Hello! How can I';
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ok',
      decision: {
        decision: 'direct_reply',
        target: null,
        confidence: 0.8,
        reason: 'Hello! How can I',
        payload: {},
        requires_human: true,
      },
    });
  });

  it('checks truncation inside an unclosed fence', () => {
    expect(runGuardrail(`\`\`\`json\n${cutAfter('"confidence":0.')}`, registry)).toMatchObject(
      truncated(['$.confidence was cut off', '$.payload is missing: the answer was cut off before it']),
    );
  });

  it('checks truncation of a decision inside a wrapper', () => {
    expect(runGuardrail(`{"result": ${cutAfter('"target":"echo"')}`, registry)).toMatchObject(
      truncated([
        '$.confidence is missing: the answer was cut off before it',
        '$.payload is missing: the answer was cut off before it',
      ]),
    );
  });

  it('accepts a number followed by whitespace before the cut', () => {
    const text = '{"decision":"direct_reply","confidence":1 ';
    expect(runGuardrail(text, registry)).toMatchObject({
      outcome: 'ok',
      decision: { decision: 'direct_reply', confidence: 1 },
    });
  });

  it('does not loop forever on a stray closer inside a cut array (found by fast-check)', () => {
    const text = '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"a":[}';
    expect(runGuardrail(text, registry)).toMatchObject(truncated(['$.payload was cut off']));
  });

  describe('a decision inside a JSON string (tool-call arguments) is checked like a fragment', () => {
    const args = (text: string) => JSON.stringify({ name: 'route', arguments: text });
    const inner = JSON.stringify({ ...clean, payload: { text: 'rm -rf /tmp/build' } });

    it("asks a human when the string's JSON was cut inside the payload, though the outer JSON closed", () => {
      expect(runGuardrail(args(inner.slice(0, inner.indexOf('/bu') + 3)), registry)).toMatchObject(
        truncated(['$.payload was cut off']),
      );
      expect(runGuardrail(`<tool_call>${args(inner.slice(0, inner.indexOf('/bu') + 3))}`, registry)).toMatchObject(
        truncated(['$.payload was cut off']),
      );
    });

    it("asks a human when the string's JSON was cut inside an array", () => {
      const files = JSON.stringify({ ...clean, payload: { files: ['a', 'b'] } });
      expect(runGuardrail(args(files.slice(0, files.indexOf('"b"') + 3)), registry)).toMatchObject(
        truncated(['$.payload was cut off']),
      );
    });

    it('accepts one cut inside the reason once the control fields are complete', () => {
      const text =
        '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"text":"hi"},"requires_human":false,"reason":"the user gree';
      expect(runGuardrail(args(text), registry)).toEqual({
        outcome: 'ok',
        decision: { ...clean, reason: 'the user gree' },
        repairs: [
          { kind: 'syntax', before: text, after: `${text}"}` },
          { kind: 'nested_json_string', before: text },
          { kind: 'unwrap_key', detail: 'arguments' },
          { kind: 'truncation', detail: 'answer cut off after the control fields' },
        ],
      });
    });
  });
});

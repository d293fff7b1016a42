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
      truncated(['$.confidence is missing: the answer was cut off before it', '$.target was cut off']),
    );
  });

  it('asks a human when the stream stops right after a number (0.9 may have been 0.95)', () => {
    expect(runGuardrail(cutAfter('"confidence":0.9'), registry)).toMatchObject(truncated(['$.confidence was cut off']));
  });

  it('asks a human when the stream stops before the confidence', () => {
    expect(runGuardrail(cutAfter('"target":"echo",'), registry)).toMatchObject(
      truncated(['$.confidence is missing: the answer was cut off before it']),
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
    const text = '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"the user gree';
    expect(runGuardrail(text, registry)).toEqual({
      outcome: 'ok',
      decision: { ...clean, reason: 'the user gree', payload: {}, requires_human: true },
      repairs: [
        { kind: 'syntax', before: text, after: `${text}"}` },
        { kind: 'truncation', detail: 'answer cut off after the control fields' },
        { kind: 'default_requires_human', after: 'true' },
        { kind: 'default_payload' },
      ],
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
      truncated(['$.confidence was cut off']),
    );
  });

  it('checks truncation of a decision inside a wrapper', () => {
    expect(runGuardrail(`{"result": ${cutAfter('"target":"echo"')}`, registry)).toMatchObject(
      truncated(['$.confidence is missing: the answer was cut off before it']),
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
});

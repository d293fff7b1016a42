import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, registry } from './registry.js';

// Issue 28 item 14: five ordinary slips of real model outputs that the guardrail used to refuse
// (each fixture is a raw answer as a model wrote it) are repaired, each named in `repairs`; every
// safety rule still holds on the repaired decision.

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/guardrail-slips/${name}.txt`, import.meta.url), 'utf8');

const SLIPS: Record<string, { decision: Record<string, unknown>; repair: { kind: string; detail: string } }> = {
  'missing-colon': {
    decision: { ...clean, confidence: 0.92 },
    repair: { kind: 'syntax', detail: 'a missing colon added after a key (first "decision")' },
  },
  'inner-quotes': {
    decision: { ...clean, reason: 'the user says "hi" and wants it echoed', payload: { text: 'say "hi", please' } },
    repair: { kind: 'syntax', detail: 'a " inside a string kept as a character' },
  },
  'string-concat': {
    decision: {
      ...clean,
      confidence: 0.88,
      reason: 'The user greets the echo module and expects the greeting back.',
      payload: { text: 'hi there' },
    },
    repair: { kind: 'syntax', detail: 'strings joined with +' },
  },
  'escaped-object': {
    decision: { ...clean },
    repair: {
      kind: 'escaped_json',
      detail: 'every quote of the JSON was escaped (\\"): the answer was unescaped once',
    },
  },
  undefined: {
    decision: { ...clean, payload: { text: 'hi', lang: null } },
    repair: { kind: 'syntax', detail: 'undefined read as null' },
  },
};

describe('the guardrail’s last slips: repaired, and said so in repairs', () => {
  for (const [name, want] of Object.entries(SLIPS)) {
    it(`guardrail slip ${name}: acted on as the model meant, the repair named`, () => {
      const out = runGuardrail(fixture(name), registry);
      expect({ outcome: out.outcome, decision: out.decision }).toEqual({ outcome: 'ok', decision: want.decision });
      expect(out.repairs).toContainEqual(expect.objectContaining(want.repair));
    });

    it(`guardrail slip ${name}: a repaired dispatch to a high-risk target still needs a person`, () => {
      const text = fixture(name).replaceAll('echo', 'fs.write');
      const out = runGuardrail(text, registry);
      expect({
        outcome: out.outcome,
        target: out.decision?.target,
        requires_human: out.decision?.requires_human,
      }).toEqual({
        outcome: 'ok',
        target: 'fs.write',
        requires_human: true,
      });
      expect(out.repairs).toContainEqual({ kind: 'policy_requires_human', detail: 'fs.write is high risk' });
    });

    it(`guardrail slip ${name}: taken back after it, it is never acted on`, () => {
      const out = runGuardrail(`${fixture(name).trim()}\n\nActually, let me reconsider — this is wrong.`, registry);
      expect(out.outcome).toBe('ask_human');
    });
  }

  it('requires_human: undefined is no "false": a high-risk dispatch still goes to a person', () => {
    const text = fixture('undefined')
      .replace('"requires_human": false', '"requires_human": undefined')
      .replaceAll('echo', 'fs.write');
    const out = runGuardrail(text, registry);
    expect({ outcome: out.outcome, requires_human: out.decision?.requires_human }).toEqual({
      outcome: 'ok',
      requires_human: true,
    });
  });

  it('two decisions, one of them repaired, are ambiguous and never acted on', () => {
    const other = JSON.stringify({ ...clean, target: 'fs.read', payload: { path: '/etc' } });
    const out = runGuardrail(`${fixture('missing-colon').trim()}\n${other}`, registry);
    expect(out.outcome).toBe('ask_human');
  });

  it.each([
    [
      'an apostrophe in a single-quoted string',
      "{'decision': 'dispatch_module', 'target': 'echo', 'reason': 'Don't', 'confidence': 0.9, 'payload': {}, 'requires_human': false}",
    ],
    [
      'a quote that swallows the next member',
      '{"decision":"dispatch_module","target":"echo" then,"target":"shell.exec","confidence":0.9,"reason":"r","payload":{},"requires_human":false}',
    ],
    [
      '+ joining a string and a name',
      '{"decision":"dispatch_module","target":"ec" + ho,"confidence":0.9,"reason":"r","payload":{},"requires_human":false}',
    ],
    [
      'an escaped answer with an unescaped quote',
      '{\\"decision\\": \\"dispatch_module\\", \\"target\\": "shell.exec", \\"confidence\\": 0.9}',
      'no_json',
    ],
  ])('still refuses %s', (_, text, reason_code = 'unparseable') => {
    const out = runGuardrail(text, registry);
    expect({ outcome: out.outcome, reason_code: out.outcome === 'ok' ? undefined : out.reason_code }).toEqual({
      outcome: 'ask_human',
      reason_code,
    });
  });
});

import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, decision, registry } from './registry.js';

const run = (o: Record<string, unknown>, opts = {}) => runGuardrail(JSON.stringify(o), registry, opts);
const invalid = (errors: string[], repairs: unknown[] = []) => ({
  outcome: 'ask_human',
  reason_code: 'invalid_schema',
  retryable: true,
  errors,
  repairs,
});

describe('guardrail step 7: validate', () => {
  it('re-asks for a decision outside the enum', () => {
    expect(run(decision({ decision: 'forward' }))).toEqual(
      invalid(['$.decision must be one of "direct_reply", "dispatch_agent", "dispatch_module", "ask_human", "reject"']),
    );
  });

  it.each([1.5, -0.1, 85])('re-asks for confidence %d outside [0, 1]', (c) => {
    const out = run(decision({ confidence: c }));
    expect(out).toMatchObject({ outcome: 'ask_human', reason_code: 'invalid_schema', retryable: true });
    expect(out.outcome !== 'ok' && out.errors[0]).toMatch(/^\$\.confidence must be [<>]= [01]$/);
  });

  it('re-asks for a non-finite confidence (1e999 does not read back as written: refused while parsing)', () => {
    const text = JSON.stringify(clean).replace('0.9', '1e999');
    expect(runGuardrail(text, registry)).toEqual({
      ...invalid(['the JSON in the answer cannot be parsed', '$.confidence: 1e999 is out of range']),
      reason_code: 'unparseable',
    });
    expect(run(decision({ confidence: 'NaN' }))).toEqual(invalid(['$.confidence must be number']));
  });

  it('re-asks for wrong types', () => {
    expect(run(decision({ payload: [1], reason: 7, requires_human: 'yes' }))).toEqual(
      invalid(['$.reason must be string', '$.payload must be object', '$.requires_human must be boolean']),
    );
  });

  it('re-asks for a dispatch without a target', () => {
    expect(run(decision({ target: null }))).toEqual(invalid(['$.target must be string']));
    expect(run(decision({ target: '' }))).toEqual(invalid(['$.target must NOT have fewer than 1 characters']));
  });

  it('rejects (after re-asks) a target that is not registered', () => {
    expect(run(decision({ target: 'rm' }))).toEqual({
      outcome: 'reject',
      reason_code: 'unknown_target',
      retryable: true,
      errors: ['$.target "rm" is not a registered module'],
      repairs: [],
    });
  });

  it('asks a human for an agent id with dispatch_module', () => {
    expect(run(decision({ target: 'planner' }))).toEqual({
      outcome: 'ask_human',
      decision: { ...clean, target: 'planner', requires_human: true },
      reason_code: 'kind_mismatch',
      retryable: false,
      errors: ['$.target "planner" is an agent: use dispatch_agent'],
      repairs: [],
    });
  });

  it('asks a human for a module id with dispatch_agent', () => {
    expect(run(decision({ decision: 'dispatch_agent' }))).toEqual({
      outcome: 'ask_human',
      decision: { ...clean, decision: 'dispatch_agent', requires_human: true },
      reason_code: 'kind_mismatch',
      retryable: false,
      errors: ['$.target "echo" is a module: use dispatch_module'],
      repairs: [],
    });
  });
});

describe('guardrail step 8: policy', () => {
  it('gives non-dispatch decisions a null target', () => {
    expect(run(decision({ decision: 'direct_reply' }))).toEqual({
      outcome: 'ok',
      decision: { ...clean, decision: 'direct_reply', target: null },
      repairs: [{ kind: 'policy_target_null', before: '"echo"' }],
    });
  });

  it('sends a dispatch below confidence 0.5 to a human', () => {
    expect(run(decision({ confidence: 0.3 }))).toEqual({
      outcome: 'ask_human',
      decision: { ...clean, confidence: 0.3, requires_human: true },
      reason_code: 'low_confidence',
      retryable: false,
      errors: ['$.confidence 0.3 is below 0.5'],
      repairs: [],
    });
  });

  it('honours min_confidence', () => {
    expect(run(decision({ confidence: 0.6 }), { min_confidence: 0.7 })).toMatchObject({
      reason_code: 'low_confidence',
    });
    expect(run(decision({ confidence: 0.5 }))).toMatchObject({ outcome: 'ok' });
  });

  it('always requires a human for ask_human', () => {
    expect(run(decision({ decision: 'ask_human', target: null, requires_human: false }))).toEqual({
      outcome: 'ask_human',
      decision: { ...clean, decision: 'ask_human', target: null, requires_human: true },
      reason_code: 'model_asked_human',
      retryable: false,
      errors: [],
      repairs: [{ kind: 'policy_requires_human', detail: 'ask_human' }],
    });
  });

  it("turns the model's reject into a reject outcome", () => {
    expect(run(decision({ decision: 'reject', target: null }))).toEqual({
      outcome: 'reject',
      decision: { ...clean, decision: 'reject', target: null },
      reason_code: 'model_rejected',
      retryable: false,
      errors: [],
      repairs: [],
    });
  });

  it.each(['fs', 'fs.write', 'FS.Write', 'shell.exec'])(
    'forces requires_human for the high-risk target %s (the model cannot lower it)',
    (target) => {
      const out = run(decision({ target, requires_human: false }));
      expect(out.outcome).toBe('ok');
      expect(out.decision!.requires_human).toBe(true);
      expect(out.repairs.at(-1)).toMatchObject({ kind: 'policy_requires_human' });
    },
  );

  it('does not extend a high-risk module id to its other tools', () => {
    expect(run(decision({ target: 'fs.read' }))).toEqual({
      outcome: 'ok',
      decision: { ...clean, target: 'fs.read' },
      repairs: [],
    });
  });

  it('keeps requires_human when the model raises it for a low-risk target', () => {
    expect(run(decision({ requires_human: true }))).toEqual({
      outcome: 'ok',
      decision: { ...clean, requires_human: true },
      repairs: [],
    });
  });
});

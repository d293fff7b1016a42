import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, cleanText, registry } from './registry.js';

describe('runGuardrail: clean answers', () => {
  it('passes a clean dispatch through unchanged, with no repairs', () => {
    expect(runGuardrail(cleanText, registry)).toEqual({ outcome: 'ok', decision: clean, repairs: [] });
  });

  it('passes a direct reply with target null', () => {
    const d = {
      decision: 'direct_reply',
      target: null,
      confidence: 1,
      reason: 'greeting',
      payload: {},
      requires_human: false,
    };
    expect(runGuardrail(JSON.stringify(d), registry)).toEqual({ outcome: 'ok', decision: d, repairs: [] });
  });

  it('passes a dispatch to an agent', () => {
    const d = { ...clean, decision: 'dispatch_agent', target: 'planner' };
    expect(runGuardrail(JSON.stringify(d), registry)).toEqual({ outcome: 'ok', decision: d, repairs: [] });
  });

  it('returns the decision keys in contract order', () => {
    const text =
      '{"requires_human":false,"payload":{},"reason":"r","confidence":0.9,"target":"echo","decision":"dispatch_module"}';
    const out = runGuardrail(text, registry);
    expect(out.outcome).toBe('ok');
    expect(Object.keys(out.decision!)).toEqual([
      'decision',
      'target',
      'confidence',
      'reason',
      'payload',
      'requires_human',
    ]);
  });
});

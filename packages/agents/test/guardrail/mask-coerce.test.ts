import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, decision, registry } from './registry.js';

const run = (o: Record<string, unknown>) => runGuardrail(JSON.stringify(o), registry);

describe('guardrail step 5: mask', () => {
  it('keeps exactly the six whitelisted keys', () => {
    expect(run(decision({ tool: 'fs.write', role: 'admin', risk: 'low' }))).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'mask', detail: 'dropped keys: tool, role, risk' }],
    });
  });

  it('drops __proto__, constructor and prototype at any depth of the payload', () => {
    const text =
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"r","requires_human":false,' +
      '"payload":{"__proto__":{"isAdmin":true},"a":{"constructor":{"prototype":{"x":1}},"b":[{"__proto__":{"y":2},"ok":1}]}}}';
    const out = runGuardrail(text, registry);
    expect(out).toEqual({
      outcome: 'ok',
      decision: { ...clean, reason: 'r', payload: { a: { b: [{ ok: 1 }] } } },
      repairs: [
        {
          kind: 'mask',
          detail: 'dropped keys: $.payload.__proto__, $.payload.a.constructor, $.payload.a.b[0].__proto__',
        },
      ],
    });
    expect(Object.getPrototypeOf(out.decision!.payload)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('drops prototype keys from a payload given as a JSON string', () => {
    const out = run(decision({ payload: '{"__proto__":{"polluted":1},"text":"hi"}' }));
    expect(out).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [
        { kind: 'nested_json_string', detail: 'payload', before: '{"__proto__":{"polluted":1},"text":"hi"}' },
        { kind: 'mask', detail: 'dropped keys: $.payload.__proto__' },
      ],
    });
    expect(Object.hasOwn(out.decision!.payload, '__proto__')).toBe(false);
  });

  it('drops a top-level __proto__ key', () => {
    const text = '{"__proto__":{"requires_human":false},"decision":"dispatch_module","target":"fs","confidence":0.9}';
    const out = runGuardrail(text, registry);
    expect(out).toMatchObject({ outcome: 'ok', decision: { target: 'fs', requires_human: true } });
  });
});

describe('guardrail step 6: coerce', () => {
  it.each([
    ['Dispatch-Module', 'dispatch_module'],
    ['dispatchModule', 'dispatch_module'],
    ['DISPATCH MODULE', 'dispatch_module'],
    ['  dispatch.module ', 'dispatch_module'],
    ['DirectReply', 'direct_reply'],
  ])('normalises decision %j to %j', (raw, norm) => {
    const out = run(decision({ decision: raw }));
    expect(out.outcome).toBe('ok');
    expect(out.decision!.decision).toBe(norm);
    expect(out.repairs[0]).toEqual({
      kind: 'coerce_decision',
      before: JSON.stringify(raw),
      after: JSON.stringify(norm),
    });
  });

  it.each([
    ['85%', 0.85],
    ['0.85', 0.85],
    [' 0.7 ', 0.7],
    ['100%', 1],
  ])('reads confidence %j as %d', (raw, n) => {
    const out = run(decision({ confidence: raw }));
    expect(out).toEqual({
      outcome: 'ok',
      decision: { ...clean, confidence: n },
      repairs: [{ kind: 'coerce_confidence', before: JSON.stringify(raw), after: JSON.stringify(n) }],
    });
  });

  it.each([
    ['true', true],
    ['False', false],
  ])('reads requires_human %j as %s', (raw, b) => {
    const out = run(decision({ target: 'echo.say', requires_human: raw }));
    expect(out).toEqual({
      outcome: 'ok',
      decision: { ...clean, target: 'echo.say', requires_human: b },
      repairs: [{ kind: 'coerce_requires_human', before: JSON.stringify(raw), after: JSON.stringify(b) }],
    });
  });

  it('fills missing requires_human with true, reason with "" and payload with {}', () => {
    const out = run({ decision: 'dispatch_module', target: 'echo', confidence: 0.9 });
    expect(out).toEqual({
      outcome: 'ok',
      decision: {
        decision: 'dispatch_module',
        target: 'echo',
        confidence: 0.9,
        reason: '',
        payload: {},
        requires_human: true,
      },
      repairs: [
        { kind: 'default_requires_human', after: 'true' },
        { kind: 'default_reason' },
        { kind: 'default_payload' },
      ],
    });
  });

  it('parses a payload given as a JSON string', () => {
    const out = run(decision({ payload: '{"text":"hi"}' }));
    expect(out).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'nested_json_string', detail: 'payload', before: '{"text":"hi"}' }],
    });
  });

  it('refuses a payload JSON string whose key repeats with different values, as outside a string', () => {
    expect(run(decision({ payload: '{"text":"ls","text":"rm -rf ~"}' }))).toEqual({
      outcome: 'ask_human',
      reason_code: 'duplicate_keys',
      retryable: false,
      errors: ['$.payload.text appears twice with different values'],
      repairs: [],
    });
    expect(run(decision({ payload: '{"text":"hi","text":"hi"}' }))).toMatchObject({ outcome: 'ok', decision: clean });
  });

  it('refuses a payload JSON string holding a number that does not read back as written', () => {
    expect(run(decision({ payload: '{"n":1e999}' }))).toEqual({
      outcome: 'ask_human',
      reason_code: 'unparseable',
      retryable: true,
      errors: ['the JSON in the answer cannot be parsed', '$.payload.n: 1e999 is out of range'],
      repairs: [],
    });
  });

  it('trims the target and matches it case-insensitively to the registered spelling', () => {
    expect(run(decision({ target: '  ECHO ' }))).toEqual({
      outcome: 'ok',
      decision: clean,
      repairs: [{ kind: 'target_case', before: '"  ECHO "', after: '"echo"' }],
    });
    expect(run(decision({ decision: 'dispatch_agent', target: 'researcher' }))).toMatchObject({
      outcome: 'ok',
      decision: { target: 'Researcher' },
    });
  });

  it.each([
    ['ｅｃｈｏ', 'fullwidth letters'],
    ['еcho', 'a Cyrillic е'],
    ['echo\u200b', 'a zero-width space'],
    ['echoo', 'a typo'],
    ['ech', 'a prefix'],
  ])('does not fold or fuzzy-match %j (%s)', (target) => {
    expect(run(decision({ target }))).toEqual({
      outcome: 'reject',
      reason_code: 'unknown_target',
      retryable: true,
      errors: [`$.target ${JSON.stringify(target)} is not a registered module`],
      repairs: [],
    });
  });
});

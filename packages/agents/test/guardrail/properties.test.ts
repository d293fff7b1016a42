import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { GuardrailOutcome, GuardrailRegistry } from '../../src/guardrail/guardrail-types.js';
import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { parseLlmDecision } from '../../src/guardrail/llm-decision.js';

const registry: GuardrailRegistry = {
  agents: ['planner'],
  modules: ['echo', 'echo.say', 'fs', 'fs.write', 'shell.exec'],
  high_risk: ['fs', 'fs.write', 'shell.exec'],
};
const registered = new Set([...registry.agents, ...registry.modules]);
const highRisk = (t: string) => ['fs', 'fs.write', 'shell.exec'].includes(t);

const KEYS = ['decision', 'target', 'confidence', 'reason', 'payload', 'requires_human'];

/** Valid decisions, most of them dispatches to high-risk targets with the flag lowered. */
const decisionArb = fc.record({
  decision: fc.constantFrom(
    'dispatch_module',
    'dispatch_module',
    'dispatch_agent',
    'direct_reply',
    'ask_human',
    'reject',
  ),
  target: fc.constantFrom('fs', 'fs.write', 'shell.exec', 'echo', 'planner', 'FS.Write', 'evil', 'fs.delete', 'shell'),
  confidence: fc.double({ min: 0, max: 1, noNaN: true }),
  reason: fc.string({ maxLength: 30 }),
  payload: fc.dictionary(
    fc.constantFrom('path', 'text', '__proto__', 'constructor', 'n'),
    fc.jsonValue({ maxDepth: 2 }),
    {
      maxKeys: 3,
    },
  ),
  requires_human: fc.boolean(),
});

const wrap = fc.constantFrom(
  (s: string) => s,
  (s: string) => `\`\`\`json\n${s}\n\`\`\``,
  (s: string) => `Here you go: ${s} Thanks!`,
  (s: string) => `[${s}]`,
  (s: string) => `{"arguments": ${JSON.stringify(s)}}`,
  (s: string) => `{"routing_decision": ${s}}`,
  (s: string) => `<think>${s}</think>${s}`,
  (s: string) => `<json>${s}</json>`,
  (s: string) => JSON.stringify(s),
);

type Mutation = (s: string) => string;
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  // delete a character
  fc.nat().map((i) => (s: string) => s.slice(0, i % (s.length + 1)) + s.slice((i % (s.length + 1)) + 1)),
  // insert a character
  fc
    .tuple(fc.nat(), fc.constantFrom('"', "'", ',', ':', '{', '}', '[', ']', ' ', '\\', 'x', '0', '.', '-', '%', 'e'))
    .map(
      ([i, c]) =>
        (s: string) =>
          s.slice(0, i % (s.length + 1)) + c + s.slice(i % (s.length + 1)),
    ),
  // truncate
  fc.nat().map((i) => (s: string) => s.slice(0, i % (s.length + 1))),
  // rename a key
  fc
    .tuple(
      fc.constantFrom(...KEYS),
      fc.constantFrom('Decision', 'target_id', 'requiresHuman', 'confidence_', 'x', 'decision'),
    )
    .map(
      ([k, to]) =>
        (s: string) =>
          s.replace(`"${k}"`, `"${to}"`),
    ),
  // change case of a region
  fc.tuple(fc.nat(), fc.nat({ max: 20 })).map(([i, n]) => (s: string) => {
    const a = i % (s.length + 1);
    return s.slice(0, a) + s.slice(a, a + n).toUpperCase() + s.slice(a + n);
  }),
  // swap two values
  fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...KEYS)).map(([a, b]) => (s: string) => {
    try {
      const o = JSON.parse(s) as Record<string, unknown>;
      [o[a], o[b]] = [o[b], o[a]];
      return JSON.stringify(o);
    } catch {
      return s;
    }
  }),
  // duplicate a key with another value
  fc.constantFrom(...KEYS).map((k) => (s: string) => s.replace(/\}\s*$/, `,"${k}":"dispatch_module"}`)),
);

/** The safety invariant: no ok dispatch to an unregistered target, none to a high-risk one without a human. */
function assertSafe(out: GuardrailOutcome): void {
  if (out.outcome !== 'ok') {
    if (out.outcome === 'ask_human' && out.decision) expect(out.decision.requires_human).toBe(true);
    return;
  }
  const d = out.decision;
  expect(Object.keys(d)).toEqual(KEYS);
  expect(Number.isFinite(d.confidence) && d.confidence >= 0 && d.confidence <= 1).toBe(true);
  expect(Object.hasOwn(d.payload, '__proto__') || Object.hasOwn(d.payload, 'constructor')).toBe(false);
  if (d.decision === 'dispatch_module' || d.decision === 'dispatch_agent') {
    expect(registered.has(d.target!)).toBe(true);
    if (highRisk(d.target!)) expect(d.requires_human).toBe(true);
    expect(d.confidence).toBeGreaterThanOrEqual(0.5);
  } else expect(d.target).toBeNull();
}

describe('guardrail properties (fast-check)', () => {
  it('no mutation of a valid decision yields an unsafe ok dispatch, and nothing throws', () => {
    fc.assert(
      fc.property(decisionArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), wrap, (d, muts, w) => {
        let text = JSON.stringify(d);
        for (const m of muts) text = m(text);
        assertSafe(runGuardrail(w(text), registry));
        assertSafe(runGuardrail(text, registry));
      }),
      { numRuns: 1000 },
    );
  });

  it('a clean decision cut at any point is never read as a different decision', () => {
    fc.assert(
      fc.property(decisionArb, fc.nat(), fc.boolean(), (d, at, pretty) => {
        const full = JSON.stringify(d, null, pretty ? 2 : undefined);
        const text = full.slice(0, at % full.length);
        const out = runGuardrail(text, registry);
        assertSafe(out);
        if (out.outcome === 'ok') {
          expect(out.decision.decision).toBe(d.decision);
          expect(out.decision.confidence).toBe(d.confidence);
          if (d.decision.startsWith('dispatch'))
            expect(out.decision.target!.toLowerCase()).toBe(d.target.toLowerCase());
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        assertSafe(runGuardrail(s, registry));
        expect(parseLlmDecision(s).outcome === 'ok' || parseLlmDecision(s).decision.human_required).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('a parse failure of an executor decision always requires a human and runs nothing', () => {
    const stepArb = fc.record({
      thought: fc.string({ maxLength: 10 }),
      tool_calls: fc.array(
        fc.record({
          tool: fc.constantFrom('fs.write', 'echo.say'),
          args: fc.object({ maxDepth: 1 }),
          intent: fc.string(),
        }),
        {
          maxLength: 2,
        },
      ),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
      human_required: fc.boolean(),
      done: fc.boolean(),
      summary: fc.string({ maxLength: 10 }),
    });
    fc.assert(
      fc.property(stepArb, mutationArb, (step, m) => {
        const out = parseLlmDecision(m(JSON.stringify(step)));
        if (out.outcome !== 'ok')
          expect(out.decision).toEqual({
            thought: '',
            tool_calls: [],
            confidence: 0,
            human_required: true,
            done: false,
            summary: '',
          });
      }),
      { numRuns: 500 },
    );
  });
});

import type { GuardrailOutcome, ModelAdapter, ModelRequestParams, ModelResult } from '../../src/index.js';
import type { GuardrailFn } from '../../src/router/router-engine.js';

/** A model that answers from a script, recording every request (the engine's own collaborator). */
export class ScriptedModel implements ModelAdapter {
  readonly provider = 'stub';
  readonly model = 'stub-1';
  readonly requests: ModelRequestParams[] = [];
  constructor(private readonly answers: string[]) {}
  complete(params: ModelRequestParams): Promise<ModelResult> {
    this.requests.push(structuredClone(params));
    const text = this.answers[Math.min(this.requests.length - 1, this.answers.length - 1)] ?? '';
    return Promise.resolve({ text, usage: { input_tokens: 10, output_tokens: 5 }, model: this.model, attempts: 1 });
  }
}

const KINDS = ['direct_reply', 'dispatch_agent', 'dispatch_module', 'ask_human', 'reject'];

/**
 * A minimal guardrail stand-in: strict JSON, enum and target checks, requires_human kept as given.
 * The real guardrail is exercised by the e2e tests and its own suite.
 */
export const stubGuardrail: GuardrailFn = (text, registry) => {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { outcome: 'ask_human', reason_code: 'unparseable', retryable: true, errors: ['not JSON'], repairs: [] };
  }
  const decision = String(o.decision);
  if (!KINDS.includes(decision)) {
    return {
      outcome: 'ask_human',
      reason_code: 'invalid_schema',
      retryable: true,
      errors: [`$.decision must be one of ${KINDS.join(', ')}`],
      repairs: [],
    };
  }
  const dispatch = decision.startsWith('dispatch');
  const target = dispatch ? String(o.target) : null;
  if (target !== null && ![...registry.modules, ...registry.agents].includes(target)) {
    return {
      outcome: 'reject',
      reason_code: 'unknown_target',
      retryable: true,
      errors: [`unknown ${target}`],
      repairs: [],
    };
  }
  const out: GuardrailOutcome = {
    outcome: 'ok',
    decision: {
      decision: decision as 'dispatch_module',
      target,
      confidence: Number(o.confidence ?? 0.9),
      reason: String(o.reason ?? ''),
      payload: (o.payload as Record<string, unknown>) ?? {},
      requires_human: o.requires_human === true,
    },
    repairs: o.repaired === true ? [{ kind: 'syntax', before: 'x', after: 'y' }] : [],
  };
  if (decision === 'ask_human') {
    return {
      outcome: 'ask_human',
      decision: { ...out.decision, requires_human: true },
      reason_code: 'model_asked_human',
      retryable: false,
      errors: [],
      repairs: [],
    };
  }
  return out;
};

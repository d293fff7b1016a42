/**
 * The RouterEngine: asks the model for a §3.6 decision, runs the JSON guardrail over every
 * answer, and re-asks with the guardrail's error list while the outcome is retryable — at most
 * `max_retries` times (transport retries stay inside the ModelAdapter and are not counted here).
 * Every attempt is kept (raw text, outcome, usage) for the audit log. No security judgement is
 * made here beyond the guardrail's: the final outcome is the last attempt's, so a model that never
 * answers validly ends in `ask_human` (an unregistered target: `reject`).
 *
 * The model's stop reason is read before its text (model-reply.ts `stopOf`): an answer cut off by
 * the token limit (`length`, `max_tokens`, …) is never parsed as a decision — it is `truncated`,
 * re-asked once for a shorter answer, and a second cut ends in `ask_human`; a refusal is
 * `model_refused` and a content-filter stop `content_filtered`, both `ask_human` without a re-ask.
 */
import type { GuardrailOutcome, GuardrailRegistry } from '../guardrail/guardrail-types.js';
import type { ModelAdapter, ModelMessage, ModelResult, ModelUsage } from '../model/model-adapter.js';
import { type ModelStop, stopMessage, stopOf } from '../model/model-reply.js';
import {
  ROUTER_SYSTEM_PROMPT,
  type RouterPromptInput,
  routerReaskMessage,
  routerUserMessage,
} from './router-prompt.js';

/** The guardrail as the engine calls it (`runGuardrail` of the guardrail folder). */
export type GuardrailFn = (
  text: string,
  registry: GuardrailRegistry,
  options: { min_confidence?: number },
) => GuardrailOutcome;

/** One model answer and what the guardrail made of it. */
export interface RouteAttempt {
  /** 1 for the first ask, 2 for the first re-ask, … */
  n: number;
  /** The model's raw answer. */
  raw: string;
  outcome: GuardrailOutcome;
  usage: ModelUsage;
  /** The stop reason the endpoint reported (`stop`, `length`, `end_turn`, …), when it reported one. */
  finish_reason?: string;
}

/** The outcome of routing one input. */
export interface RouteResult {
  /** The last attempt's outcome. */
  outcome: GuardrailOutcome;
  attempts: RouteAttempt[];
  provider: string;
  model: string;
}

/** Options of {@link RouterEngine}. */
export interface RouterEngineOptions {
  model: ModelAdapter;
  guardrail: GuardrailFn;
  /** Re-asks after a retryable outcome (config `router.max_retries`, default 2). */
  max_retries?: number;
  /** Dispatches below this confidence go to a person (config `router.min_confidence`, default 0.5). */
  min_confidence?: number;
  /** Reply length asked of the model (default 1024 tokens). */
  max_tokens?: number;
}

/** What one routing needs: the prompt input and the registry the guardrail holds targets against. */
export interface RouteRequest extends RouterPromptInput {
  registry: GuardrailRegistry;
}

/** Longest earlier answer repeated to the model in a re-ask. */
const ECHO_MAX = 4000;

/** Added to the re-ask after a cut answer (not to the outcome's errors, which a person reads). */
const SHORTER =
  'answer with a shorter object: only the JSON, a one-sentence "reason", only the needed "payload" fields';

/** What the engine makes of an answer that did not end `complete`: never a decision. */
function stoppedOutcome(stop: Exclude<ModelStop, 'complete'>, res: ModelResult, reask: boolean): GuardrailOutcome {
  const why = stopMessage(res);
  if (stop === 'truncated')
    return {
      outcome: 'ask_human',
      reason_code: 'truncated',
      retryable: reask,
      errors: [`${why}; it was not read as a decision`],
      repairs: [],
    };
  return {
    outcome: 'ask_human',
    reason_code: stop === 'refused' ? 'model_refused' : 'content_filtered',
    retryable: false,
    errors: [why],
    repairs: [],
  };
}

/** See the file comment. */
export class RouterEngine {
  readonly #o: RouterEngineOptions;
  readonly #maxRetries: number;

  constructor(options: RouterEngineOptions) {
    this.#o = options;
    this.#maxRetries = Math.max(0, Math.floor(options.max_retries ?? 2));
  }

  /** The adapter's provider and model names. */
  get model(): { provider: string; model: string } {
    return { provider: this.#o.model.provider, model: this.#o.model.model };
  }

  /**
   * Routes one input. Rejects only with the adapter's errors (E_LLM_UNAVAILABLE, E_TIMEOUT,
   * E_HALTED); every answer, however broken, ends in an outcome.
   */
  async route(req: RouteRequest, signal?: AbortSignal): Promise<RouteResult> {
    const messages: ModelMessage[] = [
      { role: 'system', content: ROUTER_SYSTEM_PROMPT },
      { role: 'user', content: routerUserMessage(req) },
    ];
    const attempts: RouteAttempt[] = [];
    const options = this.#o.min_confidence !== undefined ? { min_confidence: this.#o.min_confidence } : {};
    let cuts = 0;
    for (let n = 1; ; n++) {
      const res = await this.#o.model.complete(
        { messages: [...messages], temperature: 0, max_tokens: this.#o.max_tokens ?? 1024 },
        signal ? { signal } : {},
      );
      const stop = stopOf(res);
      // a cut answer is re-asked once (a second cut would most likely be cut again)
      if (stop === 'truncated') cuts++;
      const outcome =
        stop === 'complete'
          ? this.#o.guardrail(res.text, req.registry, options)
          : stoppedOutcome(stop, res, cuts === 1);
      attempts.push({
        n,
        raw: res.text,
        outcome,
        usage: res.usage,
        ...(res.finish_reason !== undefined ? { finish_reason: res.finish_reason } : {}),
      });
      if (outcome.outcome === 'ok' || !outcome.retryable || n > this.#maxRetries) {
        return { outcome, attempts, ...this.model };
      }
      const echoed = res.text.length > ECHO_MAX ? `${res.text.slice(0, ECHO_MAX)}…` : res.text;
      messages.push(
        { role: 'assistant', content: echoed },
        {
          role: 'user',
          content: routerReaskMessage(stop === 'truncated' ? [...outcome.errors, SHORTER] : outcome.errors),
        },
      );
    }
  }
}

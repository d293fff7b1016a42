import type { ModelUsage } from './model-adapter.js';

/** Running totals of one adapter (or one daemon): calls, failures and tokens. */
export interface UsageTotals {
  calls: number;
  failures: number;
  input_tokens: number;
  output_tokens: number;
  /** Per model name: calls and tokens. */
  by_model: Record<string, { calls: number; input_tokens: number; output_tokens: number }>;
}

/**
 * Counts token usage of model calls, for metrics and budget reports. Adapters given a meter
 * record every successful call (its reported usage) and every failed one.
 */
export class UsageMeter {
  #totals: UsageTotals = { calls: 0, failures: 0, input_tokens: 0, output_tokens: 0, by_model: {} };

  /** Records one successful call. */
  record(model: string, usage: ModelUsage): void {
    const t = this.#totals;
    t.calls++;
    t.input_tokens += usage.input_tokens;
    t.output_tokens += usage.output_tokens;
    const m = (t.by_model[model] ??= { calls: 0, input_tokens: 0, output_tokens: 0 });
    m.calls++;
    m.input_tokens += usage.input_tokens;
    m.output_tokens += usage.output_tokens;
  }

  /** Records one call that failed (no usage known). */
  recordFailure(): void {
    this.#totals.failures++;
  }

  /** A copy of the totals so far. */
  snapshot(): UsageTotals {
    return structuredClone(this.#totals);
  }
}

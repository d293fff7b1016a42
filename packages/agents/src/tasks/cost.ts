// Estimated cost of model calls, from config `llm.prices` (per million tokens). Pure.

/** Prices per million tokens (config `llm.prices`); absent prices count as 0. */
export interface ModelPrices {
  input_per_mtok?: number;
  output_per_mtok?: number;
}

/** Tokens and estimated cost, per step or summed per task. */
export interface CostTally {
  input_tokens: number;
  output_tokens: number;
  /** Estimated cost in the currency of the configured prices; 0 without prices. */
  cost: number;
}

/** Zero usage. */
export function emptyTally(): CostTally {
  return { input_tokens: 0, output_tokens: 0, cost: 0 };
}

/**
 * The estimated cost of one call. Negative or non-finite token counts or prices count as 0,
 * so a misbehaving endpoint never produces a negative or NaN cost.
 */
export function callCost(usage: { input_tokens: number; output_tokens: number }, prices: ModelPrices = {}): CostTally {
  const n = (v: number | undefined): number => (v !== undefined && Number.isFinite(v) && v > 0 ? v : 0);
  const input_tokens = n(usage.input_tokens);
  const output_tokens = n(usage.output_tokens);
  const cost = (input_tokens * n(prices.input_per_mtok) + output_tokens * n(prices.output_per_mtok)) / 1_000_000;
  return { input_tokens, output_tokens, cost };
}

/** `a + b`, field by field. */
export function addTally(a: CostTally, b: CostTally): CostTally {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cost: a.cost + b.cost,
  };
}

/** `1234 in / 56 out tokens, ~$0.0042` (cost omitted when 0). */
export function formatTally(t: CostTally): string {
  const tokens = `${t.input_tokens} in / ${t.output_tokens} out tokens`;
  return t.cost > 0 ? `${tokens}, ~$${t.cost.toFixed(4)}` : tokens;
}

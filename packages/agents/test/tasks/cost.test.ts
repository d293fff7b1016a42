import { describe, expect, it } from 'vitest';

import { addTally, callCost, emptyTally, formatTally } from '../../src/tasks/cost.js';

describe('cost', () => {
  it('prices per million tokens', () => {
    expect(
      callCost({ input_tokens: 2_000_000, output_tokens: 500_000 }, { input_per_mtok: 3, output_per_mtok: 15 }),
    ).toEqual({ input_tokens: 2_000_000, output_tokens: 500_000, cost: 13.5 });
  });

  it('no prices → zero cost, tokens still counted', () => {
    expect(callCost({ input_tokens: 10, output_tokens: 5 })).toEqual({ input_tokens: 10, output_tokens: 5, cost: 0 });
  });

  it('negative or non-finite values count as 0', () => {
    expect(
      callCost({ input_tokens: -5, output_tokens: Number.NaN }, { input_per_mtok: -1, output_per_mtok: 2 }),
    ).toEqual(emptyTally());
  });

  it('sums and formats', () => {
    const t = addTally(
      callCost({ input_tokens: 1000, output_tokens: 100 }, { input_per_mtok: 1, output_per_mtok: 2 }),
      {
        input_tokens: 1,
        output_tokens: 1,
        cost: 0,
      },
    );
    expect(t).toEqual({ input_tokens: 1001, output_tokens: 101, cost: 0.0012 });
    expect(formatTally(t)).toBe('1001 in / 101 out tokens, ~$0.0012');
    expect(formatTally(emptyTally())).toBe('0 in / 0 out tokens');
  });
});

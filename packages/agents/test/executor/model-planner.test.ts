import { describe, expect, it } from 'vitest';

import { ModelPlanner, parsePlanReply } from '../../src/executor/model-planner.js';
import type { ModelAdapter, ModelRequestParams } from '../../src/model/model-adapter.js';

describe('ModelPlanner', () => {
  it('parses a JSON array of strings out of prose, capped and trimmed', () => {
    expect(parsePlanReply('Plan:\n["read the file", " patch it ", 3, ""]\nthanks')).toEqual([
      'read the file',
      'patch it',
    ]);
    expect(parsePlanReply(JSON.stringify(Array.from({ length: 12 }, (_, i) => `s${i}`)))).toHaveLength(8);
  });

  it('anything but an array means no plan', () => {
    expect(parsePlanReply('no idea')).toEqual([]);
    expect(parsePlanReply('[broken')).toEqual([]);
    expect(parsePlanReply('{"a": [1]}')).toEqual([]);
  });

  it('asks the model it is given and prices the call', async () => {
    const seen: ModelRequestParams[] = [];
    const model: ModelAdapter = {
      provider: 'offline',
      model: 'secondary',
      complete: (p) => {
        seen.push(p);
        return Promise.resolve({
          text: '["a","b"]',
          usage: { input_tokens: 1000, output_tokens: 10 },
          model: 'm',
          attempts: 1,
        });
      },
    };
    const r = await new ModelPlanner({ prices: { input_per_mtok: 2 } }).plan(
      'do x',
      model,
      new AbortController().signal,
    );
    expect(r).toEqual({ subtasks: ['a', 'b'], usage: { input_tokens: 1000, output_tokens: 10, cost: 0.002 } });
    expect(seen[0]!.messages[1]).toEqual({ role: 'user', content: 'do x' });
  });
});

import { describe, expect, it } from 'vitest';

import { startFakeLlmServer } from '@finger/testkit';

import { createModelAdapter, type ModelConfig } from '../../src/model/resolve.js';
import { UsageMeter } from '../../src/model/usage-meter.js';

const base: ModelConfig = { provider: 'offline', max_retries: 2, max_retry_wait_ms: 60_000, timeout_ms: 120_000 };
const messages = [{ role: 'user' as const, content: 'echo hello' }];

describe('createModelAdapter', () => {
  it('offline (the default) routes with the catalog it is given', async () => {
    const adapter = createModelAdapter(base, {
      catalog: () => ({ tools: [{ id: 'echo.echo', module: 'echo', description: 'Returns its arguments.' }] }),
    });
    expect(adapter.provider).toBe('offline');
    const result = await adapter.complete({ messages });
    expect(JSON.parse(result.text)).toMatchObject({ decision: 'dispatch_module', target: 'echo' });
  });

  it('openai from config: base_url, key and model reach the endpoint; usage reaches the meter', async () => {
    await using server = await startFakeLlmServer({
      script: [{ text: 'hi', usage: { input_tokens: 3, output_tokens: 1 } }],
    });
    const meter = new UsageMeter();
    const adapter = createModelAdapter(
      { ...base, provider: 'openai', base_url: server.openaiBaseUrl, api_key: 'sk-cfg', model: 'gpt-cfg' },
      { meter },
    );
    expect([adapter.provider, adapter.model]).toEqual(['openai', 'gpt-cfg']);
    expect(await adapter.complete({ messages })).toMatchObject({ text: 'hi', model: 'gpt-cfg' });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-cfg');
    expect(meter.snapshot()).toMatchObject({ calls: 1, input_tokens: 3, output_tokens: 1 });
  });

  it('anthropic from config, with secondary_model when asked for', async () => {
    await using server = await startFakeLlmServer({ script: [{ text: 'ok' }] });
    const adapter = createModelAdapter(
      { ...base, provider: 'anthropic', base_url: server.url, model: 'main', secondary_model: 'small' },
      { secondary: true },
    );
    expect([adapter.provider, adapter.model]).toEqual(['anthropic', 'small']);
    await adapter.complete({ messages });
    expect(server.requests[0]!.body.model).toBe('small');
  });

  it('a provider without a model → E_INVALID_ARGS naming llm.model', () => {
    expect(() => createModelAdapter({ ...base, provider: 'openai' })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS', details: { key: 'llm.model' } }),
    );
  });

  it('anthropic at its public endpoint without a key → E_INVALID_ARGS naming llm.api_key', () => {
    expect(() => createModelAdapter({ ...base, provider: 'anthropic', model: 'claude' })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS', details: { key: 'llm.api_key' } }),
    );
  });

  it('an unknown provider → E_INVALID_ARGS', () => {
    expect(() => createModelAdapter({ ...base, provider: 'gemini' as 'openai', model: 'x' })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGS', details: { key: 'llm.provider' } }),
    );
  });
});

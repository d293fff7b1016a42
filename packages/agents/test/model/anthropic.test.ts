import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { AnthropicAdapter, toAnthropicMessages } from '../../src/model/anthropic.js';
import { UsageMeter } from '../../src/model/usage-meter.js';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;

function adapter(s: FakeLlmServer, extra: Partial<ConstructorParameters<typeof AnthropicAdapter>[0]> = {}) {
  return new AnthropicAdapter({ base_url: s.url, api_key: 'ak-test', model: 'claude-test', sleep: noSleep, ...extra });
}

const messages = [
  { role: 'system' as const, content: 'You route.' },
  { role: 'system' as const, content: 'Answer in JSON.' },
  { role: 'user' as const, content: 'say hi to echo' },
];

describe('toAnthropicMessages', () => {
  it('hoists every system message into one system string and keeps the rest in order', () => {
    expect(
      toAnthropicMessages([...messages, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }]),
    ).toEqual({
      system: 'You route.\n\nAnswer in JSON.',
      messages: [
        { role: 'user', content: 'say hi to echo' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'more' },
      ],
    });
    expect(toAnthropicMessages([{ role: 'user', content: 'x' }])).toEqual({
      messages: [{ role: 'user', content: 'x' }],
    });
  });
});

describe('AnthropicAdapter', () => {
  it('plain reply: text, usage, stop reason; headers and body as the API wants them', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'hi there', usage: { input_tokens: 21, output_tokens: 4 } }],
    });
    const meter = new UsageMeter();
    const result = await adapter(server, { meter }).complete({ messages, temperature: 0.2 });
    expect(result).toEqual({
      text: 'hi there',
      usage: { input_tokens: 21, output_tokens: 4 },
      model: 'claude-test',
      finish_reason: 'end_turn',
      attempts: 1,
    });
    const req = server.requests[0]!;
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe('ak-test');
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toEqual({
      model: 'claude-test',
      system: 'You route.\n\nAnswer in JSON.',
      messages: [{ role: 'user', content: 'say hi to echo' }],
      max_tokens: 1024,
      temperature: 0.2,
    });
    expect(meter.snapshot()).toEqual({
      calls: 1,
      failures: 0,
      input_tokens: 21,
      output_tokens: 4,
      by_model: { 'claude-test': { calls: 1, input_tokens: 21, output_tokens: 4 } },
    });
  });

  it('streamed reply: deltas in order, input tokens from message_start, output from message_delta', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'alpha beta', chunks: ['alpha', ' beta'], usage: { input_tokens: 30, output_tokens: 7 } }],
    });
    const deltas: string[] = [];
    const result = await adapter(server).complete(
      { messages, stream: true, max_tokens: 64 },
      { onText: (d) => deltas.push(d) },
    );
    expect(deltas).toEqual(['alpha', ' beta']);
    expect(result).toEqual({
      text: 'alpha beta',
      usage: { input_tokens: 30, output_tokens: 7 },
      model: 'claude-test',
      finish_reason: 'end_turn',
      attempts: 1,
    });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, max_tokens: 64 });
  });

  it('an error event before any text is retried; the next stream succeeds', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: 'never', chunks: [], error_event: { type: 'overloaded_error', message: 'Overloaded' } },
        { text: 'second try' },
      ],
    });
    const result = await adapter(server).complete({ messages, stream: true });
    expect(result).toMatchObject({ text: 'second try', attempts: 2 });
  });

  it('an error event after text fails with E_LLM_UNAVAILABLE (partial) and no retry', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'half', chunks: ['ha', 'lf'], error_event: { message: 'Overloaded' } }, { text: 'unused' }],
    });
    await expect(adapter(server).complete({ messages, stream: true }, { onText: () => {} })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { partial: true },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a stream without message_stop (connection cut) is retried', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'a b', reset_after_chunks: 0 }, { text: 'ok' }],
    });
    expect(await adapter(server).complete({ messages, stream: true })).toMatchObject({ text: 'ok', attempts: 2 });
  });

  it('429 with retry-after then success: usage of the successful reply', async () => {
    server = await startFakeLlmServer({
      script: [
        { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
        { text: 'ok', usage: { input_tokens: 5, output_tokens: 1 } },
      ],
    });
    const waits: number[] = [];
    const result = await adapter(server, {
      sleep: async (ms) => {
        waits.push(ms);
      },
    }).complete({ messages, stream: true });
    expect(waits).toEqual([2000]);
    expect(result).toMatchObject({ text: 'ok', attempts: 2, usage: { input_tokens: 5, output_tokens: 1 } });
  });
});

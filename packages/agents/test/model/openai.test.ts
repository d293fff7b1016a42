import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { OpenAiAdapter } from '../../src/model/openai.js';
import { UsageMeter } from '../../src/model/usage-meter.js';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;

function adapter(s: FakeLlmServer, extra: Partial<ConstructorParameters<typeof OpenAiAdapter>[0]> = {}) {
  return new OpenAiAdapter({
    base_url: s.openaiBaseUrl,
    api_key: 'sk-test',
    model: 'gpt-test',
    sleep: noSleep,
    ...extra,
  });
}

const messages = [
  { role: 'system' as const, content: 'You route.' },
  { role: 'user' as const, content: 'say hi to echo' },
];

describe('OpenAiAdapter', () => {
  it('plain reply: text, usage, model, finish reason; sends the key and the body', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'hello there', usage: { input_tokens: 12, output_tokens: 3 } }],
    });
    const meter = new UsageMeter();
    const result = await adapter(server, { meter }).complete({ messages, max_tokens: 50, temperature: 0 });
    expect(result).toEqual({
      text: 'hello there',
      usage: { input_tokens: 12, output_tokens: 3 },
      model: 'gpt-test',
      finish_reason: 'stop',
      attempts: 1,
    });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-test');
    expect(req.body).toEqual({ model: 'gpt-test', messages, max_tokens: 50, temperature: 0 });
    expect(meter.snapshot()).toMatchObject({ calls: 1, failures: 0, input_tokens: 12, output_tokens: 3 });
  });

  it('streamed reply: deltas in order, usage from the final chunk via stream_options.include_usage', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: 'one two three', chunks: ['one ', 'two ', 'three'], usage: { input_tokens: 9, output_tokens: 4 } },
      ],
    });
    const deltas: string[] = [];
    const result = await adapter(server).complete({ messages, stream: true }, { onText: (d) => deltas.push(d) });
    expect(deltas).toEqual(['one ', 'two ', 'three']);
    expect(result).toEqual({
      text: 'one two three',
      usage: { input_tokens: 9, output_tokens: 4 },
      model: 'gpt-test',
      finish_reason: 'stop',
      attempts: 1,
    });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('a server rejecting stream_options is asked again without it, and not sent it again', async () => {
    server = await startFakeLlmServer({
      rejectStreamOptions: true,
      script: [
        { text: 'ok', usage: { input_tokens: 1, output_tokens: 1 } },
        { text: 'ok again', usage: { input_tokens: 1, output_tokens: 2 } },
      ],
    });
    const a = adapter(server);
    const first = await a.complete({ messages, stream: true });
    expect(first.text).toBe('ok');
    // no usage without include_usage: reported as 0
    expect(first.usage).toEqual({ input_tokens: 0, output_tokens: 0 });
    expect(server.requests.map((r) => r.body.stream_options)).toEqual([{ include_usage: true }, undefined]);
    const second = await a.complete({ messages, stream: true });
    expect(second.text).toBe('ok again');
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.body.stream_options).toBeUndefined();
  });

  it('a 422 naming stream_options (FastAPI-style servers) is treated the same way', async () => {
    server = await startFakeLlmServer({
      script: [
        { kind: 'status', status: 422, message: 'stream_options: extra inputs are not permitted' },
        { text: 'ok' },
      ],
    });
    const result = await adapter(server).complete({ messages, stream: true });
    expect(result).toMatchObject({ text: 'ok', attempts: 1 });
    expect(server.requests.map((r) => r.body.stream_options)).toEqual([{ include_usage: true }, undefined]);
  });

  it('500s then success: retried, attempts counted', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 500 }, { kind: 'status', status: 503 }, { text: 'finally' }],
    });
    const result = await adapter(server).complete({ messages });
    expect(result.text).toBe('finally');
    expect(result.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it('a 400 other than stream_options is not retried: E_LLM_UNAVAILABLE with the status', async () => {
    server = await startFakeLlmServer({ script: [{ kind: 'status', status: 400, message: 'bad model' }] });
    await expect(adapter(server).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { status: 400, attempts: 1 },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('broken JSON body then a good reply: retried as a transport failure', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'raw', body: '{"choices": [ {"message": ' }, { text: 'fine' }],
    });
    const result = await adapter(server).complete({ messages });
    expect(result).toMatchObject({ text: 'fine', attempts: 2 });
  });

  it('a stream cut before any text is retried; cut after text fails without a retry', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: 'a b c', reset_after_chunks: 0 },
        { text: 'a b c', chunks: ['a ', 'b ', 'c'] },
        { text: 'x y z', chunks: ['x ', 'y ', 'z'], reset_after_chunks: 2 },
      ],
    });
    const a = adapter(server);
    expect((await a.complete({ messages, stream: true })).text).toBe('a b c');
    const seen: string[] = [];
    await expect(a.complete({ messages, stream: true }, { onText: (d) => seen.push(d) })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { partial: true },
    });
    expect(seen).toEqual(['x ', 'y ']);
    expect(server.requests).toHaveLength(3);
  });
});

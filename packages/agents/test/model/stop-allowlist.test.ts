import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmReply, type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { AnthropicAdapter } from '../../src/model/anthropic.js';
import { stopMessage, stopOf, STREAM_WITHOUT_STOP } from '../../src/model/model-reply.js';
import { OpenAiAdapter } from '../../src/model/openai.js';

// Only a stop reason known to mean "finished" lets a reply's text be read: every other reason
// (another provider's token limit, an error, a case variant) and a stream that ended without a
// reason are not complete. Real adapters against the fake model server on loopback.

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;
const messages = [{ role: 'user' as const, content: 'say hi to echo' }];
const D = JSON.stringify({
  decision: 'dispatch_module',
  target: 'echo',
  confidence: 0.9,
  reason: 'r',
  payload: { text: 'hi' },
  requires_human: false,
});

const openai = (s: FakeLlmServer) =>
  new OpenAiAdapter({ base_url: s.openaiBaseUrl, api_key: 'k', model: 'gpt-test', sleep: noSleep, max_retries: 0 });
const anthropic = (s: FakeLlmServer) =>
  new AnthropicAdapter({ base_url: s.url, api_key: 'k', model: 'claude-test', sleep: noSleep, max_retries: 0 });
const sse = (events: string[]): FakeLlmReply => ({
  kind: 'raw',
  headers: { 'content-type': 'text/event-stream' },
  body: events.join(''),
});
const json = (body: unknown): FakeLlmReply => ({ kind: 'raw', body: JSON.stringify(body) });
const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const ev = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

describe('stop reasons outside the finished list are not complete', () => {
  it.each([
    ['model_length', 'the answer was cut off at the token limit (stop reason "model_length")'],
    ['LENGTH', 'the answer was cut off at the token limit (stop reason "LENGTH")'],
    ['Max_Tokens', 'the answer was cut off at the token limit (stop reason "Max_Tokens")'],
    ['error', 'the model did not finish its answer (stop reason "error")'],
    [
      'insufficient_system_resource',
      'the model did not finish its answer (stop reason "insufficient_system_resource")',
    ],
    ['recitation', 'the model did not finish its answer (stop reason "recitation")'],
  ])('OpenAI %s (plain and streamed): truncated, never read as an answer', async (reason, message) => {
    server = await startFakeLlmServer({
      script: [
        { text: D, finish_reason: reason },
        { text: D, finish_reason: reason },
      ],
    });
    const a = openai(server);
    for (const stream of [false, true]) {
      const r = await a.complete({ messages, stream });
      expect(r).toMatchObject({ text: D, finish_reason: reason });
      expect(stopOf(r)).toBe('truncated');
      expect(stopMessage(r)).toBe(message);
    }
  });

  it.each(['error', 'MAX_TOKENS', 'model_context_window_exceeded'])(
    'Anthropic %s (plain and streamed): truncated',
    async (reason) => {
      server = await startFakeLlmServer({
        script: [
          { text: D, finish_reason: reason },
          { text: D, finish_reason: reason },
        ],
      });
      const a = anthropic(server);
      for (const stream of [false, true]) {
        const r = await a.complete({ messages, stream });
        expect(r.finish_reason).toBe(reason);
        expect(stopOf(r)).toBe('truncated');
      }
    },
  );

  it('case variants of refusal and content_filter keep their meaning', () => {
    expect(stopOf({ finish_reason: 'REFUSAL' })).toBe('refused');
    expect(stopOf({ finish_reason: 'Content_Filter' })).toBe('filtered');
  });
});

describe('finished stop reasons are complete, in any case', () => {
  it.each(['stop', 'STOP', 'tool_calls', 'function_call', 'eos', 'eos_token', 'complete'])(
    'OpenAI %s (plain and streamed): complete',
    async (reason) => {
      server = await startFakeLlmServer({
        script: [
          { text: D, finish_reason: reason },
          { text: D, finish_reason: reason },
        ],
      });
      const a = openai(server);
      for (const stream of [false, true]) expect(stopOf(await a.complete({ messages, stream }))).toBe('complete');
    },
  );

  it.each(['end_turn', 'End_Turn', 'tool_use', 'stop_sequence'])(
    'Anthropic %s (plain and streamed): complete',
    async (reason) => {
      server = await startFakeLlmServer({
        script: [
          { text: D, finish_reason: reason },
          { text: D, finish_reason: reason },
        ],
      });
      const a = anthropic(server);
      for (const stream of [false, true]) expect(stopOf(await a.complete({ messages, stream }))).toBe('complete');
    },
  );
});

describe('a reply without a stop reason', () => {
  it('a plain OpenAI reply without finish_reason (servers that omit it) is complete', async () => {
    server = await startFakeLlmServer({
      script: [
        json({ id: 'c', model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: D } }] }),
      ],
    });
    const r = await openai(server).complete({ messages });
    expect(r.finish_reason).toBeUndefined();
    expect(stopOf(r)).toBe('complete');
  });

  it('an OpenAI stream that ends with [DONE] and no finish_reason is truncated', async () => {
    const delta = (d: Record<string, unknown>) =>
      chunk({ id: 'c', model: 'gpt-test', choices: [{ index: 0, delta: d, finish_reason: null }] });
    server = await startFakeLlmServer({
      script: [sse([delta({ role: 'assistant', content: '' }), delta({ content: D }), 'data: [DONE]\n\n'])],
    });
    const r = await openai(server).complete({ messages, stream: true });
    expect(r).toMatchObject({ text: D, finish_reason: STREAM_WITHOUT_STOP });
    expect(stopOf(r)).toBe('truncated');
    expect(stopMessage(r)).toBe('the answer is incomplete (the stream ended without a stop reason)');
  });

  it('an Anthropic stream that reaches message_stop without a stop_reason is truncated', async () => {
    server = await startFakeLlmServer({
      script: [
        sse([
          ev('message_start', {
            message: { id: 'm', model: 'claude-test', usage: { input_tokens: 1, output_tokens: 1 } },
          }),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: D } }),
          ev('content_block_stop', { index: 0 }),
          ev('message_delta', { delta: { stop_reason: null }, usage: { output_tokens: 9 } }),
          ev('message_stop', {}),
        ]),
      ],
    });
    const r = await anthropic(server).complete({ messages, stream: true });
    expect(r).toMatchObject({ text: D, finish_reason: STREAM_WITHOUT_STOP });
    expect(stopOf(r)).toBe('truncated');
  });
});

import { afterEach, describe, expect, it } from 'vitest';

import { type FakeLlmReply, type FakeLlmServer, startFakeLlmServer } from '@finger/testkit';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { AnthropicAdapter } from '../../src/model/anthropic.js';
import { providerMessage, renderToolCall, stopMessage, stopOf } from '../../src/model/model-reply.js';
import { OpenAiAdapter } from '../../src/model/openai.js';

// Structured replies (tool calls, refusals, content parts), stop reasons and provider error
// messages, as real OpenAI- and Anthropic-shaped bodies served over loopback HTTP.

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noSleep = async (): Promise<void> => undefined;
const messages = [{ role: 'user' as const, content: 'say hi to echo' }];
const REGISTRY = { agents: ['planner'], modules: ['echo', 'echo.say'], high_risk: [] };
const DECISION = {
  decision: 'dispatch_module',
  target: 'echo',
  confidence: 0.9,
  reason: 'r',
  payload: { text: 'hi' },
  requires_human: false,
};
const D = JSON.stringify(DECISION);
const CUT =
  '{"decision":"dispatch_module","target":"echo","confidence":0.9,"requires_human":false,"reason":"the user wants to';

const openai = (s: FakeLlmServer, max_retries = 2) =>
  new OpenAiAdapter({ base_url: s.openaiBaseUrl, api_key: 'k', model: 'gpt-test', sleep: noSleep, max_retries });
const anthropic = (s: FakeLlmServer, max_retries = 2) =>
  new AnthropicAdapter({ base_url: s.url, api_key: 'k', model: 'claude-test', sleep: noSleep, max_retries });

const json = (body: unknown, status = 200): FakeLlmReply => ({ kind: 'raw', status, body: JSON.stringify(body) });
const sse = (events: string[]): FakeLlmReply => ({
  kind: 'raw',
  headers: { 'content-type': 'text/event-stream' },
  body: events.join(''),
});
const completion = (message: Record<string, unknown>, finish = 'stop') =>
  json({
    id: 'c',
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 7 },
  });
const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  chunk({ id: 'c', model: 'gpt-test', choices: [{ index: 0, delta: d, finish_reason: finish }] });
const message = (content: unknown[], stop = 'end_turn') =>
  json({
    id: 'm',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: stop,
    usage: { input_tokens: 10, output_tokens: 20 },
  });
const ev = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const anthropicStream = (blocks: string[], stop: string) =>
  sse([
    ev('message_start', { message: { id: 'm', model: 'claude-test', usage: { input_tokens: 11, output_tokens: 1 } } }),
    ...blocks,
    ev('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: 30 } }),
    ev('message_stop', {}),
  ]);

describe('stop reasons reach the caller', () => {
  it('OpenAI finish_reason length (plain and streamed): the text is kept, stopOf says truncated', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: CUT, finish_reason: 'length' },
        { text: CUT, finish_reason: 'length' },
      ],
    });
    const a = openai(server);
    for (const stream of [false, true]) {
      const r = await a.complete({ messages, stream });
      expect(r).toMatchObject({ text: CUT, finish_reason: 'length' });
      expect(stopOf(r)).toBe('truncated');
      expect(stopMessage(r)).toBe('the answer was cut off at the token limit (stop reason "length")');
    }
  });

  it('Anthropic stop_reason max_tokens (plain and streamed) is truncated; refusal is refused', async () => {
    server = await startFakeLlmServer({
      script: [
        { text: CUT, finish_reason: 'max_tokens' },
        { text: CUT, finish_reason: 'max_tokens' },
        { text: D, finish_reason: 'refusal' },
      ],
    });
    const a = anthropic(server);
    expect(stopOf(await a.complete({ messages }))).toBe('truncated');
    expect(stopOf(await a.complete({ messages, stream: true }))).toBe('truncated');
    const refused = await a.complete({ messages });
    expect(stopOf(refused)).toBe('refused');
    expect(stopMessage(refused)).toBe('the model refused to answer (stop reason "refusal")');
  });

  it('content_filter is filtered, whatever the text holds', async () => {
    server = await startFakeLlmServer({ script: [{ text: D, finish_reason: 'content_filter' }] });
    const r = await openai(server).complete({ messages });
    expect(stopOf(r)).toBe('filtered');
    expect(stopMessage(r)).toBe('the provider\'s content filter withheld the answer (stop reason "content_filter")');
  });
});

describe('OpenAI structured replies', () => {
  it('tool_calls with valid arguments become {"name","arguments"} text the router guardrail reads', async () => {
    server = await startFakeLlmServer({
      script: [
        completion(
          { content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'route', arguments: D } }] },
          'tool_calls',
        ),
      ],
    });
    const r = await openai(server).complete({ messages });
    expect(r).toEqual({
      text: `{"name":"route","arguments":${D}}`,
      tool_calls: [{ name: 'route', arguments: D }],
      usage: { input_tokens: 5, output_tokens: 7 },
      model: 'gpt-test',
      finish_reason: 'tool_calls',
      attempts: 1,
    });
    expect(stopOf(r)).toBe('complete');
    expect(runGuardrail(r.text, REGISTRY)).toMatchObject({ outcome: 'ok', decision: { payload: { text: 'hi' } } });
  });

  it('tool_calls with invalid (cut) arguments pass them on as sent: truncated, never no_json', async () => {
    const broken = '{"decision":"dispatch_module", "target": "echo", ';
    server = await startFakeLlmServer({
      script: [
        completion(
          {
            content: null,
            tool_calls: [{ id: 't', type: 'function', function: { name: 'route', arguments: broken } }],
          },
          'tool_calls',
        ),
      ],
    });
    const r = await openai(server).complete({ messages });
    expect(r.text).toBe(broken);
    expect(runGuardrail(r.text, REGISTRY)).toMatchObject({ outcome: 'ask_human', reason_code: 'truncated' });
    expect(server.requests).toHaveLength(1);
  });

  it('streamed tool_call deltas are joined by index; onText ends with the rendered call', async () => {
    server = await startFakeLlmServer({
      script: [
        sse([
          delta({ tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'route', arguments: '' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: D.slice(0, 20) } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: D.slice(20) } }] }),
          delta({}, 'tool_calls'),
          'data: [DONE]\n\n',
        ]),
      ],
    });
    const seen: string[] = [];
    const r = await openai(server).complete({ messages, stream: true }, { onText: (d) => seen.push(d) });
    expect(r).toMatchObject({ text: `{"name":"route","arguments":${D}}`, finish_reason: 'tool_calls' });
    expect(seen.join('')).toBe(r.text);
    expect(runGuardrail(r.text, REGISTRY)).toMatchObject({ outcome: 'ok' });
  });

  it('message.refusal (plain) and delta.refusal (streamed) are refusals, not empty text', async () => {
    server = await startFakeLlmServer({
      script: [
        completion({ content: null, refusal: "I'm sorry, I can't help with that." }),
        sse([delta({ refusal: "I can't" }), delta({ refusal: ' do that.' }), delta({}, 'stop'), 'data: [DONE]\n\n']),
      ],
    });
    const a = openai(server);
    const plain = await a.complete({ messages });
    expect(plain).toMatchObject({ text: '', refusal: "I'm sorry, I can't help with that.", finish_reason: 'stop' });
    expect(stopOf(plain)).toBe('refused');
    expect(stopMessage(plain)).toBe("the model refused to answer: I'm sorry, I can't help with that.");
    const streamed = await a.complete({ messages, stream: true });
    expect(streamed).toMatchObject({ text: '', refusal: "I can't do that." });
    expect(stopOf(streamed)).toBe('refused');
    expect(server.requests).toHaveLength(2);
  });

  it('content as a list of parts is joined (a refusal part is a refusal), not a failure', async () => {
    server = await startFakeLlmServer({
      script: [
        completion({
          content: [
            { type: 'text', text: D.slice(0, 10) },
            { type: 'text', text: D.slice(10) },
          ],
        }),
        completion({ content: [{ type: 'refusal', refusal: 'no.' }] }),
      ],
    });
    const a = openai(server);
    const r = await a.complete({ messages });
    expect(r).toMatchObject({ text: D, attempts: 1 });
    expect(runGuardrail(r.text, REGISTRY)).toMatchObject({ outcome: 'ok' });
    expect(await a.complete({ messages })).toMatchObject({ text: '', refusal: 'no.' });
  });

  it('HTTP 200 with an error object reports the server message, never "unreachable"', async () => {
    server = await startFakeLlmServer({
      script: [
        json({ error: { message: 'model overloaded', type: 'server_error' } }),
        json({ error: { message: 'model overloaded', type: 'server_error' } }),
      ],
    });
    const err = await openai(server, 1)
      .complete({ messages })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint answered with an error after 2 attempt(s): model overloaded',
      details: { attempts: 2, error: 'model overloaded' },
    });
  });

  it('a completion without choices says so, never "unreachable"', async () => {
    server = await startFakeLlmServer({ script: [json({ choices: [] })] });
    await expect(openai(server, 0).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint answered with an error after 1 attempt(s): the chat completion has no choices',
    });
  });

  it('an SSE `event: error` without an `error` key keeps its message (before text: retried; after: partial)', async () => {
    const errorEvent = 'event: error\ndata: {"message":"upstream overloaded","code":503}\n\n';
    server = await startFakeLlmServer({
      script: [sse([errorEvent]), sse([errorEvent]), sse([delta({ content: '{"decision"' }), errorEvent])],
    });
    const a = openai(server, 1);
    await expect(a.complete({ messages, stream: true })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint answered with an error after 2 attempt(s): stream error: upstream overloaded',
    });
    await expect(a.complete({ messages, stream: true }, { onText: () => undefined })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint sent an error after text was sent: stream error: upstream overloaded',
      details: { partial: true },
    });
    expect(server.requests).toHaveLength(3);
  });

  it('an HTTP 400 names the provider text, bounded and without control characters', async () => {
    const long = `max context \u001b[31mexceeded\u0007\r\n\u202eevil ${'x'.repeat(1000)}`;
    server = await startFakeLlmServer({ script: [json({ error: { message: long } }, 400)] });
    const err = (await openai(server)
      .complete({ messages })
      .catch((e: unknown) => e)) as { code: string; message: string; details: { status: number } };
    expect(err).toMatchObject({ code: 'E_LLM_UNAVAILABLE', details: { status: 400, attempts: 1 } });
    expect(
      err.message.startsWith('model endpoint answered HTTP 400 after 1 attempt(s): max context [31mexceeded evil xxx'),
    ).toBe(true);
    // eslint-disable-next-line no-control-regex
    expect(err.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(err.message.length).toBeLessThan(400);
    expect(err.message.endsWith('…')).toBe(true);
  });
});

describe('Anthropic structured replies', () => {
  it('a tool_use block is rendered as {"name","arguments"}; text before it is kept', async () => {
    server = await startFakeLlmServer({
      script: [
        message([{ type: 'tool_use', id: 'tu', name: 'route', input: DECISION }], 'tool_use'),
        message(
          [
            { type: 'thinking', thinking: 'maybe {"decision":"reject"}', signature: 's' },
            { type: 'text', text: "I'll route this to echo." },
            { type: 'tool_use', id: 'tu', name: 'route', input: DECISION },
          ],
          'tool_use',
        ),
      ],
    });
    const a = anthropic(server);
    const only = await a.complete({ messages });
    expect(only).toMatchObject({
      text: `{"name":"route","arguments":${D}}`,
      tool_calls: [{ name: 'route', arguments: D }],
      finish_reason: 'tool_use',
    });
    expect(runGuardrail(only.text, REGISTRY)).toMatchObject({ outcome: 'ok', decision: { payload: { text: 'hi' } } });
    const mixed = await a.complete({ messages });
    expect(mixed.text).toBe(`I'll route this to echo.\n{"name":"route","arguments":${D}}`);
    expect(runGuardrail(mixed.text, REGISTRY)).toMatchObject({ outcome: 'ok' });
  });

  it('streamed input_json_delta pieces are joined into the tool call', async () => {
    server = await startFakeLlmServer({
      script: [
        anthropicStream(
          [
            ev('content_block_start', {
              index: 0,
              content_block: { type: 'tool_use', id: 'tu', name: 'route', input: {} },
            }),
            ...[D.slice(0, 7), D.slice(7, 40), D.slice(40)].map((p) =>
              ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: p } }),
            ),
            ev('content_block_stop', { index: 0 }),
          ],
          'tool_use',
        ),
      ],
    });
    const seen: string[] = [];
    const r = await anthropic(server).complete({ messages, stream: true }, { onText: (d) => seen.push(d) });
    expect(r).toMatchObject({ text: `{"name":"route","arguments":${D}}`, finish_reason: 'tool_use' });
    expect(seen.join('')).toBe(r.text);
    expect(runGuardrail(r.text, REGISTRY)).toMatchObject({ outcome: 'ok' });
  });

  it('an error event whose data has only a top-level message keeps that message', async () => {
    server = await startFakeLlmServer({
      script: [
        sse([
          ev('message_start', { message: { id: 'm', model: 'claude-test', usage: { input_tokens: 1 } } }),
          'event: error\ndata: {"message":"Overloaded right now"}\n\n',
        ]),
      ],
    });
    await expect(anthropic(server, 0).complete({ messages, stream: true })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint answered with an error after 1 attempt(s): stream error Overloaded right now',
    });
  });

  it('an error body with HTTP 200 reports its message', async () => {
    server = await startFakeLlmServer({
      script: [json({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })],
    });
    await expect(anthropic(server, 0).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      message: 'model endpoint answered with an error after 1 attempt(s): Overloaded',
    });
  });
});

describe('renderToolCall and providerMessage (pure)', () => {
  it('splices valid arguments as sent (a repeated key stays visible), {} for none, the rest as sent', () => {
    const dup = '{"decision":"reject","decision":"dispatch_module"}';
    expect(renderToolCall({ name: 'route', arguments: dup })).toBe(`{"name":"route","arguments":${dup}}`);
    expect(renderToolCall({ name: 'a"b', arguments: '  ' })).toBe('{"name":"a\\"b","arguments":{}}');
    expect(renderToolCall({ name: 'route', arguments: '{"decision":"dispatch_module", ' })).toBe(
      '{"decision":"dispatch_module", ',
    );
    // encoded twice: the inner text, so a cut inner object is still seen as cut
    expect(renderToolCall({ name: 'route', arguments: JSON.stringify('{"decision":"disp') })).toBe('{"decision":"disp');
  });

  it('takes the provider message from the usual places, bounded and cleaned', () => {
    expect(providerMessage('{"error":{"message":"bad model"}}')).toBe('bad model');
    expect(providerMessage({ error: 'quota' })).toBe('quota');
    expect(providerMessage('{"detail":"stream_options: extra inputs"}')).toBe('stream_options: extra inputs');
    expect(providerMessage('<html>\n  Bad\tGateway\u0000</html>')).toBe('<html> Bad Gateway </html>');
    expect(providerMessage('')).toBeUndefined();
    expect(providerMessage('x'.repeat(500), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

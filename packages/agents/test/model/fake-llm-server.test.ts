import { describe, expect, it } from 'vitest';

import { type FakeLlmReply, startFakeLlmServer, waitUntil } from '@finger/testkit';

import { AnthropicAdapter } from '../../src/model/anthropic.js';
import { OpenAiAdapter } from '../../src/model/openai.js';

const messages = [{ role: 'user' as const, content: 'ping' }];
const noSleep = async (): Promise<void> => undefined;

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.status, json: await res.json() };
}

describe('startFakeLlmServer', () => {
  it('a matcher function answers per request; push() then scripts later replies', async () => {
    await using server = await startFakeLlmServer({
      script: (req) => ({ text: `you said ${req.body.messages.at(-1).content}` }),
    });
    const a = new OpenAiAdapter({ base_url: server.openaiBaseUrl, model: 'm' });
    expect((await a.complete({ messages })).text).toBe('you said ping');
    server.push({ text: 'scripted' });
    expect((await a.complete({ messages })).text).toBe('scripted');
  });

  it('an exhausted script answers 418 (not retried); unknown routes 404', async () => {
    await using server = await startFakeLlmServer({ script: [] });
    const r = await post(`${server.openaiBaseUrl}/chat/completions`, { model: 'm', messages });
    expect(r.status).toBe(418);
    expect(r.json.error.message).toBe('fake-llm: script exhausted at request 0');
    expect((await post(`${server.url}/v1/embeddings`, {})).status).toBe(404);
    await expect(
      new AnthropicAdapter({ base_url: server.url, model: 'm', sleep: noSleep }).complete({ messages }),
    ).rejects.toMatchObject({ code: 'E_LLM_UNAVAILABLE', details: { status: 418, attempts: 1 } });
  });

  it('records every request with api, path, headers, parsed body and order', async () => {
    const replies: FakeLlmReply[] = [{ text: 'a' }, { text: 'b' }];
    await using server = await startFakeLlmServer({ script: replies });
    await new OpenAiAdapter({ base_url: server.openaiBaseUrl, model: 'm1' }).complete({ messages });
    await new AnthropicAdapter({ base_url: server.url, model: 'm2', api_key: 'k' }).complete({ messages });
    expect(server.requests.map((r) => [r.index, r.api, r.path, r.body.model])).toEqual([
      [0, 'openai', '/v1/chat/completions', 'm1'],
      [1, 'anthropic', '/v1/messages', 'm2'],
    ]);
    expect(server.requests[1]!.headers['x-api-key']).toBe('k');
    // the caller's array is not consumed
    expect(replies).toHaveLength(2);
  });

  it('close() ends hanging replies and is idempotent', async () => {
    const server = await startFakeLlmServer({ script: [{ kind: 'hang' }] });
    const call = new OpenAiAdapter({ base_url: server.openaiBaseUrl, model: 'm', max_retries: 0 }).complete({
      messages,
    });
    await waitUntil('the fake LLM server to receive the request', () => server.requests.length > 0, 10_000, 5);
    await Promise.all([server.close(), server.close()]);
    await expect(call).rejects.toMatchObject({ code: 'E_LLM_UNAVAILABLE' });
  });
});

describe('redirects', () => {
  it('are never followed, so the key never travels: E_LLM_UNAVAILABLE with the 3xx status', async () => {
    await using elsewhere = await startFakeLlmServer({ script: [{ text: 'stolen' }] });
    await using server = await startFakeLlmServer({
      script: [{ kind: 'raw', status: 307, headers: { location: `${elsewhere.url}/v1/messages` }, body: '' }],
    });
    await expect(
      new AnthropicAdapter({ base_url: server.url, model: 'm', api_key: 'secret', sleep: noSleep }).complete({
        messages,
      }),
    ).rejects.toMatchObject({ code: 'E_LLM_UNAVAILABLE', details: { status: 307, attempts: 1 } });
    expect(elsewhere.requests).toHaveLength(0);
  });
});

import { type AttemptContext, type AttemptResult, BaseHttpModelAdapter } from './http-model-adapter.js';
import type { ModelRequestParams, ModelUsage } from './model-adapter.js';
import { joinUrl, postJson, readJson } from './model-http.js';
import { HttpStatusError, TransportError } from './retry.js';
import { readSse } from './sse.js';

interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

interface ChatChoice {
  message?: { content?: unknown };
  delta?: { content?: unknown };
  finish_reason?: unknown;
}

/** The fields read from a completion or a stream chunk (anything else is ignored). */
interface ChatReply {
  model?: unknown;
  choices?: ChatChoice[];
  usage?: OpenAiUsage | null;
  error?: { message?: unknown };
}

function usageOf(u: OpenAiUsage | undefined | null): ModelUsage {
  return { input_tokens: u?.prompt_tokens ?? 0, output_tokens: u?.completion_tokens ?? 0 };
}

/** True when a 400 (or 422) names `stream_options`: the server does not know the option. */
function rejectsStreamOptions(err: unknown): boolean {
  return (
    err instanceof HttpStatusError && (err.status === 400 || err.status === 422) && /stream_options/i.test(err.body)
  );
}

/**
 * An OpenAI-compatible chat-completions adapter (OpenAI, vLLM, Ollama, llama.cpp server, …):
 * POST `{base_url}/chat/completions` with `Authorization: Bearer <api_key>` when a key is set.
 * Streaming asks for `stream_options: {include_usage: true}` (usage in the final chunk); a
 * server that rejects the option with a 400 naming it is asked once more without it, and the
 * adapter stops sending it (streamed usage is then 0 unless the server reports it anyway).
 * Errors: E_LLM_UNAVAILABLE, E_TIMEOUT, E_HALTED (see {@link BaseHttpModelAdapter}).
 */
export class OpenAiAdapter extends BaseHttpModelAdapter {
  readonly provider = 'openai';
  #streamOptions = true;

  protected async attempt(params: ModelRequestParams, ctx: AttemptContext): Promise<AttemptResult> {
    const stream = params.stream === true;
    if (stream && this.#streamOptions) {
      try {
        return await this.#exchange(params, ctx, true);
      } catch (err) {
        if (!rejectsStreamOptions(err)) throw err;
        this.#streamOptions = false;
      }
    }
    return this.#exchange(params, ctx, false);
  }

  async #exchange(params: ModelRequestParams, ctx: AttemptContext, withStreamOptions: boolean): Promise<AttemptResult> {
    const model = params.model ?? this.model;
    const body: Record<string, unknown> = { model, messages: params.messages };
    if (params.max_tokens !== undefined) body.max_tokens = params.max_tokens;
    if (params.temperature !== undefined) body.temperature = params.temperature;
    if (params.stream) {
      body.stream = true;
      if (withStreamOptions) body.stream_options = { include_usage: true };
    }
    const headers: Record<string, string> = { accept: params.stream ? 'text/event-stream' : 'application/json' };
    if (this.opts.api_key) headers.authorization = `Bearer ${this.opts.api_key}`;
    const res = await postJson(
      this.fetchFn,
      joinUrl(this.opts.base_url, 'chat/completions'),
      headers,
      body,
      ctx.signal,
    );
    const streamed = params.stream && (res.headers.get('content-type') ?? '').includes('text/event-stream');
    return streamed ? this.#readStream(res, ctx, model) : this.#readPlain(res, ctx, model);
  }

  async #readPlain(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    const json = (await readJson(res, ctx.signal)) as ChatReply | null;
    const choice = json?.choices?.[0];
    const content: unknown = choice?.message?.content;
    if (choice === undefined || (content !== null && content !== undefined && typeof content !== 'string')) {
      throw new TransportError('chat completion without choices[0].message.content');
    }
    const text = typeof content === 'string' ? content : '';
    ctx.onText?.(text);
    return {
      text,
      usage: usageOf(json?.usage),
      model: typeof json?.model === 'string' ? json.model : model,
      ...(typeof choice.finish_reason === 'string' ? { finish_reason: choice.finish_reason } : {}),
    };
  }

  async #readStream(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    let text = '';
    let usage: ModelUsage = { input_tokens: 0, output_tokens: 0 };
    let finish: string | undefined;
    let answeredBy = model;
    let done = false;
    await readSse(res, ctx.signal, (e) => {
      if (e.data === '[DONE]') {
        done = true;
        return 'stop';
      }
      let chunk: ChatReply | null;
      try {
        chunk = JSON.parse(e.data) as ChatReply | null;
      } catch {
        throw new TransportError(`unreadable stream chunk: ${e.data.slice(0, 120)}`);
      }
      if (chunk?.error) throw new TransportError(`stream error: ${String(chunk.error.message ?? 'unknown')}`);
      if (typeof chunk?.model === 'string') answeredBy = chunk.model;
      if (chunk?.usage) usage = usageOf(chunk.usage);
      const choice = chunk?.choices?.[0];
      const delta: unknown = choice?.delta?.content;
      if (typeof delta === 'string' && delta !== '') {
        text += delta;
        ctx.onText?.(delta);
      }
      if (typeof choice?.finish_reason === 'string') finish = choice.finish_reason;
      return undefined;
    });
    if (!done && finish === undefined) throw new TransportError('stream ended before the completion finished');
    return { text, usage, model: answeredBy, ...(finish !== undefined ? { finish_reason: finish } : {}) };
  }
}

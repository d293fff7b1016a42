import { type AttemptContext, type AttemptResult, BaseHttpModelAdapter } from './http-model-adapter.js';
import type { ModelRequestParams, ModelUsage } from './model-adapter.js';
import { joinUrl, postJson, readJson } from './model-http.js';
import { TransportError } from './retry.js';
import { readSse } from './sse.js';

/** The `anthropic-version` header sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
}

/** The fields read from a message or a stream event (anything else is ignored). */
interface AnthropicReply {
  type?: string;
  model?: unknown;
  content?: { type?: string; text?: unknown }[];
  stop_reason?: unknown;
  usage?: AnthropicUsage;
  message?: { model?: unknown; usage?: AnthropicUsage };
  delta?: { type?: string; text?: unknown; stop_reason?: unknown };
  error?: { type?: unknown; message?: unknown };
}

/**
 * Splits a conversation into Anthropic's shape: every `system` message hoisted into one
 * `system` string (joined by a blank line), the rest kept in order.
 */
export function toAnthropicMessages(messages: ModelRequestParams['messages']): {
  system?: string;
  messages: { role: 'user' | 'assistant'; content: string }[];
} {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const rest = messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content }));
  return system.length > 0 ? { system: system.join('\n\n'), messages: rest } : { messages: rest };
}

/**
 * The Anthropic messages adapter: POST `{base_url}/v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`; system messages hoisted to `system`; `max_tokens` defaults to
 * `default_max_tokens` (1024). Streaming reads `message_start` (input tokens),
 * `content_block_delta` (text), `message_delta` (cumulative output tokens, stop reason) and
 * `message_stop`; an `error` event before any text is retried like a transport failure.
 * Errors: E_LLM_UNAVAILABLE, E_TIMEOUT, E_HALTED (see {@link BaseHttpModelAdapter}).
 */
export class AnthropicAdapter extends BaseHttpModelAdapter {
  readonly provider = 'anthropic';

  protected async attempt(params: ModelRequestParams, ctx: AttemptContext): Promise<AttemptResult> {
    const model = params.model ?? this.model;
    const body: Record<string, unknown> = {
      model,
      ...toAnthropicMessages(params.messages),
      max_tokens: params.max_tokens ?? this.opts.default_max_tokens ?? 1024,
    };
    if (params.temperature !== undefined) body.temperature = params.temperature;
    if (params.stream) body.stream = true;
    const headers: Record<string, string> = {
      'anthropic-version': ANTHROPIC_VERSION,
      accept: params.stream ? 'text/event-stream' : 'application/json',
    };
    if (this.opts.api_key) headers['x-api-key'] = this.opts.api_key;
    const res = await postJson(this.fetchFn, joinUrl(this.opts.base_url, 'v1/messages'), headers, body, ctx.signal);
    const streamed = params.stream && (res.headers.get('content-type') ?? '').includes('text/event-stream');
    return streamed ? this.#readStream(res, ctx, model) : this.#readPlain(res, ctx, model);
  }

  async #readPlain(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    const json = (await readJson(res, ctx.signal)) as AnthropicReply | null;
    if (!json || !Array.isArray(json.content)) throw new TransportError('message reply without content');
    const text = json.content
      .filter((b) => b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text as string)
      .join('');
    ctx.onText?.(text);
    return {
      text,
      usage: { input_tokens: json.usage?.input_tokens ?? 0, output_tokens: json.usage?.output_tokens ?? 0 },
      model: typeof json.model === 'string' ? json.model : model,
      ...(typeof json.stop_reason === 'string' ? { finish_reason: json.stop_reason } : {}),
    };
  }

  async #readStream(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    let text = '';
    const usage: ModelUsage = { input_tokens: 0, output_tokens: 0 };
    let finish: string | undefined;
    let answeredBy = model;
    let stopped = false;
    await readSse(res, ctx.signal, (e) => {
      if (e.event === 'ping') return undefined;
      let data: AnthropicReply | null;
      try {
        data = JSON.parse(e.data) as AnthropicReply | null;
      } catch {
        throw new TransportError(`unreadable stream event: ${e.data.slice(0, 120)}`);
      }
      switch (e.event ?? data?.type) {
        case 'message_start':
          if (typeof data?.message?.model === 'string') answeredBy = data.message.model;
          usage.input_tokens = data?.message?.usage?.input_tokens ?? 0;
          usage.output_tokens = data?.message?.usage?.output_tokens ?? usage.output_tokens;
          break;
        case 'content_block_delta':
          if (data?.delta?.type === 'text_delta' && typeof data.delta.text === 'string' && data.delta.text !== '') {
            text += data.delta.text;
            ctx.onText?.(data.delta.text);
          }
          break;
        case 'message_delta':
          // output_tokens here is cumulative: replace, never add
          if (typeof data?.usage?.output_tokens === 'number') usage.output_tokens = data.usage.output_tokens;
          if (typeof data?.usage?.input_tokens === 'number') usage.input_tokens = data.usage.input_tokens;
          if (typeof data?.delta?.stop_reason === 'string') finish = data.delta.stop_reason;
          break;
        case 'message_stop':
          stopped = true;
          return 'stop';
        case 'error':
          throw new TransportError(
            `stream error ${String(data?.error?.type ?? '')}: ${String(data?.error?.message ?? 'unknown')}`,
          );
        default:
          break;
      }
      return undefined;
    });
    if (!stopped) throw new TransportError('stream ended before message_stop');
    return { text, usage, model: answeredBy, ...(finish !== undefined ? { finish_reason: finish } : {}) };
  }
}

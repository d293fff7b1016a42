import { type AttemptContext, type AttemptResult, BaseHttpModelAdapter } from './http-model-adapter.js';
import type { ModelRequestParams, ModelToolCall, ModelUsage } from './model-adapter.js';
import { joinUrl, postJson, readJson } from './model-http.js';
import { providerMessage, replyText, safeText, STREAM_WITHOUT_STOP } from './model-reply.js';
import { ProviderReplyError, TransportError } from './retry.js';
import { readSse } from './sse.js';

/** The `anthropic-version` header sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
}

/** A content block: `text`, `tool_use` (name, input), or others (thinking, …) that are ignored. */
interface AnthropicBlock {
  type?: unknown;
  text?: unknown;
  name?: unknown;
  input?: unknown;
}

/** The fields read from a message or a stream event (anything else is ignored). */
interface AnthropicReply {
  type?: string;
  model?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  usage?: AnthropicUsage;
  message?: { model?: unknown; usage?: AnthropicUsage };
  index?: unknown;
  content_block?: AnthropicBlock;
  delta?: { type?: string; text?: unknown; partial_json?: unknown; stop_reason?: unknown };
  error?: { type?: unknown; message?: unknown };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A `tool_use` block's input as JSON text (`{}` when absent). */
function inputText(input: unknown): string {
  return input === undefined || input === null ? '{}' : JSON.stringify(input);
}

/** What a stream's `error` event says, made safe to show (the `error` object's type and message). */
function streamErrorText(data: AnthropicReply | null, raw: string): string {
  const type = isObject(data?.error) && typeof data.error.type === 'string' ? `${safeText(data.error.type, 60)}: ` : '';
  return `stream error ${type}${providerMessage(data ?? raw) ?? 'no message'}`;
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
 * `message_stop`; an `error` event before any text is retried like a transport failure, and
 * reported with its message. `tool_use` blocks (plain, or streamed as `input_json_delta`) are
 * rendered into the text as `{"name": …, "arguments": …}` (see `renderToolCall`); thinking blocks
 * are not text.
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
    const body = await readJson(res, ctx.signal);
    if (!isObject(body)) throw new ProviderReplyError('the message reply is not a JSON object');
    const json = body as AnthropicReply;
    if (!Array.isArray(json.content)) {
      if (json.type === 'error' || (json.error !== undefined && json.error !== null))
        throw new ProviderReplyError(providerMessage(json) ?? 'an error without a message');
      throw new ProviderReplyError('the message reply has no content');
    }
    let parts = '';
    const calls: ModelToolCall[] = [];
    for (const b of json.content as unknown[]) {
      if (!isObject(b)) continue;
      if (b.type === 'text' && typeof b.text === 'string') parts += b.text;
      else if (b.type === 'tool_use')
        calls.push({ name: typeof b.name === 'string' ? b.name : '', arguments: inputText(b.input) });
    }
    const text = replyText(parts, calls);
    ctx.onText?.(text);
    return {
      text,
      usage: { input_tokens: json.usage?.input_tokens ?? 0, output_tokens: json.usage?.output_tokens ?? 0 },
      model: typeof json.model === 'string' ? json.model : model,
      ...(typeof json.stop_reason === 'string' ? { finish_reason: json.stop_reason } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
  }

  async #readStream(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    let text = '';
    // tool_use blocks by index: the name from content_block_start, input_json_delta pieces appended
    const tools = new Map<number, ModelToolCall & { started: string }>();
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
        if (e.event === 'error') throw new ProviderReplyError(streamErrorText(null, e.data));
        throw new TransportError(`unreadable stream event: ${safeText(e.data, 120)}`);
      }
      const index = typeof data?.index === 'number' ? data.index : 0;
      switch (e.event ?? data?.type) {
        case 'message_start':
          if (typeof data?.message?.model === 'string') answeredBy = data.message.model;
          usage.input_tokens = data?.message?.usage?.input_tokens ?? 0;
          usage.output_tokens = data?.message?.usage?.output_tokens ?? usage.output_tokens;
          break;
        case 'content_block_start':
          if (data?.content_block?.type === 'tool_use') {
            const b = data.content_block;
            // the start carries `input: {}`; a non-empty one stands unless deltas follow
            const started = isObject(b.input) && Object.keys(b.input).length > 0 ? inputText(b.input) : '';
            tools.set(index, { name: typeof b.name === 'string' ? b.name : '', arguments: '', started });
          }
          break;
        case 'content_block_delta':
          if (data?.delta?.type === 'text_delta' && typeof data.delta.text === 'string' && data.delta.text !== '') {
            text += data.delta.text;
            ctx.onText?.(data.delta.text);
          } else if (data?.delta?.type === 'input_json_delta' && typeof data.delta.partial_json === 'string') {
            const t = tools.get(index) ?? { name: '', arguments: '', started: '' };
            t.arguments += data.delta.partial_json;
            tools.set(index, t);
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
          throw new ProviderReplyError(streamErrorText(data, e.data));
        default:
          break;
      }
      return undefined;
    });
    if (!stopped) throw new TransportError('stream ended before message_stop');
    // message_stop without any stop_reason: the answer's end is unknown, never read as complete
    finish ??= STREAM_WITHOUT_STOP;
    const calls = [...tools.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, t]) => ({ name: t.name, arguments: t.arguments !== '' ? t.arguments : t.started || '{}' }));
    if (calls.length > 0) {
      // the tool calls, rendered, are the end of the text (and of what onText was given)
      const sep = text !== '' ? '\n' : '';
      const tail = sep + replyText('', calls);
      text += tail;
      ctx.onText?.(tail);
    }
    return {
      text,
      usage,
      model: answeredBy,
      ...(finish !== undefined ? { finish_reason: finish } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
  }
}

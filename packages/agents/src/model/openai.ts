import { type AttemptContext, type AttemptResult, BaseHttpModelAdapter } from './http-model-adapter.js';
import type { ModelRequestParams, ModelToolCall, ModelUsage } from './model-adapter.js';
import { joinUrl, postJson, readJson } from './model-http.js';
import { providerMessage, replyText, safeText, STREAM_WITHOUT_STOP } from './model-reply.js';
import { HttpStatusError, ProviderReplyError, TransportError } from './retry.js';
import { readSse } from './sse.js';

interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** A message (plain) or a delta (stream): text, refusal, tool calls. */
interface ChatMessage {
  content?: unknown;
  refusal?: unknown;
  tool_calls?: unknown;
  function_call?: unknown;
}

interface ChatChoice {
  message?: ChatMessage;
  delta?: ChatMessage;
  finish_reason?: unknown;
}

/** The fields read from a completion or a stream chunk (anything else is ignored). */
interface ChatReply {
  model?: unknown;
  choices?: unknown;
  usage?: OpenAiUsage | null;
  error?: unknown;
}

function usageOf(u: OpenAiUsage | undefined | null): ModelUsage {
  return { input_tokens: u?.prompt_tokens ?? 0, output_tokens: u?.completion_tokens ?? 0 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when a 400 (or 422) names `stream_options`: the server does not know the option. */
function rejectsStreamOptions(err: unknown): boolean {
  return (
    err instanceof HttpStatusError && (err.status === 400 || err.status === 422) && /stream_options/i.test(err.body)
  );
}

/**
 * `content` as text: a string, null, or a list of parts (`{type: "text"|"output_text", text}`
 * joined in order; `{type: "refusal", refusal}` collected apart; other parts ignored). Anything
 * else is a reply the adapter cannot read.
 */
function contentOf(content: unknown, where: string): { text: string; refusal: string } {
  if (content === null || content === undefined) return { text: '', refusal: '' };
  if (typeof content === 'string') return { text: content, refusal: '' };
  if (!Array.isArray(content)) throw new ProviderReplyError(`${where}.content is neither text nor a list of parts`);
  let text = '';
  let refusal = '';
  for (const part of content as unknown[]) {
    if (typeof part === 'string') text += part;
    else if (isObject(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === 'output_text'))
      text += part.text;
    else if (isObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') refusal += part.refusal;
  }
  return { text, refusal };
}

/** Text of a tool call's arguments: a string as is, an object (some servers) as JSON. */
function argumentsText(v: unknown): string {
  if (typeof v === 'string') return v;
  return v === undefined || v === null ? '' : JSON.stringify(v);
}

/** The tool calls of a whole message: `tool_calls[].function` and the legacy `function_call`. */
function toolCallsOf(message: ChatMessage): ModelToolCall[] {
  const out: ModelToolCall[] = [];
  const raw = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  const legacy = isObject(message.function_call) ? [{ function: message.function_call }] : [];
  for (const c of [...raw, ...legacy]) {
    const f = isObject(c) && isObject(c.function) ? c.function : undefined;
    if (f === undefined) continue;
    out.push({ name: typeof f.name === 'string' ? f.name : '', arguments: argumentsText(f.arguments) });
  }
  return out;
}

/** The refusal message when it has any non-blank text (kept as the model wrote it), else undefined. */
function refusalOf(...parts: unknown[]): string | undefined {
  const r = parts.filter((p): p is string => typeof p === 'string').join('');
  return r.trim() === '' ? undefined : r;
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
    const body = await readJson(res, ctx.signal);
    if (!isObject(body)) throw new ProviderReplyError('the chat completion is not a JSON object');
    const json = body as ChatReply;
    const choice: unknown = Array.isArray(json.choices) ? (json.choices as unknown[])[0] : undefined;
    if (!isObject(choice)) {
      if (json.error !== undefined && json.error !== null)
        throw new ProviderReplyError(providerMessage(json) ?? 'an error without a message');
      throw new ProviderReplyError('the chat completion has no choices');
    }
    const message = (choice as ChatChoice).message;
    if (!isObject(message)) throw new ProviderReplyError('the chat completion has no choices[0].message');
    const content = contentOf(message.content, 'choices[0].message');
    const calls = toolCallsOf(message);
    const text = replyText(content.text, calls);
    const refusal = refusalOf(message.refusal, content.refusal);
    ctx.onText?.(text);
    return {
      text,
      usage: usageOf(json.usage),
      model: typeof json.model === 'string' ? json.model : model,
      ...(typeof choice.finish_reason === 'string' ? { finish_reason: choice.finish_reason } : {}),
      ...(refusal !== undefined ? { refusal } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
  }

  async #readStream(res: Response, ctx: AttemptContext, model: string): Promise<AttemptResult> {
    let text = '';
    let refusal = '';
    const calls = new Map<number, ModelToolCall>();
    let usage: ModelUsage = { input_tokens: 0, output_tokens: 0 };
    let finish: string | undefined;
    let answeredBy = model;
    let done = false;
    await readSse(res, ctx.signal, (e) => {
      if (e.data === '[DONE]') {
        done = true;
        return 'stop';
      }
      if (e.event === 'error') throw new ProviderReplyError(`stream error: ${providerMessage(e.data) ?? 'no message'}`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(e.data);
      } catch {
        throw new TransportError(`unreadable stream chunk: ${safeText(e.data, 120)}`);
      }
      if (!isObject(parsed)) return undefined;
      const chunk = parsed as ChatReply;
      if (chunk.error !== undefined && chunk.error !== null)
        throw new ProviderReplyError(`stream error: ${providerMessage(chunk) ?? 'no message'}`);
      if (typeof chunk.model === 'string') answeredBy = chunk.model;
      if (chunk.usage) usage = usageOf(chunk.usage);
      const choice: unknown = Array.isArray(chunk.choices) ? (chunk.choices as unknown[])[0] : undefined;
      if (!isObject(choice)) return undefined;
      const delta = (choice as ChatChoice).delta;
      if (isObject(delta)) {
        const part = contentOf(delta.content, 'choices[0].delta');
        if (part.text !== '') {
          text += part.text;
          ctx.onText?.(part.text);
        }
        refusal += part.refusal + (typeof delta.refusal === 'string' ? delta.refusal : '');
        addToolCallDeltas(calls, delta);
      }
      if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
      return undefined;
    });
    if (!done && finish === undefined) throw new TransportError('stream ended before the completion finished');
    // `[DONE]` without any finish_reason: the answer's end is unknown, never read as complete
    finish ??= STREAM_WITHOUT_STOP;
    const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    if (toolCalls.length > 0) {
      // the tool calls, rendered, are the end of the text (and of what onText was given)
      const tail = replyText('', toolCalls);
      const sep = text !== '' ? '\n' : '';
      text += sep + tail;
      ctx.onText?.(sep + tail);
    }
    const refused = refusalOf(refusal);
    return {
      text,
      usage,
      model: answeredBy,
      ...(finish !== undefined ? { finish_reason: finish } : {}),
      ...(refused !== undefined ? { refusal: refused } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
  }
}

/**
 * Adds one delta's tool-call pieces to `calls` (keyed by `index`): the name from the first piece
 * that has one, the arguments appended in order. The legacy `function_call` delta is index 0.
 */
function addToolCallDeltas(calls: Map<number, ModelToolCall>, delta: ChatMessage): void {
  const pieces = Array.isArray(delta.tool_calls) ? (delta.tool_calls as unknown[]) : [];
  const legacy = isObject(delta.function_call) ? [{ index: 0, function: delta.function_call }] : [];
  pieces.forEach((p, i) => add(p, i));
  legacy.forEach((p, i) => add(p, i));
  function add(p: unknown, position: number): void {
    if (!isObject(p)) return;
    const index = typeof p.index === 'number' && Number.isInteger(p.index) ? p.index : position;
    const f = isObject(p.function) ? p.function : {};
    const call = calls.get(index) ?? { name: '', arguments: '' };
    if (call.name === '' && typeof f.name === 'string') call.name = f.name;
    call.arguments += argumentsText(f.arguments);
    calls.set(index, call);
  }
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Which API a request was made to: `/v1/chat/completions` (openai) or `/v1/messages` (anthropic). */
export type FakeLlmApi = 'openai' | 'anthropic';

/** One request the fake server received, recorded before it answered. */
export interface FakeLlmRequest {
  api: FakeLlmApi;
  method: string;
  path: string;
  /** Header names lower-cased, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  raw: string;
  /** `Date.now()` when the request was complete. */
  received_at: number;
  /** 0-based position among all requests. */
  index: number;
}

/**
 * A reply to a model call. The shape follows the API that was asked and the request's `stream`
 * flag: a plain JSON completion, or SSE chunks (`chunks` splits the text; default one chunk per
 * word). `reset_after_chunks` cuts the connection after that many text chunks; `error_event`
 * ends the stream with the API's error event instead of the normal end.
 */
export interface FakeLlmTextReply {
  kind?: 'text';
  text: string;
  chunks?: string[];
  /** Delay before each streamed chunk (a slow stream). */
  chunk_delay_ms?: number;
  /** Default: input ≈ request chars / 4, output ≈ text chars / 4 (at least 1 each). */
  usage?: { input_tokens: number; output_tokens: number };
  /** Leave usage out of the reply (plain) or the stream (even with include_usage). */
  omit_usage?: boolean;
  model?: string;
  finish_reason?: string;
  reset_after_chunks?: number;
  error_event?: { type?: string; message: string };
  headers?: Record<string, string>;
}

/** An HTTP status with headers and a JSON body (default: the API's error object). */
export interface FakeLlmStatusReply {
  kind: 'status';
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  message?: string;
}

/** A raw body, sent as is (broken JSON, HTML error pages, truncated SSE). */
export interface FakeLlmRawReply {
  kind: 'raw';
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

/** Destroy the connection without an answer; `hang` never answers (until the client gives up or close()). */
export interface FakeLlmDropReply {
  kind: 'reset' | 'hang';
}

/** Anything the fake server can be scripted to do. */
export type FakeLlmReply = FakeLlmTextReply | FakeLlmStatusReply | FakeLlmRawReply | FakeLlmDropReply;

/** Replies in order, or a function choosing one per request (a matcher). */
export type FakeLlmScript = FakeLlmReply[] | ((req: FakeLlmRequest) => FakeLlmReply | Promise<FakeLlmReply>);

/** Options of {@link startFakeLlmServer}. */
export interface FakeLlmServerOptions {
  script?: FakeLlmScript;
  /**
   * Act like a compatible server that does not know `stream_options`: such a request gets a 400
   * naming the option, without consuming a scripted reply.
   */
  rejectStreamOptions?: boolean;
  /** Model name reported when the request names none. */
  model?: string;
}

/** A running fake OpenAI- and Anthropic-compatible server on 127.0.0.1. */
export interface FakeLlmServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` — the Anthropic base_url. */
  readonly url: string;
  /** `<url>/v1` — the OpenAI base_url. */
  readonly openaiBaseUrl: string;
  /** Every request received, in order. */
  readonly requests: FakeLlmRequest[];
  /** Appends replies to an array script (or replaces a function script by these). */
  push(...replies: FakeLlmReply[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Cuts the connection after what was written so far has reached the client. */
async function cut(res: ServerResponse): Promise<void> {
  await new Promise<void>((resolve) => res.write('', () => resolve()));
  await sleep(20);
  res.socket?.destroy();
}

function estimateTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

function apiOf(path: string): FakeLlmApi | undefined {
  const p = path.split('?')[0] ?? '';
  if (p.endsWith('/chat/completions')) return 'openai';
  if (p.endsWith('/messages')) return 'anthropic';
  return undefined;
}

function errorBody(api: FakeLlmApi, status: number, message: string): unknown {
  return api === 'anthropic'
    ? { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } }
    : { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function splitWords(text: string): string[] {
  const parts = text.match(/\S+\s*|\s+/g);
  return parts && parts.length > 0 ? parts : [text];
}

function plainBody(api: FakeLlmApi, req: FakeLlmRequest, r: FakeLlmTextReply, model: string): unknown {
  const usage = r.usage ?? { input_tokens: estimateTokens(req.raw), output_tokens: estimateTokens(r.text) };
  if (api === 'anthropic') {
    return {
      id: `msg_fake_${req.index}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: r.text }],
      stop_reason: r.finish_reason ?? 'end_turn',
      stop_sequence: null,
      ...(r.omit_usage ? {} : { usage }),
    };
  }
  return {
    id: `chatcmpl-fake-${req.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.finish_reason ?? 'stop' }],
    ...(r.omit_usage
      ? {}
      : {
          usage: {
            prompt_tokens: usage.input_tokens,
            completion_tokens: usage.output_tokens,
            total_tokens: usage.input_tokens + usage.output_tokens,
          },
        }),
  };
}

async function stream(
  api: FakeLlmApi,
  req: FakeLlmRequest,
  r: FakeLlmTextReply,
  model: string,
  res: ServerResponse,
): Promise<void> {
  const usage = r.usage ?? { input_tokens: estimateTokens(req.raw), output_tokens: estimateTokens(r.text) };
  const chunks = r.chunks ?? splitWords(r.text);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...r.headers });
  const send = (event: string | undefined, data: unknown): void => {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
  };
  const id = `${api === 'anthropic' ? 'msg_fake' : 'chatcmpl-fake'}-${req.index}`;
  const created = Math.floor(Date.now() / 1000);
  const oaChunk = (delta: unknown, finish: string | null, extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  if (api === 'anthropic') {
    send('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: r.omit_usage ? 0 : usage.input_tokens, output_tokens: 1 },
      },
    });
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    send('ping', { type: 'ping' });
  } else {
    send(undefined, oaChunk({ role: 'assistant', content: '' }, null));
  }
  let sent = 0;
  for (const chunk of chunks) {
    if (r.reset_after_chunks !== undefined && sent >= r.reset_after_chunks) {
      await cut(res);
      return;
    }
    if (r.chunk_delay_ms) await sleep(r.chunk_delay_ms);
    if (res.destroyed) return;
    if (api === 'anthropic') {
      send('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: chunk },
      });
    } else {
      send(undefined, oaChunk({ content: chunk }, null));
    }
    sent++;
  }
  if (r.reset_after_chunks !== undefined && sent >= r.reset_after_chunks) {
    await cut(res);
    return;
  }
  if (r.error_event) {
    const type = r.error_event.type ?? 'overloaded_error';
    if (api === 'anthropic') send('error', { type: 'error', error: { type, message: r.error_event.message } });
    else send(undefined, { error: { message: r.error_event.message, type } });
    res.end();
    return;
  }
  const finish = r.finish_reason ?? (api === 'anthropic' ? 'end_turn' : 'stop');
  if (api === 'anthropic') {
    send('content_block_stop', { type: 'content_block_stop', index: 0 });
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: finish, stop_sequence: null },
      usage: { output_tokens: r.omit_usage ? 0 : usage.output_tokens },
    });
    send('message_stop', { type: 'message_stop' });
  } else {
    send(undefined, oaChunk({}, finish));
    if (req.body?.stream_options?.include_usage === true && !r.omit_usage) {
      send(undefined, {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: {
          prompt_tokens: usage.input_tokens,
          completion_tokens: usage.output_tokens,
          total_tokens: usage.input_tokens + usage.output_tokens,
        },
      });
    }
    send(undefined, '[DONE]');
  }
  res.end();
}

/**
 * Starts a fake model endpoint on 127.0.0.1:0 that serves both `/v1/chat/completions` (OpenAI)
 * and `/v1/messages` (Anthropic), replaying `script` in order (or asking the script function),
 * and records every request. When an array script runs out, requests get a 418 (not retried by
 * the adapters) naming the problem. Close it (or `await using`) at the end of the test.
 */
export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  let script: FakeLlmScript = Array.isArray(options.script) ? [...options.script] : (options.script ?? []);
  let next = 0;
  const requests: FakeLlmRequest[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const choose = async (req: FakeLlmRequest): Promise<FakeLlmReply | undefined> => {
    if (typeof script === 'function') return script(req);
    return script[next++];
  };

  const handle = async (http: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parts: Buffer[] = [];
    for await (const c of http) parts.push(c as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    const path = http.url ?? '/';
    const api = apiOf(path);
    if (http.method !== 'POST' || api === undefined) {
      sendJson(res, 404, { error: { message: `fake-llm: no route ${http.method} ${path}` } });
      return;
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const req: FakeLlmRequest = {
      api,
      method: http.method,
      path,
      headers: { ...http.headers },
      body,
      raw,
      received_at: Date.now(),
      index: requests.length,
    };
    requests.push(req);
    const model = typeof body?.model === 'string' ? body.model : (options.model ?? 'fake-model');
    if (options.rejectStreamOptions && api === 'openai' && body?.stream_options !== undefined) {
      sendJson(res, 400, errorBody(api, 400, 'Unrecognized request argument supplied: stream_options'));
      return;
    }
    const reply = await choose(req);
    if (reply === undefined) {
      sendJson(res, 418, errorBody(api, 418, `fake-llm: script exhausted at request ${req.index}`));
      return;
    }
    switch (reply.kind) {
      case 'status':
        sendJson(
          res,
          reply.status,
          reply.body ?? errorBody(api, reply.status, reply.message ?? `fake-llm status ${reply.status}`),
          reply.headers,
        );
        return;
      case 'raw':
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body);
        return;
      case 'reset':
        http.socket.destroy();
        return;
      case 'hang':
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      default:
        if (body?.stream === true) await stream(api, req, reply, model, res);
        else sendJson(res, 200, plainBody(api, req, reply, model), reply.headers);
    }
  };

  const server = createServer((http, res) => {
    handle(http, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake-llm: ${String(err)}` } });
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= new Promise<void>((resolve) => {
      for (const r of hanging) r.destroy();
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }));
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    requests,
    push(...replies) {
      if (typeof script === 'function') {
        script = replies;
        next = 0;
      } else script.push(...replies);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

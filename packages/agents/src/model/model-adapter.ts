/**
 * The plugin interface every model backend implements (OpenAI-compatible, Anthropic, offline).
 * A ModelAdapter makes no security judgement: it sends a conversation and returns the text and the
 * token usage. Transport retries (408/409/429/5xx, retry-after) live inside the adapter; guardrail
 * re-asks are the caller's business and never mixed with them.
 */

/** One message of a conversation. `system` messages are hoisted by adapters whose API wants that. */
export interface ModelMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a caller asks of a model. */
export interface ModelRequestParams {
  messages: ModelMessage[];
  /** Overrides the adapter's configured model. */
  model?: string;
  max_tokens?: number;
  temperature?: number;
  /** Stream the reply (SSE); text arrives through `onText` as it comes. */
  stream?: boolean;
  /** Estimated input tokens, for budget checks made before the call (SafetyMonitor). */
  estimated_input_tokens?: number;
}

/** Token usage of one call, as the endpoint reported it (0 when it reported none). */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
}

/** A native tool call of a reply (OpenAI `tool_calls` / `function_call`, Anthropic `tool_use`). */
export interface ModelToolCall {
  name: string;
  /** The arguments as the model sent them (JSON text, possibly invalid or cut). */
  arguments: string;
}

/**
 * The outcome of one model call. A call that reached the model resolves even when the model did
 * not finish (`finish_reason` `length`, `max_tokens`, `content_filter`, `refusal`, …): callers
 * classify the end with `stopOf` (model-reply.ts) before reading `text` as an answer.
 */
export interface ModelResult {
  /**
   * The answer's text parts joined, then each native tool call rendered as
   * `{"name": …, "arguments": …}` on its own line (see `renderToolCall`). A refusal is not text.
   */
  text: string;
  usage: ModelUsage;
  /** The model that answered (as the endpoint named it). */
  model: string;
  /** `stop`, `length`, `tool_calls`, `content_filter`, `end_turn`, `max_tokens`, `refusal`, … as the endpoint reported it. */
  finish_reason?: string;
  /** The model's refusal message (OpenAI `message.refusal` / streamed `delta.refusal`), when it declined. */
  refusal?: string;
  /** Native tool calls of the reply, when there were any (also rendered into `text`). */
  tool_calls?: ModelToolCall[];
  /** How many transport attempts were made (1 = no retry). */
  attempts: number;
}

/** Per-call options that are not part of the request body. */
export interface ModelCallOptions {
  /** Aborts the call (kill switch, deadline); the adapter rejects with E_HALTED or E_TIMEOUT as the reason says. */
  signal?: AbortSignal;
  /** Receives streamed text deltas. */
  onText?: (delta: string) => void;
}

/**
 * A model backend. `complete` rejects with a FingerError: E_LLM_UNAVAILABLE (endpoint down, an
 * error answered instead of a reply, retries spent, retry-after above the configured maximum),
 * E_TIMEOUT, E_HALTED (aborted by the kill switch). A reply the model did not finish, refused, or
 * the provider filtered resolves: the caller reads `finish_reason` / `refusal` (`stopOf`).
 */
export interface ModelAdapter {
  /** `openai`, `anthropic` or `offline`. */
  readonly provider: string;
  /** The configured model name. */
  readonly model: string;
  complete(params: ModelRequestParams, options?: ModelCallOptions): Promise<ModelResult>;
}

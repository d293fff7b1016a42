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

/** The outcome of one model call. */
export interface ModelResult {
  text: string;
  usage: ModelUsage;
  /** The model that answered (as the endpoint named it). */
  model: string;
  /** `stop`, `length`, `tool_calls`, … as the endpoint reported it. */
  finish_reason?: string;
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
 * A model backend. `complete` rejects with a FingerError: E_LLM_UNAVAILABLE (endpoint down, retries
 * spent, retry-after above the configured maximum), E_TIMEOUT, E_HALTED (aborted by the kill switch).
 */
export interface ModelAdapter {
  /** `openai`, `anthropic` or `offline`. */
  readonly provider: string;
  /** The configured model name. */
  readonly model: string;
  complete(params: ModelRequestParams, options?: ModelCallOptions): Promise<ModelResult>;
}

import { FingerError } from '@finger/protocol';

import type { ModelAdapter, ModelCallOptions, ModelRequestParams, ModelResult } from './model-adapter.js';
import { callSignal, type FetchFn } from './model-http.js';
import { ProviderReplyError, type RetryOptions, type SleepFn, TransportError, withRetry } from './retry.js';
import type { UsageMeter } from './usage-meter.js';

/** Options shared by the HTTP adapters (OpenAI-compatible, Anthropic). */
export interface HttpModelAdapterOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com`. */
  base_url: string;
  /** Sent as `Authorization: Bearer` (OpenAI) or `x-api-key` (Anthropic); from config only. */
  api_key?: string;
  model: string;
  /** Transport retries after the first attempt (default 2). */
  max_retries?: number;
  /** A retry-after above this fails at once with E_LLM_UNAVAILABLE (default 60 000). */
  max_retry_wait_ms?: number;
  /** Deadline of one whole call, retries and waits included (default 120 000); then E_TIMEOUT. */
  timeout_ms?: number;
  /** Default max_tokens when a request sets none (Anthropic requires one; default 1024). */
  default_max_tokens?: number;
  fetch?: FetchFn;
  sleep?: SleepFn;
  random?: () => number;
  now?: () => number;
  onRetry?: RetryOptions['onRetry'];
  /** Records every call's usage. */
  meter?: UsageMeter;
}

/** What one attempt gets: the call's signal and the text sink (which notes that text went out). */
export interface AttemptContext {
  signal: AbortSignal;
  onText?: (delta: string) => void;
}

/** What one attempt returns (attempts are filled in by the template). */
export type AttemptResult = Omit<ModelResult, 'attempts'>;

/**
 * Template for HTTP model adapters: `complete` fixes the per-call deadline, the shared retry
 * loop, the usage record and the error mapping; subclasses implement `attempt` (one HTTP
 * exchange). A stream that breaks after text was handed to `onText` is not retried (the caller
 * would see text twice): it fails with E_LLM_UNAVAILABLE.
 */
export abstract class BaseHttpModelAdapter implements ModelAdapter {
  abstract readonly provider: string;
  readonly model: string;
  protected readonly opts: HttpModelAdapterOptions;
  protected readonly fetchFn: FetchFn;

  constructor(options: HttpModelAdapterOptions) {
    this.opts = options;
    this.model = options.model;
    this.fetchFn = options.fetch ?? fetch;
  }

  /** One HTTP exchange; throws HttpStatusError / TransportError for the retry loop. */
  protected abstract attempt(params: ModelRequestParams, ctx: AttemptContext): Promise<AttemptResult>;

  async complete(params: ModelRequestParams, options: ModelCallOptions = {}): Promise<ModelResult> {
    const { signal, dispose } = callSignal(options.signal, this.opts.timeout_ms ?? 120_000);
    const userOnText = options.onText;
    let emitted = false;
    const onText = userOnText
      ? (delta: string): void => {
          if (delta === '') return;
          emitted = true;
          userOnText(delta);
        }
      : undefined;
    try {
      const { value, attempts } = await withRetry(
        async () => {
          try {
            return await this.attempt(params, { signal, ...(onText ? { onText } : {}) });
          } catch (err) {
            if (err instanceof TransportError && emitted) {
              const what = err instanceof ProviderReplyError ? 'model endpoint sent an error' : 'model stream broke';
              throw new FingerError('E_LLM_UNAVAILABLE', `${what} after text was sent: ${err.message}`, {
                partial: true,
              });
            }
            throw err;
          }
        },
        {
          max_retries: this.opts.max_retries ?? 2,
          max_retry_wait_ms: this.opts.max_retry_wait_ms ?? 60_000,
          ...(this.opts.sleep ? { sleep: this.opts.sleep } : {}),
          ...(this.opts.random ? { random: this.opts.random } : {}),
          ...(this.opts.now ? { now: this.opts.now } : {}),
          ...(this.opts.onRetry ? { onRetry: this.opts.onRetry } : {}),
        },
        signal,
      );
      this.opts.meter?.record(value.model, value.usage);
      return { ...value, attempts };
    } catch (err) {
      this.opts.meter?.recordFailure();
      throw err;
    } finally {
      dispose();
    }
  }
}

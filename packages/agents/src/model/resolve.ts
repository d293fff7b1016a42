import { FingerError } from '@finger/protocol';

import { AnthropicAdapter } from './anthropic.js';
import type { HttpModelAdapterOptions } from './http-model-adapter.js';
import type { ModelAdapter } from './model-adapter.js';
import { OfflineAdapter, type OfflineCatalog } from './offline.js';
import { OpenAiAdapter } from './openai.js';

/** The daemon's `llm` config section (packages/daemon/src/config.ts), as far as adapters need it. */
export interface ModelConfig {
  provider: 'offline' | 'openai' | 'anthropic';
  base_url?: string;
  api_key?: string;
  model?: string;
  secondary_model?: string;
  max_retries: number;
  max_retry_wait_ms: number;
  timeout_ms: number;
}

/** What the composition root hands to {@link createModelAdapter} besides the config. */
export interface ModelAdapterDeps extends Pick<HttpModelAdapterOptions, 'fetch' | 'sleep' | 'meter' | 'onRetry'> {
  /** Tools and agents for the offline router (called per request). Default: none. */
  catalog?: () => OfflineCatalog;
  /** `router.min_confidence`, for the offline router. */
  min_confidence?: number;
  /** Use `secondary_model` (reflect/compress/plan) instead of `model`, when configured. */
  secondary?: boolean;
}

/** Default endpoints when `llm.base_url` is not set. */
export const DEFAULT_BASE_URLS = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
} as const;

/**
 * Builds the model adapter the config names. `offline` (the default) needs nothing; `openai` and
 * `anthropic` need `llm.model`, and `anthropic` against its public endpoint needs `llm.api_key`
 * (E_INVALID_ARGS naming the key otherwise). Keys and endpoints come only from the config
 * (file or `FINGER_LLM_*` env, merged by the daemon), never from a request.
 */
export function createModelAdapter(config: ModelConfig, deps: ModelAdapterDeps = {}): ModelAdapter {
  if (config.provider === 'offline') {
    return new OfflineAdapter({
      catalog: deps.catalog ?? (() => ({ tools: [] })),
      ...(deps.min_confidence !== undefined ? { min_confidence: deps.min_confidence } : {}),
    });
  }
  if (config.provider !== 'openai' && config.provider !== 'anthropic') {
    throw new FingerError(
      'E_INVALID_ARGS',
      `llm.provider "${String(config.provider)}" is not one of offline, openai, anthropic`,
      {
        key: 'llm.provider',
      },
    );
  }
  const model = (deps.secondary ? config.secondary_model : undefined) ?? config.model;
  if (!model) {
    throw new FingerError('E_INVALID_ARGS', `llm.model is required for provider "${config.provider}"`, {
      key: 'llm.model',
    });
  }
  const base_url = config.base_url ?? DEFAULT_BASE_URLS[config.provider];
  if (config.provider === 'anthropic' && !config.api_key && base_url === DEFAULT_BASE_URLS.anthropic) {
    throw new FingerError('E_INVALID_ARGS', 'llm.api_key (or FINGER_LLM_API_KEY) is required for api.anthropic.com', {
      key: 'llm.api_key',
    });
  }
  const options: HttpModelAdapterOptions = {
    base_url,
    model,
    max_retries: config.max_retries,
    max_retry_wait_ms: config.max_retry_wait_ms,
    timeout_ms: config.timeout_ms,
    ...(config.api_key ? { api_key: config.api_key } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    ...(deps.meter ? { meter: deps.meter } : {}),
    ...(deps.onRetry ? { onRetry: deps.onRetry } : {}),
  };
  return config.provider === 'openai' ? new OpenAiAdapter(options) : new AnthropicAdapter(options);
}

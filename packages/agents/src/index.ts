export type {
  ModelAdapter,
  ModelCallOptions,
  ModelMessage,
  ModelRequestParams,
  ModelResult,
  ModelUsage,
} from './model/model-adapter.js';

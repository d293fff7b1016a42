export type {
  ModelAdapter,
  ModelCallOptions,
  ModelMessage,
  ModelRequestParams,
  ModelResult,
  ModelUsage,
} from './model/model-adapter.js';
export { ANTHROPIC_VERSION, AnthropicAdapter, toAnthropicMessages } from './model/anthropic.js';
export type { AttemptContext, AttemptResult, HttpModelAdapterOptions } from './model/http-model-adapter.js';
export { BaseHttpModelAdapter } from './model/http-model-adapter.js';
export type { FetchFn } from './model/model-http.js';
export type {
  OfflineAdapterOptions,
  OfflineAgent,
  OfflineCatalog,
  OfflineDecision,
  OfflineRouterOptions,
  OfflineTool,
} from './model/offline.js';
export { OfflineAdapter, OfflineRouter } from './model/offline.js';
export { OpenAiAdapter } from './model/openai.js';
export type { ModelAdapterDeps, ModelConfig } from './model/resolve.js';
export { createModelAdapter, DEFAULT_BASE_URLS } from './model/resolve.js';
export type { RetryOptions, SleepFn } from './model/retry.js';
export {
  abortError,
  HttpStatusError,
  isHaltReason,
  isRetryableStatus,
  parseRetryAfter,
  realSleep,
  TransportError,
  withRetry,
} from './model/retry.js';
export type { SseEvent } from './model/sse.js';
export { readSse } from './model/sse.js';
export type { UsageTotals } from './model/usage-meter.js';
export { UsageMeter } from './model/usage-meter.js';
export type { Agent, AgentCallOptions, AgentContext, AgentHealth, AgentServices } from './agent/agent.js';
export { agentPrincipal } from './agent/agent.js';
export type { AgentOutcome, AgentTurn, BaseAgentOptions, Reach } from './agent/base-agent.js';
export { BaseAgent, inputText } from './agent/base-agent.js';
export type { RegisterAgentOptions } from './agent/register-agent.js';
export { AGENT_TOOL, agentManifest, registerAgent } from './agent/register-agent.js';
export type { SessionMemoryOptions, TurnRecord } from './agent/session-memory.js';
export { SessionMemory } from './agent/session-memory.js';
export type {
  GuardrailOutcome,
  GuardrailReasonCode,
  GuardrailRegistry,
  GuardrailRepair,
  RouterDecision,
  RouterDecisionKind,
} from './guardrail/guardrail-types.js';
export type { GuardrailOptions } from './guardrail/json-guardrail.js';
export { ROUTER_DECISION_KEYS, runGuardrail } from './guardrail/json-guardrail.js';
export { DEFAULT_MIN_CONFIDENCE } from './guardrail/policy.js';
export { routerDecisionSchema } from './guardrail/validate.js';
export type {
  IngressSupervisorOptions,
  RouteAuditSink,
  RoutePlan,
  RouteReply,
} from './router/ingress-supervisor-agent.js';
export { IngressSupervisorAgent } from './router/ingress-supervisor-agent.js';
export { routeAuditRecord } from './router/route-audit.js';
export type {
  GuardrailFn,
  RouteAttempt,
  RouteRequest,
  RouteResult,
  RouterEngineOptions,
} from './router/router-engine.js';
export { RouterEngine } from './router/router-engine.js';
export type { RouterPromptInput } from './router/router-prompt.js';
export { ROUTER_SYSTEM_PROMPT, routerReaskMessage, routerUserMessage } from './router/router-prompt.js';

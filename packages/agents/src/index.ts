export type { Agent, AgentCallOptions, AgentContext, AgentHealth, AgentServices } from './agent/agent.js';
export { agentPrincipal } from './agent/agent.js';
export type { AgentOutcome, AgentTurn, BaseAgentOptions } from './agent/base-agent.js';
export { BaseAgent, inputText, sessionKey } from './agent/base-agent.js';
export type { Reach } from './agent/reach.js';
export { reachableTools } from './agent/reach.js';
export type { RegisterAgentOptions } from './agent/register-agent.js';
export { AGENT_TOOL, agentManifest, registerAgent } from './agent/register-agent.js';
export type { SessionMemoryOptions, TurnRecord } from './agent/session-memory.js';
export { SessionMemory } from './agent/session-memory.js';
export type {
  CompressedBlock,
  CompressionOptions,
  ContextEntry,
  ContextEntryKind,
  ContextState,
} from './executor/context-window.js';
export {
  appendEntry,
  compressContext,
  contextTokens,
  emptyContext,
  estimateTokens,
  restoreCompressed,
} from './executor/context-window.js';
export type { RunControl } from './executor/executor-agent.js';
export { ExecutorAgent, newTask } from './executor/executor-agent.js';
export type {
  ContextBuilder,
  DecisionParser,
  ExecutorOptions,
  ExecutorProgress,
  ExecutorSafety,
  HumanAnswer,
  HumanChannel,
  Planner,
  PromptInput,
  ToolCallMeta,
  ToolGateway,
  ToolSummaryLine,
} from './executor/executor-types.js';
export { MAX_SUBTASKS, ModelPlanner, parsePlanReply } from './executor/model-planner.js';
export type { DefaultContextBuilderOptions } from './executor/prompt-builder.js';
export { DECISION_CONTRACT, DefaultContextBuilder, visibleText } from './executor/prompt-builder.js';
export type { ResultClass } from './executor/result-summary.js';
export { classifyResult, KEY_FIELDS, shortenText, summariseResult } from './executor/result-summary.js';
export type { FrameworkAdapterOptions } from './framework/framework-adapter.js';
export { FrameworkAdapter } from './framework/framework-adapter.js';
export type {
  GuardrailOutcome,
  GuardrailReasonCode,
  GuardrailRegistry,
  GuardrailRepair,
  LlmDecision,
  LlmDecisionOutcome,
  LlmToolCall,
  RouterDecision,
  RouterDecisionKind,
} from './guardrail/guardrail-types.js';
export type { GuardrailOptions } from './guardrail/json-guardrail.js';
export { ROUTER_DECISION_KEYS, runGuardrail } from './guardrail/json-guardrail.js';
export type { LlmDecisionOptions } from './guardrail/llm-decision.js';
export {
  DEFAULT_MAX_TOOL_CALLS,
  LLM_DECISION_KEYS,
  parseLlmDecision,
  safeLlmDecision,
} from './guardrail/llm-decision.js';
export { DEFAULT_MIN_CONFIDENCE } from './guardrail/policy.js';
export { routerDecisionSchema } from './guardrail/validate.js';
export type { FileMemoryOptions } from './memory/file-memory.js';
export { FileMemory } from './memory/file-memory.js';
export type { Memory, MemoryHit, MemoryKind, MemoryRecord, RecallOptions } from './memory/memory.js';
export type { IndexHit } from './memory/ngram-index.js';
export { NgramIndex, ngrams } from './memory/ngram-index.js';
export { ANTHROPIC_VERSION, AnthropicAdapter, toAnthropicMessages } from './model/anthropic.js';
export type { AttemptContext, AttemptResult, HttpModelAdapterOptions } from './model/http-model-adapter.js';
export { BaseHttpModelAdapter } from './model/http-model-adapter.js';
export type {
  ModelAdapter,
  ModelCallOptions,
  ModelMessage,
  ModelRequestParams,
  ModelResult,
  ModelToolCall,
  ModelUsage,
} from './model/model-adapter.js';
export type { FetchFn } from './model/model-http.js';
export type { ModelStop } from './model/model-reply.js';
export { renderToolCall, stopMessage, stopOf } from './model/model-reply.js';
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
  ProviderReplyError,
  realSleep,
  TransportError,
  withRetry,
} from './model/retry.js';
export type { SseEvent } from './model/sse.js';
export { readSse } from './model/sse.js';
export type { UsageTotals } from './model/usage-meter.js';
export { UsageMeter } from './model/usage-meter.js';
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
  RouterEngineOptions,
  RouteRequest,
  RouteResult,
} from './router/router-engine.js';
export { RouterEngine } from './router/router-engine.js';
export type { RouterPromptInput } from './router/router-prompt.js';
export { ROUTER_SYSTEM_PROMPT, routerInputOf, routerReaskMessage, routerUserMessage } from './router/router-prompt.js';
export type { Graph, GraphEvent, GraphState, GraphStatus, GraphStep, StepState, StepStatus } from './super/graph.js';
export { checkGraph, transition as graphTransition, initialState, NON_RETRYABLE, readySteps } from './super/graph.js';
export type { StepInput, SuperAgentOptions, SuperResult } from './super/super-agent.js';
export { SuperAgent } from './super/super-agent.js';
export { writeFileAtomicSync } from './tasks/atomic-file.js';
export { CheckpointStore } from './tasks/checkpoint-store.js';
export type { CostTally, ModelPrices } from './tasks/cost.js';
export { addTally, callCost, emptyTally, formatTally } from './tasks/cost.js';
export type { Plan, Subtask, SubtaskEvent, SubtaskStatus } from './tasks/plan.js';
export {
  activeSubtask,
  applySubtaskEvent,
  createPlan,
  planFinished,
  renderPlan,
  revisePlan,
  subtaskTransition,
} from './tasks/plan.js';
export { TaskConfidence } from './tasks/task-confidence.js';
export type { ScratchpadReader, TaskServiceOptions } from './tasks/task-service.js';
export { parseTaskDecision, TASK_SAFETY_PROMPT, TaskService } from './tasks/task-service.js';
export type { TaskEvent, TaskState } from './tasks/task-state.js';
export {
  isTerminal,
  nextTaskState,
  RESUMABLE_TASK_STATES,
  TASK_STATES,
  transition as taskTransition,
  TERMINAL_TASK_STATES,
} from './tasks/task-state.js';
export type {
  CurrentStep,
  InFlightCall,
  TaskCallOutcome,
  TaskQuestion,
  TaskRecord,
  TaskStep,
  TaskToolCall,
} from './tasks/task-types.js';
export type { CheckedWorkspace, TaskWorkspacePolicy } from './tasks/task-workspace.js';
export { checkTaskWorkspace, TaskWorkspaces } from './tasks/task-workspace.js';

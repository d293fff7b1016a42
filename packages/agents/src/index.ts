export type {
  ModelAdapter,
  ModelCallOptions,
  ModelMessage,
  ModelRequestParams,
  ModelResult,
  ModelUsage,
} from './model/model-adapter.js';
export type { Agent, AgentCallOptions, AgentContext, AgentHealth, AgentServices } from './agent/agent.js';
export { agentPrincipal } from './agent/agent.js';
export type { AgentOutcome, AgentTurn, BaseAgentOptions, Reach } from './agent/base-agent.js';
export { BaseAgent, inputText } from './agent/base-agent.js';
export type { RegisterAgentOptions } from './agent/register-agent.js';
export { AGENT_TOOL, agentManifest, registerAgent } from './agent/register-agent.js';
export type { SessionMemoryOptions, TurnRecord } from './agent/session-memory.js';
export { SessionMemory } from './agent/session-memory.js';

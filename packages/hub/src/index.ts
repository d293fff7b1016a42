export type { Clock } from './clock.js';
export { systemClock } from './clock.js';
export type { EventBus, EventCorrelation, EventFilter, EventListener, JsonEventListener } from './events/event-bus.js';
export type { EventHead } from './events/event-json.js';
export type { LocalEventBusOptions } from './events/local-event-bus.js';
export type { EventBusStats } from './events/local-event-bus.js';
export { LocalEventBus } from './events/local-event-bus.js';
export type { DispatchParams, HubCall, HubLimits, Interceptor, RequestRecord, ResolvedTarget } from './hub-types.js';
export { DEFAULT_LIMITS } from './hub-types.js';
export { runInterceptors } from './interceptor-chain.js';
export { LeaseTable } from './lease-table.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { HubStats, MessageHubOptions } from './message-hub.js';
export { MessageHub } from './message-hub.js';
export { isNatsUrlList, NATS_URLS } from './nats-url.js';
export type { RedisUrlParts } from './redis-url.js';
export { parseRedisUrl, REDIS_URL_FORM, redisUrlProblem } from './redis-url.js';
export type { NestedCaller } from './registry/call-context.js';
export { CallContext } from './registry/call-context.js';
export type { ModuleHealthInfo, ModuleInfo } from './registry/module-entry.js';
export { createModuleHandler } from './registry/module-host.js';
export type { ModuleRegistryOptions, TargetEntry } from './registry/module-registry.js';
export { ModuleRegistry } from './registry/module-registry.js';
export type { InProcessModuleFactoryOptions } from './runtime/in-process.js';
export { InProcessRuntime } from './runtime/in-process.js';
export type { McpQuarantine, McpRuntimeStats } from './runtime/mcp.js';
export { McpRuntime } from './runtime/mcp.js';
export type { McpServerConfig } from './runtime/mcp-config.js';
export { mcpManifest, mcpServerSchema, parseMcpServers, registerMcpServers } from './runtime/mcp-config.js';
export type { McpPin, McpPins } from './runtime/mcp-pins.js';
export { definitionHash, McpPinStore } from './runtime/mcp-pins.js';
export type { McpToolAnnotations, McpToolDefinition } from './runtime/mcp-tools.js';
export { annotationRisk, mcpToolSpec } from './runtime/mcp-tools.js';
export { createRuntime } from './runtime/resolve.js';
export type {
  InProcessModule,
  ModuleRuntime,
  RuntimeHealth,
  RuntimeLimits,
  RuntimeNotice,
  RuntimeOptions,
  ToolCallContext,
} from './runtime/runtime.js';
export type {
  SandboxArgvOptions,
  SandboxKeep,
  SandboxMode,
  SandboxOptions,
  SandboxProbe,
  SandboxStatus,
  WorkspaceWriteRequest,
} from './runtime/sandbox.js';
export {
  findProgram,
  probeSandbox,
  probeWorkspaceWrite,
  Sandbox,
  SANDBOX_BASE_ARGS,
  sandboxArgv,
  sandboxUnavailable,
  sandboxWarning,
} from './runtime/sandbox.js';
export type { SandboxMask } from './runtime/sandbox-paths.js';
export { CREDENTIAL_PATHS, credentialPaths, resolveMasks } from './runtime/sandbox-paths.js';
export type { SandboxCacheBind, SandboxProfile, WorkspaceWriteArgs } from './runtime/sandbox-profile.js';
export {
  GIT_RUNS_FROM,
  PRIVATE_DIRS,
  TOOL_CACHES,
  WORKSPACE_WRITE_BASE_ARGS,
  workspaceCacheDir,
  workspaceWriteArgs,
} from './runtime/sandbox-profile.js';
export type {
  ProxyAddressVerdict,
  ProxyRefusal,
  SandboxProxyLimits,
  SandboxProxyOptions,
} from './runtime/sandbox-proxy.js';
export { SANDBOX_PROXY_DEFAULTS, SandboxProxy } from './runtime/sandbox-proxy.js';
export type { ProxyAllowEntry } from './runtime/sandbox-proxy-allow.js';
export { expandAllow, PACKAGE_REGISTRIES, parseAllowEntry } from './runtime/sandbox-proxy-allow.js';
export type { ProcRef } from './runtime/sandbox-tree.js';
export { isRunning, killSandbox, sandboxInit, signalSandboxMembers, waitGone } from './runtime/sandbox-tree.js';
export type { StdioRuntimeStats } from './runtime/stdio.js';
export { StdioRuntime } from './runtime/stdio.js';
export type { EventStore } from './store/event-store.js';
export { EVENT_STORE_DEFAULTS, FileEventStore } from './store/file-event-store.js';
export type { LeaseStore } from './store/lease-store.js';
export { MemoryEventStore } from './store/memory-event-store.js';
export { MemoryLeaseStore } from './store/memory-lease-store.js';
export { MemoryRequestStore } from './store/memory-request-store.js';
export type { BeginOptions, RequestOutcome, RequestStore } from './store/request-store.js';
export type { CapabilitySnapshot, SnapshotEntry, SnapshotParams, ToolSummary } from './tools/capability-snapshot.js';
export {
  buildSnapshot,
  compareToolsByDefaultPriority,
  firstSentence,
  summarizeTool,
} from './tools/capability-snapshot.js';
export type { SchemaCheck, ToolChecks } from './tools/schema-validator.js';
export { compileToolSchemas } from './tools/schema-validator.js';
export type { ToolInfo } from './tools/tool-info.js';
export { TOOL_DEFAULTS, toToolInfo } from './tools/tool-info.js';
export type {
  ModuleChange,
  ProviderChoice,
  ToolRegistryOptions,
  ToolSchema,
  ToolSource,
} from './tools/tool-registry.js';
export { ToolRegistry } from './tools/tool-registry.js';
export type { InProcessTransportOptions } from './transport/in-process.js';
export { InProcessTransport, moduleOf } from './transport/in-process.js';
export type { RequestHooks, ServerChannel, Transport, TransportHandler, Unserve } from './transport/transport.js';
export { withoutCredentials } from './url-credentials.js';

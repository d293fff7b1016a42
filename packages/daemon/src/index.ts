export type { BuildOptions, DaemonInfo, FingerApp } from './app.js';
export { build, BUILTIN_MODULES_DIR } from './app.js';
export type { AuthHookOptions, RouteRoles } from './auth/auth-hook.js';
export { ACCESS, bearerToken, hasRole, installAuth } from './auth/auth-hook.js';
export type { CreatedToken, Role, TokenInfo } from './auth/token-store.js';
export { ADMIN_TOKEN_NAME, isRole, principalFor, ROLES, TokenStore } from './auth/token-store.js';
export { clusterKey } from './cluster-wiring.js';
export type { DaemonConfig, DaemonConfigInput, LogLevel } from './config.js';
export {
  configPath,
  configSchema,
  DEFAULT_CONFIG,
  envOverrides,
  exampleConfig,
  firewallLimits,
  holdQuotas,
  LOG_LEVELS,
  readConfigFile,
  resolveConfig,
  resolveHome,
} from './config.js';
export type {
  DispatchResult,
  IdsListener,
  InputGatewayOptions,
  InputParams,
  MessageParams,
} from './gateway/input-gateway.js';
export { InputGateway } from './gateway/input-gateway.js';
export { errorReply, installErrorHandling, toWireError } from './http/errors.js';
export type { RunDaemonOptions } from './main.js';
export { banner, describeStartError, runDaemon } from './main.js';
export type { MetricFamily, MetricSample } from './metrics.js';
export { PROMETHEUS_CONTENT_TYPE, renderPrometheus, RouteCounters } from './metrics.js';
export { natsConnectOptions } from './nats-connect-options.js';
export { VERSION } from './version.js';
export type { EventGatewayOptions, EventGatewayStats } from './ws/event-gateway.js';
export { EventGateway, WS_CLOSE } from './ws/event-gateway.js';

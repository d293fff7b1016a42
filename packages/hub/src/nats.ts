/**
 * `@finger/hub/nats`: the hub over NATS (DESIGN §3.14). Kept apart from the root entry so the
 * embedded default never loads the `nats` client.
 */
export type { ClusterNodeOptions, ModulePlacement } from './cluster/cluster-node.js';
export { ClusterNode, runtimeSwitch } from './cluster/cluster-node.js';
export type {
  ClusterChange,
  ClusterRegistryOptions,
  ModuleLocation,
  RemoteModule,
} from './cluster/cluster-registry.js';
export { announced, ClusterRegistry } from './cluster/cluster-registry.js';
export type { NatsConnectOptions } from './cluster/connect.js';
export { connectNats } from './cluster/connect.js';
export type { EventBridgeStats, NatsEventBridgeOptions, PublishingEventBus } from './cluster/event-bridge.js';
export { NatsEventBridge } from './cluster/event-bridge.js';
export type { ModuleServer, ModuleServerOptions } from './cluster/module-server.js';
export { startModuleServer } from './cluster/module-server.js';
export { natsAccessProblems } from './cluster/nats-access.js';
export type { NatsRuntimeOptions } from './runtime/nats.js';
export { NatsRuntime } from './runtime/nats.js';
export type { DroppedMessage, NatsTransportOptions } from './transport/nats.js';
export { NatsTransport } from './transport/nats.js';
export { failedAuthentication } from './transport/nats-options.js';
export type { CheckedSubscription } from './transport/nats-subscribe.js';
export { logRefusals, permissionRefusal, subscribeChecked } from './transport/nats-subscribe.js';
export type { ClusterSubjects, WireAuthOptions, WireCheck, WireKind, WireRole } from './transport/nats-wire.js';
export {
  clusterSubjects,
  decodeJson,
  encodeJson,
  parseServeKey,
  type ServeKey,
  serveKeyOf,
  type ServeScope,
  WireAuth,
} from './transport/nats-wire.js';

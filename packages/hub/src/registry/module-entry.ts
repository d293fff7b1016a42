import type { ModuleManifest, ToolSpec } from '@finger/protocol';

import type { ModuleRuntime } from '../runtime/runtime.js';
import type { TransportHandler, Unserve } from '../transport/transport.js';
import type { ForwardingRuntime } from './forward-handler.js';

/** Public view of a registered module. */
export interface ModuleInfo {
  id: string;
  name: string;
  version: string;
  kind: ModuleManifest['kind'];
  description?: string;
  runtime: string;
  tools: ToolSpec[];
  grants: string[];
  status: 'starting' | 'ready' | 'unhealthy' | 'draining';
  healthy: boolean;
  inflight: number;
  queued: number;
  concurrency: number;
  registered_at: string;
  source: 'static' | 'dynamic';
  base_dir: string;
}

/** Result of a module health check. */
export interface ModuleHealthInfo {
  id: string;
  healthy: boolean;
  checked_at: string;
  detail?: string;
  consecutive_failures: number;
}

/** A call waiting for a free concurrency slot of its module. */
export interface Waiter {
  /** False once the waiter gave up (deadline); it is then skipped. */
  readonly waiting: boolean;
  start(): void;
}

/** The registry's live record of one module (shared with the hub's dispatch path). */
export interface ModuleEntry {
  /** Replaced by the runtime's discovered tools at start, and by `update()` for a module imported from the cluster. */
  manifest: ModuleManifest;
  readonly id: string;
  readonly baseDir: string;
  readonly source: 'static' | 'dynamic';
  readonly registeredAt: string;
  readonly runtime: ModuleRuntime;
  /** The runtime again when it forwards whole envelopes (a module hosted elsewhere): the hub's calls go to it directly. */
  readonly forwarder: ForwardingRuntime | undefined;
  concurrency: number;
  maxQueue: number;
  status: ModuleInfo['status'];
  healthy: boolean;
  inflight: number;
  queue: Waiter[];
  unserve?: Unserve;
  /** What serves the module's calls on the hub's transport, while it is served there. */
  handler?: TransportHandler;
  healthTimer?: unknown;
  lastHealth?: ModuleHealthInfo;
  consecutiveFailures: number;
  drained?: () => void;
}

/** Snapshot of an entry as ModuleInfo. */
export function toModuleInfo(e: ModuleEntry): ModuleInfo {
  const m = e.manifest;
  const info: ModuleInfo = {
    id: e.id,
    name: m.name,
    version: m.version,
    kind: m.kind,
    runtime: m.runtime.type,
    tools: m.tools,
    grants: m.grants ?? [],
    status: e.status,
    healthy: e.healthy,
    inflight: e.inflight,
    queued: e.queue.length,
    concurrency: e.concurrency,
    registered_at: e.registeredAt,
    source: e.source,
    base_dir: e.baseDir,
  };
  if (m.description !== undefined) info.description = m.description;
  return info;
}

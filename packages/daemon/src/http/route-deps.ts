import type { TaskService } from '@finger/agents';
import type {
  AuditLog,
  FirewallEngine,
  HumanGate,
  PolicyStore,
  SafetyMonitor,
  ToolGrantProfile,
} from '@finger/firewall';
import type { MessageHub, SandboxStatus } from '@finger/hub';

import type { TokenStore } from '../auth/token-store.js';
import type { ClusterWiring } from '../cluster-wiring.js';
import type { DaemonConfig } from '../config.js';
import type { DiskWatch } from '../disk-watch.js';
import type { RedisWiring } from '../distributed/redis-wiring.js';
import type { InputGateway } from '../gateway/input-gateway.js';
import type { DelegatedCalls } from '../hooks/delegated-calls.js';
import type { LogDestinationStats } from '../log-destination.js';
import type { EventGateway } from '../ws/event-gateway.js';

/** What the route groups need; assembled once by `build()`. */
export interface RouteDeps {
  hub: MessageHub;
  tokens: TokenStore;
  gateway: InputGateway;
  eventGateway: EventGateway;
  config: DaemonConfig;
  /** Role grants of agent principals (`GET|POST|DELETE /v1/grants`, `GET /v1/tools?role=`). */
  grants: ToolGrantProfile;
  /** Pending approvals (`GET|POST /v1/approvals`); absent: empty list, every id E_NOT_FOUND. */
  gate?: HumanGate;
  /** AdminPolicy + UserPolicy (`GET|PUT /v1/policy`, `/v1/policy/reset`, `/v1/policy/effective`). */
  policy: PolicyStore;
  /** The firewall engine (`POST /v1/policy/check` evaluates with `record: false`). */
  engine: FirewallEngine;
  /** The PathSandbox's default readable/writable roots (workspace roots and `FINGER_HOME/workspace`). */
  sandboxRoots: readonly string[];
  /** The audit log: admin changes append to it before they apply; `GET /v1/audit`, `/v1/audit/verify`. */
  audit: AuditLog;
  home: string;
  version: string;
  /** Epoch ms when the daemon was built. */
  startedAt: number;
  /** Renders the Prometheus text of `/metrics`. */
  renderMetrics(): string;
  /** Supervised tasks (`/v1/tasks`); absent: empty list, every id E_NOT_FOUND. */
  tasks?: TaskService;
  /** Distributed mode (`nats.url` set): NATS status for `/v1/health`, module placement for `/v1/modules`. */
  cluster?: ClusterWiring;
  /** Distributed mode (`redis.url` set): Redis status for `/v1/health`. */
  redis?: RedisWiring;
  /** The sandbox of AI-initiated processes, for `/v1/health` (and so `doctor`); absent: not reported. */
  sandbox?: SandboxStatus;
  /** Breakers, kill switch and lockout (`/v1/halt`, `/v1/unlock`, health); absent: no safety routes. */
  safety?: SafetyMonitor;
  /** FINGER_HOME's storage for `/v1/health` (a full disk, writers that cannot write); absent: not reported. */
  storage?: Pick<DiskWatch, 'status'>;
  /** The log destination's counters for `/v1/health` (lines written, dropped); absent: not reported. */
  logStats?: () => LogDestinationStats;
  /** Delegated mode: agents' pre-tool hooks (`/v1/hooks/evaluate`, `/v1/audit/report`); absent: no such routes. */
  delegated?: DelegatedCalls;
}

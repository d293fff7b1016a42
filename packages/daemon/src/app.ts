import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { FastifyInstance } from 'fastify';
import { type Logger as PinoLogger, pino } from 'pino';

import { type ScratchpadReader, TaskConfidence, type TaskService, TaskWorkspaces } from '@finger/agents';
import {
  auditHeadPath,
  AuditLog,
  createGrantInterceptor,
  FileAuditHeadStore,
  type FirewallEngine,
  type HumanGate,
  type PerceptionBus,
  type PolicyStore,
  type SafetyMonitor,
  settleAbandonedHolds,
  ToolGrantProfile,
} from '@finger/firewall';
import {
  type Clock,
  FileEventStore,
  LocalEventBus,
  MessageHub,
  registerMcpServers,
  type Sandbox,
  systemClock,
} from '@finger/hub';
import { type ErrorInfo, FingerError, rfc3339, toErrorInfo } from '@finger/protocol';

import { wireAgents } from './agents-wiring.js';
import { SESSION_DEFAULTS, SessionStore } from './auth/session-store.js';
import { TokenStore, writeFileAtomic } from './auth/token-store.js';
import { clusterRuntimes, type ClusterWiring, daemonNodeId, wireCluster } from './cluster-wiring.js';
import {
  type DaemonConfig,
  type DaemonConfigInput,
  exampleConfig,
  holdQuotas,
  readConfigFile,
  resolveConfig,
  resolveHome,
} from './config.js';
import { DiskWatch } from './disk-watch.js';
import { type RedisWiring, wireRedis } from './distributed/redis-wiring.js';
import { eventStoredLine } from './event-stored-form.js';
import { type FirewallWiring, wireFirewall } from './firewall-wiring.js';
import { InputGateway } from './gateway/input-gateway.js';
import { resolveTokenFile } from './home-paths.js';
import { DelegatedCalls } from './hooks/delegated-calls.js';
import { hostPolicy } from './http/host-check.js';
import { createServer } from './http/server.js';
import { declareInterceptorChain } from './interceptor-slots.js';
import { LogDestination } from './log-destination.js';
import {
  COUNTER_KEYS,
  hubFamilies,
  processFamilies,
  renderPrometheus,
  RouteCounters,
  statsFamilies,
} from './metrics.js';
import { wireSafety } from './safety-wiring.js';
import { wireSandboxProxy } from './sandbox-proxy-wiring.js';
import { wireSandbox } from './sandbox-wiring.js';
import { wireTasks } from './tasks-wiring.js';
import { Teardown } from './teardown.js';
import { wireUndoSnapshots } from './undo-wiring.js';
import { VERSION } from './version.js';
import { resolveWorkspaceRoots } from './workspace.js';
import { EventGateway } from './ws/event-gateway.js';

/** Options of {@link build}. Nothing here is read from `process.env`: pass `env` explicitly. */
export interface BuildOptions {
  /** FINGER_HOME; else `env.FINGER_HOME`, else `~/.finger`. */
  home?: string;
  /**
   * Environment to take `FINGER_*` overrides from (the composition root passes `process.env`);
   * its `HOME` is the user's home directory (`~` of `workspace.roots` and `token_file`), else os.homedir().
   */
  env?: Record<string, string | undefined>;
  /** Config overrides, applied last (above config.json and env). */
  config?: DaemonConfigInput;
  /** A pino logger to use instead of one made from `log.level`. */
  logger?: PinoLogger;
  /**
   * Where the logger made from `log.level` writes (default a new {@link LogDestination} on stdout):
   * main.ts passes its own so it can flush it before the process exits.
   */
  logDestination?: LogDestination;
  /** Where the built-in modules live (default: the repository's `modules/`). */
  builtinModulesDir?: string;
  clock?: Clock;
  /** A HumanGate to use instead of the one built from config (`firewall.approval_timeout_ms`). */
  gate?: HumanGate;
}

/** `FINGER_HOME/daemon.json`, written by a listening daemon so the CLI can find it. */
export interface DaemonInfo {
  pid: number;
  url: string;
  started_at: string;
  home: string;
  version: string;
  /** The admin token file the CLI reads (config `token_file` / FINGER_TOKEN_FILE). */
  token_file: string;
}

/** A built daemon. `listen()` binds; `close()` is idempotent. */
export interface FingerApp {
  readonly fastify: FastifyInstance;
  readonly hub: MessageHub;
  readonly events: LocalEventBus;
  readonly config: DaemonConfig;
  readonly tokens: TokenStore;
  readonly home: string;
  /**
   * The admin token file, absolute (its directories realpath'd): `FINGER_HOME/token`, or where
   * config `token_file` / FINGER_TOKEN_FILE puts it. What the sandbox masks and the firewall denies.
   */
  readonly tokenFile: string;
  /** The OS boundary of AI-initiated processes (shell commands, stdio/MCP children); `status()` for doctor. */
  readonly sandbox: Sandbox;
  readonly version: string;
  readonly logger: PinoLogger;
  readonly gateway: InputGateway;
  readonly eventGateway: EventGateway;
  /** Browser sessions of the web console (`/v1/session`; in memory, ended by sign-out, expiry or revocation). */
  readonly sessions: SessionStore;
  /** Role grants of agent principals (enforced by the hub's grant interceptor). */
  readonly grants: ToolGrantProfile;
  /**
   * `workspace.roots`, absolute and realpath'd (created at start when missing; never FINGER_HOME
   * or inside it, never holding {@link tokenFile}).
   */
  readonly workspaceRoots: string[];
  /** Modules that failed to load at start (the others still loaded). */
  readonly moduleErrors: ErrorInfo[];
  /** The one tamper-evident audit log of this home (`FINGER_HOME/audit`), closed last by close(). */
  readonly audit: AuditLog;
  /** AdminPolicy + UserPolicy (`/v1/policy`); UserPolicy changes are audited by the store. */
  readonly policy: PolicyStore;
  /** The five-layer firewall pipeline every tool call passes (after the grant interceptor). */
  readonly engine: FirewallEngine;
  /** Calls held for a person (`/v1/approvals`, APPROVAL_* events). */
  readonly gate: HumanGate;
  /** Approval / rejection counts feeding the adaptation. */
  readonly perception: PerceptionBus;
  /** Breakers, budgets, kill switch and SAFETY_LOCKOUT (`/v1/halt`, `/v1/unlock`); first in the hub chain. */
  readonly safety: SafetyMonitor;
  /** Supervised tasks (`/v1/tasks`, `myfinger run`): checkpoints in `state/tasks`, memory in `state/memory`. */
  readonly tasks: TaskService;
  /** Distributed mode (only when `nats.url` is set): cluster status and module placement. */
  readonly cluster?: ClusterWiring;
  /** The Redis stores of distributed mode; absent unless config `redis.url` is set. */
  readonly redis: RedisWiring | undefined;
  /** Binds `server.host:server.port` (port 0 picks one) and writes `daemon.json`. Rejects with E_CONFLICT when the port is taken. */
  listen(): Promise<{ url: string }>;
  /** Stops accepting, drains in-flight calls up to `shutdown.drain_ms`, closes modules, flushes events, removes `daemon.json`. */
  close(): Promise<void>;
}

/** Default location of the built-in modules: `<repo>/modules`, from `packages/daemon/{src,dist}/app.*`. */
export const BUILTIN_MODULES_DIR = fileURLToPath(new URL('../../../modules/', import.meta.url));

const HOME_DIRS = ['config', 'events', 'state', 'audit', 'backups'];

/**
 * Creates FINGER_HOME and its folders (0700). An existing FINGER_HOME that others may enter is
 * tightened to 0700 (it holds the tokens, policy and audit log); `warn` says so.
 */
function prepareHome(home: string, warn: (message: string, details: object) => void): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const mode = statSync(home).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    chmodSync(home, 0o700);
    const was = mode.toString(8).padStart(4, '0');
    warn(`FINGER_HOME ${home} was open to others (mode ${was}): tightened to 0700`, { path: home, mode: was });
  }
  for (const d of HOME_DIRS) mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
  const example = join(home, 'config', 'config.example.json');
  if (!existsSync(example)) {
    try {
      writeFileAtomic(example, `${JSON.stringify(exampleConfig(), null, 2)}\n`);
    } catch {
      // informational only
    }
  }
}

async function loadModules(
  hub: MessageHub,
  config: DaemonConfig,
  home: string,
  builtinDir: string,
  logger: PinoLogger,
): Promise<ErrorInfo[]> {
  const errors: ErrorInfo[] = [];
  const dirs: string[] = [];
  if (config.modules.builtin && existsSync(builtinDir)) dirs.push(builtinDir);
  for (const p of config.modules.paths) dirs.push(resolve(home, p));
  for (const p of dirs) {
    try {
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) throw new FingerError('E_NOT_FOUND', `module path ${p} does not exist`, { path: p });
      if (st.isFile()) await hub.registry.loadFile(p, 'static');
      else if (existsSync(join(p, 'module.json'))) await hub.registry.loadFile(join(p, 'module.json'), 'static');
      else errors.push(...(await hub.registry.loadDirectory(p, 'static')).errors);
    } catch (e) {
      errors.push(toErrorInfo(e));
    }
  }
  for (const e of errors) logger.warn({ error: e }, 'module not loaded');
  return errors;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Constructs the whole daemon without listening: config (E_INVALID_ARGS naming the bad key), the
 * token store (admin token on first start), the event bus over a file store in
 * FINGER_HOME/events, the hub with the built-in and configured modules, and fastify with every
 * route, OpenAPI at /docs and the WebSocket gateway.
 */
export async function build(options: BuildOptions = {}): Promise<FingerApp> {
  const env = options.env ?? {};
  const home = resolveHome(options.home, env);
  const config = resolveConfig(readConfigFile(home), env, options.config ?? {});
  // never pino's default destination: a failed write (a full disk) must not throw or block (log-destination.ts)
  const logDestination = options.logger ? undefined : (options.logDestination ?? new LogDestination());
  const logger =
    options.logger ?? pino({ level: config.log.level, base: { pid: process.pid } }, logDestination as LogDestination);
  const warn = (message: string, details: object) => logger.warn(details, message);
  const userHome = env.HOME || homedir();
  const tokenFile = resolveTokenFile(home, config.token_file, userHome);
  prepareHome(home, warn);
  const workspaceRoots = resolveWorkspaceRoots(config.workspace.roots, { home, userHome, tokenFile });
  const clock = options.clock ?? systemClock;
  // before anything can start a process: mode `required` without a sandbox refuses the start
  // the workspace-write profile's package-registry proxy (config sandbox.network.allow): listens from listen() on
  // each part registers its shutdown as it is built (teardown.ts): close() and a failed start run the same steps
  const teardown = new Teardown((name, err) => logger.warn({ err, part: name }, `${name}: close failed`));
  const sandboxProxy = wireSandboxProxy({ config: config.sandbox, home, logger });
  if (sandboxProxy !== undefined) teardown.add('front', 'sandbox proxy', () => sandboxProxy.close());
  const sandbox = wireSandbox({
    config: config.sandbox,
    home,
    tokenFile,
    userHome,
    env,
    warn,
    ...(sandboxProxy !== undefined ? { proxy: sandboxProxy } : {}),
  });
  const tokens = new TokenStore(home, { tokenFile, warn });
  // a full disk: the last-used times are informational; the shutdown goes on (the failure is logged)
  teardown.add('state', 'token usage', () => tokens.flush());
  if (config.approvals.answerers) {
    const known = new Set(tokens.list().map((t) => t.name));
    const unknown = config.approvals.answerers.filter((n) => !known.has(n));
    if (unknown.length)
      logger.warn({ unknown }, `approvals.answerers names tokens that do not exist (yet): ${unknown.join(', ')}`);
  }
  const store = new FileEventStore({
    dir: join(home, 'events'),
    ...config.events,
    // the files keep no held call's arguments and no input's text (event-stored-form.ts)
    stored_line: eventStoredLine,
    logger: logger.child({ component: 'events' }),
  });
  const events = new LocalEventBus({ store, clock, logger: logger.child({ component: 'event-bus' }) });
  teardown.add('state', 'events', () => events.close());
  // A supervised task's own workspace root, for its calls only (firewall sandbox, fs and shell).
  const taskWorkspaces = new TaskWorkspaces();
  const taskConfidence = new TaskConfidence();
  // one undo store for the fs module's backups and the shell module's delete snapshots
  const undoStore = wireUndoSnapshots({
    home,
    ...(config.modules.settings.fs ? { fsSettings: config.modules.settings.fs } : {}),
    workspaceFor: taskWorkspaces.workspaceFor,
    warn,
  });
  let listeningPort: number | undefined;
  // the scratchpad module hands over its own reader (store, symlink and root checks) for task prompts
  let scratchpadReader: ScratchpadReader | undefined;
  const settingsFor = (id: string): Record<string, unknown> => ({
    home,
    workspace_roots: workspaceRoots,
    backups_dir: join(home, 'backups'),
    ...config.modules.settings[id],
    // a function, not config: in-process modules only (dropped from a child's JSON settings)
    ...(id === 'fs' || id === 'shell' || id === 'scratchpad' ? { workspace_for: taskWorkspaces.workspaceFor } : {}),
    // an object, not config: the shell module runs every command inside it
    ...(id === 'shell' ? { sandbox } : {}),
    // functions, not config: the fs module's undo store, shared with the shell module's delete snapshots
    ...(id === 'fs' ? { undo_manager_for: undoStore.undoManagerFor } : {}),
    ...(id === 'shell' ? { undo_snapshot: undoStore.undoSnapshot } : {}),
    // a function, not config: the scratchpad module gives the task service its reader
    ...(id === 'scratchpad' ? { expose_reader: (read: ScratchpadReader) => (scratchpadReader = read) } : {}),
    // a function, not config: the web module never fetches finger's own daemon (known once it listens)
    ...(id === 'web' ? { daemon_ports: () => (listeningPort === undefined ? [] : [listeningPort]) } : {}),
  });
  // one name for this daemon on NATS and in the Redis audit stream
  const node = daemonNodeId();
  // Distributed shared state (§3.14): idempotency records, leases, safety state, audit mirror.
  const redis = config.redis.url
    ? await wireRedis({
        url: config.redis.url,
        cluster: config.cluster,
        node,
        clock,
        events,
        logger: logger.child({ component: 'redis' }),
      })
    : undefined;
  if (redis) teardown.add('state', 'redis', () => redis.close());
  const runtimes = clusterRuntimes();
  const hub = new MessageHub({
    ...(config.nats.url ? { createRuntime: runtimes.create } : {}),
    ...(redis ? { requests: redis.requests } : {}),
    events,
    clock,
    logger: logger.child({ component: 'hub' }),
    limits: config.hub,
    settingsFor,
    baseEnv: env,
    sandbox,
    tools: { preferred_provider_order: config.tools.preferred_provider_order },
  });
  const startedAt = Date.now();
  let closing: Promise<void> | undefined;
  let daemonFile: string | undefined;
  let firewall: FirewallWiring | undefined;
  let cluster: ClusterWiring | undefined;
  // on a failed start in-flight calls are not waited for
  let drainMs = config.shutdown.drain_ms;
  teardown.add('drain', 'hub: drain calls, close modules', () => hub.close(drainMs));
  // [safety, grants, firewall], outermost first, declared before any module loads
  const chain = declareInterceptorChain(hub);
  try {
    // Opened before any module loads; a damaged log refuses the start (E_STORE_UNAVAILABLE), and so
    // does a log that does not reach its head kept in state/ and Redis (E_AUDIT_BROKEN).
    const auditDir = join(home, 'audit');
    const audit = await AuditLog.open({
      dir: auditDir,
      clock,
      logger: logger.child({ component: 'audit' }),
      heads: [new FileAuditHeadStore(auditHeadPath(home)), ...(redis ? [redis.auditHead(auditDir)] : [])],
    });
    teardown.add('state', 'audit log', () => audit.close());
    const auditLog = audit;
    redis?.mirrorAudit(auditLog);
    // Outermost: a halt or a lockout refuses a call before grants and firewall see it.
    const sw = await wireSafety({
      hub,
      audit: auditLog,
      home,
      config: config.safety,
      clock,
      logger: logger.child({ component: 'safety' }),
      // the firewall is wired below; its gate knows which rejections the person excused
      excused: (e) => firewall?.excused(e) ?? false,
      ...(redis ? { store: await redis.safetyStore() } : {}),
    });
    teardown.add('state', 'safety', () => sw.close());
    chain.fill('safety', sw.interceptor);
    // Agents may call only the tools their role is granted; humans (admin/operator) any tool.
    const grants = new ToolGrantProfile({ file: join(home, 'state', 'grants.json'), extra: config.grants });
    chain.fill('grants', createGrantInterceptor(grants, events));
    const moduleErrors = await loadModules(hub, config, home, options.builtinModulesDir ?? BUILTIN_MODULES_DIR, logger);
    moduleErrors.push(
      ...(await registerMcpServers(hub.registry, config.mcp.servers, { baseDir: home, logger })).errors,
    );
    // The firewall after the grants: a failing admin policy refuses the start (E_INVALID_ARGS).
    firewall = await wireFirewall({
      hub,
      audit: auditLog,
      home,
      workspaceRoots,
      workspaceFor: taskWorkspaces.workspaceFor,
      confidenceOf: taskConfidence.of,
      approvalTimeoutMs: config.firewall.approval_timeout_ms,
      ...(config.firewall.behaviour ? { behaviour: config.firewall.behaviour } : {}),
      ...(config.approvals.answerers ? { answerers: config.approvals.answerers } : {}),
      holdQuotas: holdQuotas(config),
      logger: logger.child({ component: 'firewall' }),
      clock,
      ...(options.gate ? { gate: options.gate } : {}),
      tokenFile,
      ...(env.FINGER_URL ? { urls: [env.FINGER_URL] } : {}),
      // a shell call outside a sandbox outlives its timeout and the kill switch when it detaches
      contained: sandbox.active && !config.sandbox.exempt_modules.includes('shell'),
      // a moderate shell call that stays in the workspace runs at NOTIFY in the workspace-write profile;
      // not in distributed mode: a shell.exec served by another node would not get the profile handed over
      ...(sandbox.workspaceWriteFor('shell') && !config.nats.url
        ? {
            workspaceSandbox: {
              tools: ['shell.exec'],
              channel: sandbox,
              ...(sandboxProxy !== undefined ? { network: 'registries' as const } : {}),
            },
            // opt-in: tree deletes in the workspace run unseen only when the person turned it on
            ...(config.sandbox.undoable_deletes ? { undoSnapshots: { store: undoStore.store } } : {}),
          }
        : {}),
    });
    const fw = firewall;
    teardown.add('front', 'firewall: answer held calls', () => fw.close());
    // holds a kill -9 left unanswered get their resolution (abandoned) before the gate takes new ones
    await settleAbandonedHolds({
      audit: auditLog,
      markerFile: join(home, 'state', 'approvals-settled.json'),
      events,
      logger: logger.child({ component: 'firewall' }),
    });
    // Distributed mode: UserPolicy and session approvals shared with the cluster (Redis).
    if (redis)
      await redis.shareFirewall({
        policy: fw.policy,
        sessions: fw.gate.sessionState,
        standing: fw.gate.standingApprovals,
      });
    chain.fill('firewall', fw.interceptor);
    // Distributed mode: local modules served on NATS, remote ones imported behind the firewall.
    if (config.nats.url) {
      const log = logger.child({ component: 'cluster' });
      // without Redis each daemon keeps its own lockout: halts and unlocks travel with the cluster's events
      const relayHaltsTo = config.redis.url ? undefined : sw.monitor;
      cluster = await wireCluster({
        hub,
        events,
        config,
        home,
        runtimes,
        logger: log,
        clock,
        node,
        ...(relayHaltsTo ? { relayHaltsTo } : {}),
      });
      const joined = cluster;
      teardown.add('drain', 'cluster', () => joined.close());
    }
    // The ingress supervisor: ordinary text is routed by it (offline router when no model is configured).
    const agentsLog = logger.child({ component: 'agents' });
    const agents = await wireAgents({ hub, config, grants, audit: auditLog, logger: agentsLog });
    const gateway = new InputGateway({
      ...{ hub, logger, supervisor: agents.supervisorTarget },
      route_timeout_ms: agents.routeTimeoutMs,
    });
    // after the drain: HTTP requests of calls that outlived it are answered E_PROVIDER_CLOSED
    teardown.add('answer', 'input gateway: answer calls that outlived the drain', () => gateway.close());
    const tasks = wireTasks({
      ...{ hub, events, grants, home, workspaceRoots, config, clock, perception: fw.perception, safety: sw.monitor },
      homeDir: userHome,
      tokenFile,
      audit: auditLog,
      workspaces: taskWorkspaces,
      confidence: taskConfidence,
      scratchpad: (workspace) => scratchpadReader?.(workspace) ?? Promise.resolve(undefined),
      logger: logger.child({ component: 'tasks' }),
    });
    teardown.add('front', 'tasks', () => tasks.close());
    const sessionLimits = {
      ...SESSION_DEFAULTS,
      idle_ms: config.ui.session_idle_ms,
      absolute_ms: config.ui.session_absolute_ms,
      max_sessions: config.ui.max_sessions,
    };
    const sessions = new SessionStore(tokens, sessionLimits, () => clock.now());
    teardown.add('front', 'browser sessions', () => sessions.close());
    const eventGateway = new EventGateway({
      events,
      tokens,
      sessions,
      logger: logger.child({ component: 'ws' }),
      ...config.ws,
      halt: (actor) => sw.monitor.halt({ actor }),
    });
    teardown.add('front', 'event sockets', () => eventGateway.close());
    const counters = new RouteCounters();
    const renderMetrics = () =>
      renderPrometheus([
        ...hubFamilies(hub.stats()),
        ...statsFamilies('finger_events', events.stats(), COUNTER_KEYS.events),
        ...statsFamilies('finger_event_store', store.stats(), COUNTER_KEYS.event_store),
        ...statsFamilies('finger_ws', eventGateway.stats(), COUNTER_KEYS.ws),
        ...counters.families(),
        ...processFamilies(startedAt),
      ]);
    // what health says about FINGER_HOME's storage: the writers that cannot write, a full disk
    const storage = new DiskWatch({
      home,
      sources: [
        { name: 'audit log', failure: () => auditLog.writeFailure() },
        { name: 'safety state', failure: () => sw.writeFailure() },
        ...(logDestination ? [{ name: 'log', failure: () => logDestination.failure() }] : []),
      ],
    });
    const deps = {
      hub,
      tokens,
      storage,
      ...(logDestination ? { logStats: () => logDestination.stats() } : {}),
      gateway,
      eventGateway,
      config,
      grants,
      gate: fw.gate,
      policy: fw.policy,
      engine: fw.engine,
      sandboxRoots: fw.sandbox.defaultRoots,
      audit: auditLog,
      home,
      version: VERSION,
      startedAt,
      renderMetrics,
      safety: sw.monitor,
      tasks,
      // delegated mode: agents' hooks ask for verdicts on calls they run themselves
      delegated: new DelegatedCalls({
        engine: fw.delegatedEngine,
        gate: fw.gate,
        audit: auditLog,
        tools: { metadata: (id) => hub.tools.metadata(id) },
        events,
        safety: sw.monitor,
        // the same role grants as finger's own calls, and the fs module's undo store for backups
        grants,
        backup: undoStore.backup,
      }),
      sandbox: sandbox.status(),
      ...(cluster ? { cluster } : {}),
      ...(redis ? { redis } : {}),
    };
    const fastify = await createServer(
      {
        logger,
        tokens,
        counters,
        version: VERSION,
        isClosing: () => closing !== undefined,
        hosts: hostPolicy(config.server),
        sessions,
        sessionLimits,
        ...(config.ui.dir !== undefined ? { uiDir: resolve(home, config.ui.dir) } : {}),
        now: () => clock.now(),
      },
      deps,
    );
    // stops accepting at the start of the drain; its connections are waited for (1 s at most, then
    // cut) once the input gateway has answered what outlived the drain
    let httpClosed: Promise<void> | undefined;
    teardown.add('drain', 'http: stop accepting', () => {
      httpClosed = fastify.close().catch((e: unknown) => logger.warn({ err: e }, 'http close failed'));
    });
    teardown.add('state', 'http connections', async () => {
      if (httpClosed === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 1000)));
      if ((await Promise.race([httpClosed, grace])) === 'timeout') fastify.server.closeAllConnections();
      clearTimeout(timer);
      await httpClosed;
    });

    const app: FingerApp = {
      fastify,
      hub,
      events,
      config,
      tokens,
      home,
      tokenFile,
      sandbox,
      version: VERSION,
      logger,
      gateway,
      eventGateway,
      sessions,
      grants,
      workspaceRoots,
      moduleErrors,
      audit: auditLog,
      policy: fw.policy,
      engine: fw.engine,
      gate: fw.gate,
      perception: fw.perception,
      safety: sw.monitor,
      tasks,
      ...(cluster ? { cluster } : {}),
      redis,
      async listen() {
        const { host, port } = config.server;
        try {
          await sandboxProxy?.start();
          await fastify.listen({ host, port });
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE')
            throw new FingerError('E_CONFLICT', `cannot listen on ${host}:${port}: port ${port} is already in use`, {
              host,
              port,
            });
          if (code === 'EACCES')
            throw new FingerError('E_FORBIDDEN', `cannot listen on ${host}:${port}: permission denied`, { host, port });
          if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
            throw new FingerError('E_INVALID_ARGS', `cannot listen on ${host}:${port}: address not available`, {
              host,
              port,
            });
          throw e;
        }
        // joined only now: a daemon that cannot bind its port never shows up in the cluster
        await cluster?.start();
        const addr = fastify.server.address() as AddressInfo;
        const url = `http://${urlHost(host)}:${addr.port}`;
        // agents' commands must not reach this address (policy.md, "finger's own home and API")
        firewall?.listening(url, addr.port);
        listeningPort = addr.port;
        const info: DaemonInfo = {
          ...{ pid: process.pid, url, started_at: rfc3339(startedAt), home, version: VERSION },
          token_file: tokenFile,
        };
        daemonFile = join(home, 'daemon.json');
        writeFileAtomic(daemonFile, `${JSON.stringify(info, null, 2)}\n`);
        return { url };
      },
      close() {
        closing ??= teardown.run().finally(() => {
          // whatever failed above: a stopped daemon never leaves its daemon.json behind
          if (daemonFile) removeDaemonFile(daemonFile);
        });
        return closing;
      },
    };
    return app;
  } catch (e) {
    drainMs = 0;
    await teardown.run();
    throw e;
  }
}

/** Removes daemon.json when it still names this process (another daemon may have replaced it). */
function removeDaemonFile(path: string): void {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as Partial<DaemonInfo>;
    if (info.pid === process.pid) unlinkSync(path);
  } catch {
    // already gone
  }
}

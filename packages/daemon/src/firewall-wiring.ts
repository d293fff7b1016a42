// The daemon's firewall composition (§3.8): the parts that come from the daemon's config and
// files — risk assessor, policy store (and its warnings), path sandbox, the standing approvals'
// file — plugged into `createFirewall` (@finger/firewall), which owns when a call is held: the
// engine, the human gate, the interceptor, read-only callers' refusal, the adaptation loop.
// `build()` calls `wireFirewall` after the modules loaded and installs the interceptor after
// the grant interceptor.

import { homedir } from 'node:os';

import {
  type AuditLog,
  type BehaviourOptions,
  createFirewall,
  createShapeResolver,
  FirewallEngine,
  type FirewallInterceptor,
  type HumanGate,
  PathSandbox,
  PerceptionBus,
  PolicyStore,
  RiskAssessor,
  type SandboxProfileChannel,
  StandingApprovals,
} from '@finger/firewall';
import type { Clock, MessageHub } from '@finger/hub';
import { FingerError, isFingerError, type Principal } from '@finger/protocol';

import { type PolicyWarning, PolicyWarningLog } from './policy-warning-log.js';
import { persistStandingApprovals, standingApprovalsPath } from './standing-approvals-file.js';

/**
 * Who runs the read-only `fs.backups` for a viewer (`GET /v1/backups`): viewers may read the list
 * over HTTP but may run no tool, so the daemon runs it for them.
 */
export const BACKUPS_READER: Principal = { kind: 'system', id: 'daemon:backups', roles: [] };

/**
 * The principals that act for a read-only caller: their calls are never held for a person (a
 * viewer cannot be "asked for", and their holds would only fill the approval queue). A call the
 * firewall would hold is refused at once with E_FORBIDDEN; nothing enters the queue.
 */
const READ_ONLY_CALLERS = new Set([`${BACKUPS_READER.kind}:${BACKUPS_READER.id}`]);

/** True for a principal acting for a read-only caller ({@link READ_ONLY_CALLERS}). */
export function isReadOnlyCaller(p: Principal): boolean {
  return READ_ONLY_CALLERS.has(`${p.kind}:${p.id}`);
}

/** The logging surface the wiring needs (pino satisfies it). */
interface WiringLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** What {@link wireFirewall} needs. */
export interface FirewallWiringOptions {
  hub: MessageHub;
  audit: AuditLog;
  home: string;
  workspaceRoots: readonly string[];
  /** A supervised task's own workspace root, by the principal the hub carries (TaskWorkspaces.workspaceFor). */
  workspaceFor?: (principal: Principal) => string | undefined;
  /** The model's confidence for a supervised task's current step, by the principal the hub carries (TaskConfidence.of). */
  confidenceOf?: (principal: Principal) => number | undefined;
  approvalTimeoutMs: number;
  /** Config `firewall.behaviour`: the behaviour layer's rate limits (absent keys: its defaults). */
  behaviour?: Partial<BehaviourOptions>;
  /** Config `approvals.answerers`: only these token names may answer held calls (absent: any admin/operator). */
  answerers?: readonly string[];
  /** Config `approvals.max_pending`, `max_pending_per_principal`, `human_reserve` (holdQuotas of config.ts). */
  holdQuotas?: { max_pending: number; max_pending_per_principal: number; human_reserve: number };
  logger: WiringLogger;
  clock?: Clock;
  /** A gate to use instead of a HumanGate built here (tests). */
  gate?: HumanGate;
  /** The admin token file (wherever it lives): forbidden to agents as finger's home is. */
  tokenFile?: string;
  /** URLs of this daemon besides its listening address (`FINGER_URL`): requests to them are forbidden to agents. */
  urls?: readonly string[];
  /**
   * Whether an OS sandbox contains every shell call (default true): false makes a detaching
   * command (`setsid`, `nohup`, `&`…) APPROVE.
   */
  contained?: boolean;
  /**
   * Where the sandbox's workspace-write profile can run for the shell module: a `moderate`
   * command of `tools` that stays in the workspace and needs no network is NOTIFY instead of
   * CONFIRM, and runs in that profile (`channel`, the daemon's Sandbox, hands it to the module).
   */
  workspaceSandbox?: {
    tools: readonly string[];
    channel: SandboxProfileChannel;
    /** `registries`: the profile reaches the package registries through the daemon's filtering proxy. */
    network?: 'registries';
  };
  /**
   * With `workspaceSandbox`: the undo store (its directory) where the shell module hard-links what
   * `rm -r`, `find -delete` and `git clean` delete, so those run in the profile too (undo-wiring.ts).
   */
  undoSnapshots?: { store: string };
}

/** The wired firewall parts the daemon exposes. */
export interface FirewallWiring {
  policy: PolicyStore;
  engine: FirewallEngine;
  /**
   * The engine for delegated calls (agents' hooks): the same policy, assessor and sandbox, without
   * the workspace-write lowering — what a delegated agent runs is outside finger's sandbox.
   */
  delegatedEngine: FirewallEngine;
  gate: HumanGate;
  perception: PerceptionBus;
  sandbox: PathSandbox;
  interceptor: FirewallInterceptor;
  /**
   * The daemon listens at `url` (port `port`): a request an agent's command sends there — in any
   * loopback spelling — is forbidden from now on (a configured port 0 is known only now).
   */
  listening(url: string, port: number): void;
  /** Waits for pending adaptation changes (tests, shutdown). */
  settled(): Promise<void>;
  /** True for a refusal the person said was not the agent's fault (it does not feed the denial breaker). */
  excused(error: unknown): boolean;
  /** Stops the adaptation and closes the gate (pending approvals are rejected). */
  close(): Promise<void>;
}

/**
 * Loads the policy (a failing admin policy refuses the start with E_INVALID_ARGS naming the file
 * and each problem), builds the engine and the gate, and subscribes the adaptation to
 * APPROVAL_RESOLVED: 3 consecutive human rejections of a tool escalate it in the UserPolicy,
 * consecutive approvals revert that (each change audited by the PolicyStore).
 */
export async function wireFirewall(o: FirewallWiringOptions): Promise<FirewallWiring> {
  // finger's own home, token file, daemon and CLI are forbidden to agents (policy.md, "finger's own home and API")
  const assessor = await RiskAssessor.create({
    finger_home: o.home,
    home_dir: homedir(),
    ...(o.tokenFile !== undefined ? { guarded_paths: [o.tokenFile] } : {}),
    workspace_roots: o.workspaceRoots,
    daemon: { pid: process.pid, ...(o.urls !== undefined ? { urls: o.urls } : {}) },
    contained: o.contained !== false,
  });
  const knownTools = () =>
    o.hub.tools
      .list()
      .map((t) => (t.input_schema !== undefined ? { id: t.id, input_schema: t.input_schema } : { id: t.id }));
  const tools = knownTools();
  let policy: PolicyStore;
  try {
    policy = PolicyStore.load({ home: o.home, assessor, homeDir: homedir(), tools, audit: o.audit });
  } catch (e) {
    if (!isFingerError(e)) throw e;
    const d = (e.details ?? {}) as { source?: string; issues?: { path: string; message: string }[] };
    // an issue the message already states (a file's JSON syntax error) is not repeated
    const issues = (d.issues ?? [])
      .filter((i) => !e.message.includes(i.message))
      .map((i) => `${i.path}: ${i.message}`)
      .join('; ');
    throw new FingerError(
      e.code,
      `the policy refuses to load, so the daemon does not start: ${e.message}${issues && !e.message.includes(issues) ? ` (${issues})` : ''}`,
      e.details,
      { cause: e },
    );
  }
  const warnings = new PolicyWarningLog((w) =>
    o.logger.warn({ layer: w.layer, rule: w.rule }, `policy warning: ${w.message}`),
  );
  const warn = (ws: readonly PolicyWarning[]): void => void warnings.report(ws);
  warn(policy.warnings());
  // modules registered later (HTTP, MCP) change which rules can match: keep the warnings current
  o.hub.registry.onChange(() => {
    try {
      warn(policy.setTools(knownTools()));
    } catch (e) {
      o.logger.warn({ err: e }, 'policy warnings could not be refreshed');
    }
  });
  const sandbox = new PathSandbox({
    workspaceRoots: o.workspaceRoots,
    home: o.home,
    ...(o.tokenFile !== undefined ? { guarded_paths: [o.tokenFile] } : {}),
    homeDir: homedir(),
    ...(o.workspaceFor ? { workspaceFor: o.workspaceFor } : {}),
  });
  const delegatedEngine = new FirewallEngine({
    policy,
    risk: assessor,
    sandbox,
    ...(o.behaviour ? { behaviour: o.behaviour } : {}),
  });
  const perception = new PerceptionBus(o.clock ? { clock: o.clock } : {});
  // what `always` leaves behind: a standing approval of the held call's shape; persistent ones survive a restart
  const standing = new StandingApprovals();
  const stopPersisting = persistStandingApprovals(standing, standingApprovalsPath(o.home), {
    now: () => (o.clock ? o.clock.now() : Date.now()),
    warn: (obj, msg) => o.logger.warn(obj, msg),
  });
  const shapes = createShapeResolver({
    assess: (command, context) => assessor.assess(command, context),
    sandbox,
    isShellTool: (id) => policy.current().admin.shellTools(id),
    homeDir: homedir(),
  });
  const firewall = createFirewall({
    policy,
    engine: {
      risk: assessor,
      sandbox,
      // the hub runs on the same clock: the engine takes the time the hub read for each call
      ...(o.clock ? { clock: o.clock, time_from_call: true } : {}),
      ...(o.behaviour ? { behaviour: o.behaviour } : {}),
      ...(o.workspaceSandbox
        ? {
            workspace_sandbox: {
              tools: o.workspaceSandbox.tools,
              ...(o.workspaceSandbox.network !== undefined ? { network: o.workspaceSandbox.network } : {}),
            },
          }
        : {}),
      ...(o.workspaceSandbox && o.undoSnapshots ? { undo_snapshots: o.undoSnapshots } : {}),
    },
    events: o.hub.events,
    audit: o.audit,
    tools: { get: (id) => o.hub.tools.metadata(id) },
    ...(o.confidenceOf ? { confidenceOf: o.confidenceOf } : {}),
    ...(o.workspaceSandbox ? { sandboxProfiles: o.workspaceSandbox.channel } : {}),
    approvals: {
      shapes,
      timeout_ms: o.approvalTimeoutMs,
      ...(o.answerers ? { answerers: o.answerers } : {}),
      ...o.holdQuotas,
    },
    ...(o.gate ? { gate: o.gate } : {}),
    perception,
    standing,
    readOnly: isReadOnlyCaller,
    logger: o.logger,
  });

  return {
    policy,
    engine: firewall.engine,
    delegatedEngine,
    gate: firewall.gate,
    perception,
    sandbox,
    interceptor: firewall.interceptor,
    listening(url, port) {
      assessor.setDaemon({ ports: [port], pid: process.pid, urls: [url, ...(o.urls ?? [])] });
    },
    settled: () => firewall.settled(),
    excused: (error) => firewall.excused(error),
    async close() {
      stopPersisting();
      await firewall.close();
    },
  };
}

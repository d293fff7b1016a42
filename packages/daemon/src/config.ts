// The daemon's configuration: its shape (DaemonConfig) and defaults, `config/config.json` read from
// FINGER_HOME, the FINGER_* environment overrides, merged in that order and checked against the
// schema in config-schema.ts at each step; and the limits the firewall derives from it.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

import {
  BEHAVIOUR_DEFAULTS,
  DEFAULT_HUMAN_RESERVE_SHARE,
  DEFAULT_MAX_PENDING,
  DEFAULT_MAX_PENDING_PER_PRINCIPAL,
  SAFETY_DEFAULTS,
  type SafetyConfig,
} from '@finger/firewall';
import { DEFAULT_LIMITS, type SandboxMode } from '@finger/hub';
import { FingerError, type ValidationIssue } from '@finger/protocol';

import { allowIssues, checkConfig, LOG_LEVELS, redisUrlIssue } from './config-schema.js';

export { configSchema, LOG_LEVELS } from './config-schema.js';

export type LogLevel = (typeof LOG_LEVELS)[number];

/** The daemon configuration after defaults, `config.json`, env and overrides are merged (§3.13). */
export interface DaemonConfig {
  server: {
    host: string;
    port: number;
    /**
     * Host names a request may carry besides the loopback ones and `host` (DNS-rebinding guard).
     * On loopback every other name is refused; elsewhere names are checked only when this is set.
     */
    allowed_hosts: string[];
  };
  log: { level: LogLevel };
  modules: {
    paths: string[];
    builtin: boolean;
    /** Operator settings per module id, merged over the daemon's (`home`, `workspace_roots`, `backups_dir`). */
    settings: Record<string, Record<string, unknown>>;
  };
  /**
   * Directories the daemon's agents (file and shell tools) work in: `~/…` and relative entries
   * resolve against the user's home directory; each is created at start (0700). A root equal to
   * or inside FINGER_HOME, or holding the admin token file, refuses the start (E_INVALID_ARGS).
   */
  workspace: { roots: string[] };
  /**
   * Where the daemon writes (and the CLI reads) the admin token: `~/…` against the user's home,
   * a relative path against FINGER_HOME; `FINGER_TOKEN_FILE`. Absent: `FINGER_HOME/token`.
   */
  token_file?: string;
  /**
   * Who may answer held calls. `answerers`: token names (`myfinger token list`); when set, only
   * those tokens (with an admin or operator role) may answer, others get 403 E_FORBIDDEN
   * `{reason: "not_an_answerer"}`. Absent: every admin and operator token.
   * Hold quotas (see {@link holdQuotas}): `max_pending` calls held at once in all (default 1000),
   * `max_pending_per_principal` of one token (default 100), `human_reserve` places of
   * `max_pending` only people's own calls may take (default a tenth of `max_pending`; must be
   * below it). Past a bound the call is refused at once with E_OVERLOADED naming it.
   */
  approvals: {
    answerers?: string[];
    max_pending?: number;
    max_pending_per_principal?: number;
    human_reserve?: number;
  };
  /** Tool registry: which module wins when several offer the same tool name (first listed wins). */
  tools: { preferred_provider_order: string[] };
  /** Extra tool-id globs granted to each agent role, on top of the built-in defaults. */
  grants: { supervisor?: string[]; executor?: string[]; reviewer?: string[] };
  /**
   * MCP servers used as tool providers, each a module `mcp.<name>` (entries: `McpServerConfig`
   * of @finger/hub). Entries are checked one by one at start: bad or duplicate ones are skipped
   * with a warning (and listed in `moduleErrors`), the others load. `hold_ms`: how long one
   * tools/call on the `/mcp` gateway waits for a person before it answers "held" (default 45 s,
   * below the 60 s request timeout of MCP clients).
   */
  mcp: { servers: unknown[]; hold_ms?: number };
  /**
   * Delegated mode (`myfinger hook <agent>`): how long a hook's request waits for a person before
   * it answers "pending", per agent — below the hook timeout `myfinger hook install` sets (600 s
   * for Claude Code and Codex, 60 s for Cursor and Copilot), capped at 540 s and 50 s. A hook's own
   * `--hold-ms` wins when it is lower.
   */
  hooks: { hold_ms: { claude: number; codex: number; cursor: number; copilot: number } };
  /** Overrides of the hub's limits (`HubLimits`); absent keys keep the hub defaults. */
  hub: {
    max_nesting_depth?: number;
    default_timeout_ms?: number;
    default_lease_ms?: number;
    idempotency_window_ms?: number;
    max_results?: number;
    result_ttl_ms?: number;
    lease_sweep_ms?: number;
    default_concurrency?: number;
  };
  /** Event store bounds; absent keys keep the store defaults. */
  events: { max_segment_bytes?: number; max_segments?: number; compress_closed?: boolean };
  ws: {
    max_buffered_events: number;
    max_buffered_bytes: number;
    /** Bytes a client may fall behind before it is cut off (close 4008); 0: never. */
    max_slow_bytes: number;
    /** WebSocket clients open at once (over it: close 4429); 0: no limit. */
    max_sockets: number;
    /** WebSocket clients open at once per token (over it: close 4429); 0: no limit. */
    max_sockets_per_token: number;
    heartbeat_ms: number;
    auth_timeout_ms: number;
  };
  /**
   * The web console: browser sessions end `session_idle_ms` after their last use and
   * `session_absolute_ms` after sign-in; at most `max_sessions` are held (the least recently used
   * ends first). `dir`: the built app served under /ui (default packages/web/dist).
   */
  ui: { session_idle_ms: number; session_absolute_ms: number; max_sessions: number; dir?: string };
  shutdown: { drain_ms: number };
  /**
   * The OS boundary of AI-initiated processes (shell commands, stdio/MCP module children):
   * bubblewrap with FINGER_HOME, the token file and the credential places masked. `auto` sandboxes
   * where it can and warns where it cannot; `required` refuses the start without one
   * (E_NO_SANDBOX); `off` never sandboxes. `exempt_modules`: module ids whose children the operator
   * runs unsandboxed. `network.allow`: what the workspace-write profile may reach through the
   * daemon's filtering proxy — `"registries"` (the public package registries, @finger/hub's
   * PACKAGE_REGISTRIES) and/or `host`, `host:port`, `ip:port` entries; empty (the default): no
   * network there. With it, installs from the lock file or manifest run sandboxed at NOTIFY.
   */
  sandbox: { mode: SandboxMode; exempt_modules: string[]; network: { allow: string[] }; undoable_deletes: boolean };
  /**
   * The firewall: how long a held call waits for a person before it is rejected
   * (E_APPROVAL_TIMEOUT), and the behaviour layer's rate limits (absent keys keep its defaults:
   * the same call more than 5 times — 3 at low confidence — in 60 s → APPROVE; the same call
   * shape more than 20 times → CONFIRM, counted for the principal kinds in `volume_kinds`,
   * default agents and modules).
   */
  firewall: {
    approval_timeout_ms: number;
    behaviour?: {
      window_ms?: number;
      max_repeats?: number;
      max_repeats_low_confidence?: number;
      max_tool_calls?: number;
      volume_kinds?: string[];
      low_confidence?: number;
      low_confidence_run?: number;
    };
  };
  /** Circuit breakers and budgets of the SafetyMonitor (§3.8). */
  safety: SafetyConfig;
  /** The model behind the router and the executor (§3.13); `offline` when none is configured. */
  llm: {
    provider: 'offline' | 'openai' | 'anthropic';
    base_url?: string;
    api_key?: string;
    model?: string;
    /** Model for reflect/compress/plan; the primary model when absent. */
    secondary_model?: string;
    /** Transport retries (408/409/429/5xx); guardrail re-asks are `router.max_retries`. */
    max_retries: number;
    /** A retry-after above this fails at once with E_LLM_UNAVAILABLE. */
    max_retry_wait_ms: number;
    timeout_ms: number;
    /** Prices per million tokens, for cost estimates. */
    prices?: { input_per_mtok?: number; output_per_mtok?: number };
  };
  /** The ingress router: guardrail re-asks and the confidence below which a person decides. */
  router: { max_retries: number; min_confidence: number };
  /** Distributed messaging (§3.14); absent `url` = in-process only. See docs/operations.md. */
  nats: {
    url?: string;
    /** HMAC key authenticating envelopes between daemons (or `cluster_key_file`, or FINGER_CLUSTER_KEY). */
    cluster_key?: string;
    cluster_key_file?: string;
    /** NATS credentials: token, user/pass, creds file (JWT + nkey), nkey seed file; TLS files. */
    token?: string;
    user?: string;
    pass?: string;
    creds_file?: string;
    nkey_seed_file?: string;
    tls?: { ca_file?: string; cert_file?: string; key_file?: string };
    /** Registry heartbeat period; a silent node's modules turn unhealthy after `unhealthy_after_ms`. */
    heartbeat_ms?: number;
    unhealthy_after_ms?: number;
  };
  /** Distributed shared state (§3.14); absent `url` = memory/file stores. */
  redis: { url?: string };
  /** Cluster name: NATS subject segment and Redis key prefix. */
  cluster: string;
}

/** A partial config, as found in `config.json` or given as build overrides. */
export type DaemonConfigInput = {
  [K in keyof DaemonConfig]?: DaemonConfig[K] extends object ? Partial<DaemonConfig[K]> : DaemonConfig[K];
};

/** Defaults used for every key that neither the file, the env nor an override sets. */
export const DEFAULT_CONFIG: DaemonConfig = {
  server: { host: '127.0.0.1', port: 7770, allowed_hosts: [] },
  log: { level: 'info' },
  modules: { paths: [], builtin: true, settings: {} },
  workspace: { roots: ['~/finger-workspace'] },
  approvals: {},
  tools: { preferred_provider_order: [] },
  grants: {},
  mcp: { servers: [] },
  hooks: { hold_ms: { claude: 240_000, codex: 240_000, cursor: 45_000, copilot: 45_000 } },
  hub: {},
  events: {},
  ws: {
    max_buffered_events: 1000,
    max_buffered_bytes: 1 << 20,
    max_slow_bytes: 8 << 20,
    max_sockets: 1000,
    max_sockets_per_token: 64,
    heartbeat_ms: 30_000,
    auth_timeout_ms: 5000,
  },
  ui: { session_idle_ms: 8 * 3_600_000, session_absolute_ms: 24 * 3_600_000, max_sessions: 256 },
  shutdown: { drain_ms: 10_000 },
  sandbox: { mode: 'auto', exempt_modules: [], network: { allow: [] }, undoable_deletes: false },
  firewall: { approval_timeout_ms: 300_000, behaviour: behaviourDefaults() },
  safety: { ...SAFETY_DEFAULTS },
  llm: { provider: 'offline', max_retries: 2, max_retry_wait_ms: 60_000, timeout_ms: 120_000 },
  router: { max_retries: 2, min_confidence: 0.5 },
  nats: {},
  redis: {},
  cluster: 'default',
};

/** The environment variable behind each config path `envOverrides` sets. */
const ENV_OF_PATH: Record<string, string> = {
  '$.server.host': 'FINGER_HOST',
  '$.server.port': 'FINGER_PORT',
  '$.nats.url': 'FINGER_NATS_URL',
  '$.nats.cluster_key': 'FINGER_CLUSTER_KEY',
  '$.redis.url': 'FINGER_REDIS_URL',
  '$.token_file': 'FINGER_TOKEN_FILE',
  '$.cluster': 'FINGER_CLUSTER',
  '$.llm.provider': 'FINGER_LLM_PROVIDER',
  '$.llm.base_url': 'FINGER_LLM_BASE_URL',
  '$.llm.api_key': 'FINGER_LLM_API_KEY',
  '$.llm.model': 'FINGER_LLM_MODEL',
};

function invalid(source: string, issues: ValidationIssue[]): FingerError {
  const summary = issues.map((i) => `${source}: ${i.path} ${i.message}`).join('; ');
  return new FingerError('E_INVALID_ARGS', `invalid configuration: ${summary}`, { source, issues });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function envInt(env: Record<string, string | undefined>, name: string, issues: ValidationIssue[]): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw.trim())) {
    issues.push({ path: name, message: `must be an integer, got ${JSON.stringify(raw)}` });
    return undefined;
  }
  return Number(raw.trim());
}

/** Reads the `FINGER_*` overrides of `env` into a partial config (never touches `process.env`). */
export function envOverrides(env: Record<string, string | undefined>): DaemonConfigInput {
  const issues: ValidationIssue[] = [];
  const out: DaemonConfigInput = {};
  const host = env.FINGER_HOST;
  const port = envInt(env, 'FINGER_PORT', issues);
  if ((host !== undefined && host !== '') || port !== undefined) {
    out.server = {};
    if (host !== undefined && host !== '') out.server.host = host;
    if (port !== undefined) out.server.port = port;
  }
  const level = env.FINGER_LOG_LEVEL;
  if (level !== undefined && level !== '') {
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      issues.push({ path: 'FINGER_LOG_LEVEL', message: `must be one of ${LOG_LEVELS.join(', ')}` });
    } else out.log = { level: level as LogLevel };
  }
  const paths = env.FINGER_MODULE_PATHS;
  if (paths !== undefined && paths !== '') out.modules = { paths: paths.split(delimiter).filter(Boolean) };
  const llm: Record<string, string> = {};
  for (const [name, key] of [
    ['FINGER_LLM_PROVIDER', 'provider'],
    ['FINGER_LLM_BASE_URL', 'base_url'],
    ['FINGER_LLM_API_KEY', 'api_key'],
    ['FINGER_LLM_MODEL', 'model'],
  ] as const) {
    const v = env[name];
    if (v !== undefined && v !== '') llm[key] = v;
  }
  if (Object.keys(llm).length) out.llm = llm as DaemonConfigInput['llm'];
  if (env.FINGER_NATS_URL || env.FINGER_CLUSTER_KEY) {
    out.nats = {};
    if (env.FINGER_NATS_URL) out.nats.url = env.FINGER_NATS_URL;
    if (env.FINGER_CLUSTER_KEY) out.nats.cluster_key = env.FINGER_CLUSTER_KEY;
  }
  if (env.FINGER_REDIS_URL) {
    issues.push(...redisUrlIssue(env.FINGER_REDIS_URL, 'FINGER_REDIS_URL'));
    out.redis = { url: env.FINGER_REDIS_URL };
  }
  if (env.FINGER_CLUSTER) out.cluster = env.FINGER_CLUSTER;
  if (env.FINGER_TOKEN_FILE) out.token_file = env.FINGER_TOKEN_FILE;
  if (issues.length) throw invalid('env', issues);
  return out;
}

function merge(base: DaemonConfig, input: DaemonConfigInput): DaemonConfig {
  const out = structuredClone(base) as unknown as Record<string, Record<string, unknown>>;
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (!isPlainObject(value)) {
      (out as Record<string, unknown>)[key] = value;
      continue;
    }
    const target = (out[key] ??= {});
    for (const [k, v] of Object.entries(value)) if (v !== undefined) target[k] = v;
  }
  return out as unknown as DaemonConfig;
}

/**
 * Merges defaults < `config.json` < env (`FINGER_HOST`, `FINGER_PORT`, `FINGER_LOG_LEVEL`,
 * `FINGER_MODULE_PATHS`, `FINGER_LLM_{PROVIDER,BASE_URL,API_KEY,MODEL}`, `FINGER_NATS_URL`,
 * `FINGER_CLUSTER_KEY`, `FINGER_REDIS_URL`, `FINGER_CLUSTER`, `FINGER_TOKEN_FILE`) < `overrides`. Pure. Throws E_INVALID_ARGS whose message names each bad
 * key path (`config.json: $.server.port must be integer`) and whose `details.issues` lists them.
 */
export function resolveConfig(
  fileJson: unknown,
  env: Record<string, string | undefined> = {},
  overrides: DaemonConfigInput = {},
): DaemonConfig {
  const file = fileJson ?? {};
  const redisUrlOf = (input: unknown) =>
    isPlainObject(input) && isPlainObject(input.redis) ? input.redis.url : undefined;
  const fileIssues = checkConfig(file);
  if (!fileIssues.length) fileIssues.push(...redisUrlIssue(redisUrlOf(file), '$.redis.url'));
  if (fileIssues.length) throw invalid('config.json', fileIssues);
  const fromEnv = envOverrides(env);
  // a bad value from the environment is named by its variable, not by a config path
  const envIssues = checkConfig(fromEnv).map((i) => ({ path: ENV_OF_PATH[i.path] ?? i.path, message: i.message }));
  if (envIssues.length) throw invalid('env', envIssues);
  const overrideIssues = checkConfig(overrides);
  if (!overrideIssues.length) overrideIssues.push(...redisUrlIssue(redisUrlOf(overrides), '$.redis.url'));
  if (overrideIssues.length) throw invalid('overrides', overrideIssues);
  const { $schema: _ignored, ...fileConfig } = file as DaemonConfigInput & { $schema?: string };
  const merged = merge(merge(merge(DEFAULT_CONFIG, fileConfig), fromEnv), overrides);
  const finalIssues = checkConfig(merged);
  if (!finalIssues.length) finalIssues.push(...allowIssues(merged.sandbox.network.allow));
  if (finalIssues.length) throw invalid('config', finalIssues);
  return merged;
}

/**
 * FINGER_HOME: the explicit option, else `env.FINGER_HOME`, else `~/.finger`. Returns an absolute path.
 */
export function resolveHome(option: string | undefined, env: Record<string, string | undefined> = {}): string {
  if (option) return resolve(option);
  if (env.FINGER_HOME) return resolve(env.FINGER_HOME);
  return join(homedir(), '.finger');
}

/** Path of `config.json` under a FINGER_HOME. */
export function configPath(home: string): string {
  return join(home, 'config', 'config.json');
}

/**
 * Reads and parses `FINGER_HOME/config/config.json`; an absent file is `undefined` (defaults).
 * Throws E_INVALID_ARGS when the file is not valid JSON.
 */
export function readConfigFile(home: string): unknown {
  const path = configPath(home);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FingerError('E_INVALID_ARGS', `cannot read ${path}: ${(e as Error).message}`, { source: 'config.json' });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `config.json: not valid JSON (${(e as Error).message})`, {
      source: 'config.json',
      issues: [{ path: '$', message: `is not valid JSON: ${(e as Error).message}` }],
    });
  }
}

/** The behaviour layer's rate limits that config `firewall.behaviour` may set, at their defaults. */
function behaviourDefaults(): NonNullable<DaemonConfig['firewall']['behaviour']> {
  const b = BEHAVIOUR_DEFAULTS;
  return {
    window_ms: b.window_ms,
    max_repeats: b.max_repeats,
    max_repeats_low_confidence: b.max_repeats_low_confidence,
    max_tool_calls: b.max_tool_calls,
    volume_kinds: [...b.volume_kinds],
    low_confidence: b.low_confidence,
    low_confidence_run: b.low_confidence_run,
  };
}

/**
 * The limits in force under `config` that decide how often an agent is stopped or asked: the
 * denial breaker (`safety.denial_*`) and the behaviour layer's rate limits (`firewall.behaviour`,
 * defaults filled in). Shown by `myfinger doctor`.
 */
export function firewallLimits(config: DaemonConfig): {
  denial: Pick<SafetyConfig, 'denial_consecutive' | 'denial_threshold' | 'denial_window'>;
  behaviour: Required<NonNullable<DaemonConfig['firewall']['behaviour']>>;
  holds: ReturnType<typeof holdQuotas>;
} {
  return {
    holds: holdQuotas(config),
    denial: {
      denial_consecutive: config.safety.denial_consecutive,
      denial_threshold: config.safety.denial_threshold,
      denial_window: config.safety.denial_window,
    },
    behaviour: { ...behaviourDefaults(), ...config.firewall.behaviour } as Required<
      NonNullable<DaemonConfig['firewall']['behaviour']>
    >,
  };
}

/** The hold quotas in force under `config` (`approvals.*`, defaults filled in): what the HumanGate gets and doctor shows. */
export function holdQuotas(config: Pick<DaemonConfig, 'approvals'>): {
  max_pending: number;
  max_pending_per_principal: number;
  human_reserve: number;
} {
  const a = config.approvals;
  const max_pending = a.max_pending ?? DEFAULT_MAX_PENDING;
  return {
    max_pending,
    max_pending_per_principal: a.max_pending_per_principal ?? DEFAULT_MAX_PENDING_PER_PRINCIPAL,
    human_reserve: a.human_reserve ?? Math.floor(max_pending * DEFAULT_HUMAN_RESERVE_SHARE),
  };
}

/** The example config (`config/config.example.json`): every key with its default value. */
export function exampleConfig(): Record<string, unknown> {
  return {
    server: DEFAULT_CONFIG.server,
    log: DEFAULT_CONFIG.log,
    modules: DEFAULT_CONFIG.modules,
    workspace: DEFAULT_CONFIG.workspace,
    token_file: 'token',
    approvals: holdQuotas(DEFAULT_CONFIG),
    tools: DEFAULT_CONFIG.tools,
    grants: DEFAULT_CONFIG.grants,
    mcp: DEFAULT_CONFIG.mcp,
    hooks: DEFAULT_CONFIG.hooks,
    hub: { ...DEFAULT_LIMITS },
    events: { max_segment_bytes: 4 * 1024 * 1024, max_segments: 16, compress_closed: true },
    ws: DEFAULT_CONFIG.ws,
    ui: DEFAULT_CONFIG.ui,
    shutdown: DEFAULT_CONFIG.shutdown,
    sandbox: DEFAULT_CONFIG.sandbox,
    firewall: DEFAULT_CONFIG.firewall,
    safety: DEFAULT_CONFIG.safety,
    llm: DEFAULT_CONFIG.llm,
    router: DEFAULT_CONFIG.router,
    nats: DEFAULT_CONFIG.nats,
    redis: DEFAULT_CONFIG.redis,
    cluster: DEFAULT_CONFIG.cluster,
  };
}

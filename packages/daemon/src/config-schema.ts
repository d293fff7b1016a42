// The contract of `config/config.json`: its JSON Schema (every object rejects unknown keys) and the
// checks the schema cannot say (a Redis URL's form, `sandbox.network.allow` entries), with issues
// worded for a person. config.ts merges and resolves what passes.

import { GRANT_GLOB_PATTERN } from '@finger/firewall';
import { NATS_URLS, parseAllowEntry, REDIS_URL_FORM, redisUrlProblem } from '@finger/hub';
import { compileChecker, createAjv, type ValidationIssue } from '@finger/protocol';

/** Log levels accepted by `log.level` / `FINGER_LOG_LEVEL`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * An entry of `server.allowed_hosts`: a DNS name (`finger.example.lan`), an IPv4 address, or an
 * IPv6 address with or without brackets; no port, no wildcard.
 */
const ALLOWED_HOST_PATTERN =
  /^(\[?[0-9A-Fa-f]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]?|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$/;
const POS_INT = { type: 'integer', minimum: 1 } as const;
/** Node's timers take at most 2^31 − 1 ms (a larger delay fires at once, with a TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;
/** A duration in ms from `minimum` up to what a timer can wait. */
const ms = (minimum: number, maximum = MAX_TIMER_MS) => ({ type: 'integer', minimum, maximum }) as const;
const section = (properties: Record<string, object>) => ({ type: 'object', additionalProperties: false, properties });
const STRINGS = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
/** A token name, as `myfinger token create --name` accepts it. */
const TOKEN_NAME_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,63}$';
const GLOBS = { type: 'array', items: { type: 'string', pattern: GRANT_GLOB_PATTERN.source } } as const;

/** JSON Schema of `config/config.json`; every object rejects unknown keys. */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    server: section({
      host: { type: 'string', minLength: 1 },
      port: { type: 'integer', minimum: 0, maximum: 65535 },
      allowed_hosts: {
        type: 'array',
        items: { type: 'string', maxLength: 253, pattern: ALLOWED_HOST_PATTERN.source },
        uniqueItems: true,
      },
    }),
    log: section({ level: { enum: [...LOG_LEVELS] } }),
    modules: section({
      paths: { type: 'array', items: { type: 'string', minLength: 1 } },
      builtin: { type: 'boolean' },
      settings: {
        type: 'object',
        propertyNames: { pattern: '^[a-z0-9][a-z0-9_.-]{0,127}$' },
        additionalProperties: { type: 'object' },
      },
    }),
    workspace: section({ roots: { ...STRINGS, minItems: 1 } }),
    token_file: { type: 'string', minLength: 1 },
    approvals: section({
      answerers: {
        type: 'array',
        items: { type: 'string', pattern: TOKEN_NAME_PATTERN },
        minItems: 1,
        uniqueItems: true,
      },
      max_pending: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      max_pending_per_principal: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      human_reserve: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    }),
    tools: section({ preferred_provider_order: { ...STRINGS, uniqueItems: true } }),
    grants: section({ supervisor: GLOBS, executor: GLOBS, reviewer: GLOBS }),
    mcp: section({ servers: { type: 'array' }, hold_ms: ms(0, 540_000) }),
    hooks: section({
      hold_ms: section({
        claude: ms(0, 540_000),
        codex: ms(0, 540_000),
        cursor: ms(0, 50_000),
        copilot: ms(0, 50_000),
      }),
    }),
    hub: section({
      max_nesting_depth: { type: 'integer', minimum: 1, maximum: 64 },
      default_timeout_ms: ms(1),
      default_lease_ms: ms(1),
      idempotency_window_ms: ms(0),
      max_results: POS_INT,
      result_ttl_ms: ms(1),
      lease_sweep_ms: ms(1),
      default_concurrency: POS_INT,
    }),
    events: section({
      max_segment_bytes: { type: 'integer', minimum: 1024 },
      max_segments: POS_INT,
      compress_closed: { type: 'boolean' },
    }),
    ws: section({
      max_buffered_events: POS_INT,
      max_buffered_bytes: { type: 'integer', minimum: 1024 },
      max_slow_bytes: { type: 'integer', minimum: 0 },
      max_sockets: { type: 'integer', minimum: 0 },
      max_sockets_per_token: { type: 'integer', minimum: 0 },
      heartbeat_ms: ms(100, 600_000),
      auth_timeout_ms: ms(10),
    }),
    ui: section({
      session_idle_ms: ms(1000),
      session_absolute_ms: ms(1000),
      max_sessions: { type: 'integer', minimum: 1, maximum: 100_000 },
      dir: { type: 'string', minLength: 1 },
    }),
    shutdown: section({ drain_ms: ms(0) }),
    sandbox: section({
      mode: { enum: ['auto', 'required', 'off'] },
      exempt_modules: { ...STRINGS, uniqueItems: true },
      network: section({
        allow: {
          type: 'array',
          items: { type: 'string', minLength: 1, maxLength: 262 },
          maxItems: 256,
          uniqueItems: true,
        },
      }),
      undoable_deletes: { type: 'boolean' },
    }),
    firewall: section({
      approval_timeout_ms: POS_INT,
      behaviour: section({
        window_ms: ms(1000, 86_400_000),
        max_repeats: POS_INT,
        max_repeats_low_confidence: POS_INT,
        max_tool_calls: POS_INT,
        volume_kinds: {
          type: 'array',
          items: { enum: ['human', 'agent', 'module', 'system'] },
          uniqueItems: true,
        },
        low_confidence: { type: 'number', minimum: 0, maximum: 1 },
        low_confidence_run: POS_INT,
      }),
    }),
    safety: section({
      max_token_usage: POS_INT,
      max_steps: POS_INT,
      max_task_ms: ms(1),
      repeat_failure_threshold: POS_INT,
      error_window: POS_INT,
      error_threshold: POS_INT,
      denial_consecutive: POS_INT,
      denial_window: POS_INT,
      denial_threshold: POS_INT,
      halt_grace_ms: ms(0),
    }),
    llm: section({
      provider: { enum: ['offline', 'openai', 'anthropic'] },
      base_url: { type: 'string', pattern: '^https?://' },
      api_key: { type: 'string' },
      model: { type: 'string', minLength: 1 },
      secondary_model: { type: 'string', minLength: 1 },
      max_retries: { type: 'integer', minimum: 0, maximum: 10 },
      max_retry_wait_ms: ms(0),
      timeout_ms: ms(1),
      prices: section({
        input_per_mtok: { type: 'number', minimum: 0 },
        output_per_mtok: { type: 'number', minimum: 0 },
      }),
    }),
    router: section({
      max_retries: { type: 'integer', minimum: 0, maximum: 10 },
      min_confidence: { type: 'number', minimum: 0, maximum: 1 },
    }),
    nats: section({
      // one URL or several, comma-separated, each with its scheme
      url: { type: 'string', pattern: NATS_URLS },
      cluster_key: { type: 'string', minLength: 16 },
      cluster_key_file: { type: 'string', minLength: 1 },
      token: { type: 'string', minLength: 1 },
      user: { type: 'string', minLength: 1 },
      pass: { type: 'string' },
      creds_file: { type: 'string', minLength: 1 },
      nkey_seed_file: { type: 'string', minLength: 1 },
      tls: section({
        ca_file: { type: 'string', minLength: 1 },
        cert_file: { type: 'string', minLength: 1 },
        key_file: { type: 'string', minLength: 1 },
      }),
      heartbeat_ms: ms(100, 600_000),
      unhealthy_after_ms: ms(200, 3_600_000),
    }),
    redis: section({ url: { type: 'string', pattern: '^rediss?://' } }),
    cluster: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
  },
} as const;

const checkSchema = compileChecker(createAjv(), configSchema);

/** What a value matching each pattern of the schema looks like, said instead of the pattern. */
const PATTERN_WORDS: Record<string, string> = {
  '$.cluster':
    'must be 1–64 characters: lower-case letters, digits, "-" and "_", starting with a letter or digit (it names NATS subjects and Redis keys)',
  '$.nats.url': 'must be a nats://, tls://, ws:// or wss:// URL (several: comma-separated)',
  '$.redis.url': `must be a Redis URL: ${REDIS_URL_FORM}`,
  '$.approvals.answerers[]': 'must be a token name: 1–64 of a-z 0-9 _ . - starting with a letter or digit',
  '$.server.allowed_hosts[]':
    'must be a host name or IP address without port or wildcard (`finger.example.lan`, `10.0.0.5`, `::1`)',
};

/** The schema's issues of `input`, a pattern mismatch said in words where the schema's pattern says little. */
export function checkConfig(input: unknown): ValidationIssue[] {
  return checkSchema(input).map((i) => {
    const words = PATTERN_WORDS[i.path.replace(/\[\d+\]/g, '[]')];
    return i.message.startsWith('must match pattern') && words !== undefined ? { path: i.path, message: words } : i;
  });
}

/** The issue of a malformed Redis URL at `path` (the schema checks only its scheme). */
export function redisUrlIssue(url: unknown, path: string): ValidationIssue[] {
  const problem = typeof url === 'string' ? redisUrlProblem(url) : undefined;
  return problem === undefined
    ? []
    : [{ path, message: `is not a valid Redis URL: ${problem}; expected ${REDIS_URL_FORM}` }];
}

/** The entries of `sandbox.network.allow` that are not `registries`, a host or an IP with an optional port. */
export function allowIssues(allow: readonly string[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  allow.forEach((entry, i) => {
    try {
      parseAllowEntry(entry);
    } catch (e) {
      out.push({ path: `$.sandbox.network.allow[${i}]`, message: (e as Error).message });
    }
  });
  return out;
}

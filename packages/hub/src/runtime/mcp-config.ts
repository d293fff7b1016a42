import type { ErrorInfo, ModuleManifest, RuntimeSpec } from '@finger/protocol';
import { compileChecker, createAjv, toErrorInfo } from '@finger/protocol';

import type { Logger } from '../logger.js';
import type { ModuleRegistry } from '../registry/module-registry.js';

/** One entry of the daemon config's `mcp.servers` (an MCP server used as a tool provider). */
export interface McpServerConfig {
  /** `[a-z0-9_]+`; the module is `mcp.<name>`, its tools `mcp.<name>.<tool>`. */
  name: string;
  transport: 'stdio' | 'http';
  /** stdio: argv of the server process (`[command, ...args]`). */
  command?: string[];
  /** stdio: working directory (relative to FINGER_HOME when the daemon registers it). */
  cwd?: string;
  /** stdio: variables added to the minimal child environment (PATH, HOME, LANG, …). */
  env?: Record<string, string>;
  /** http: the streamable HTTP endpoint, `http(s)://…`. */
  url?: string;
  /** The operator trusts this server's tool annotations (default false: every tool is high risk). */
  trusted?: boolean;
  /** Lease (ms) of each call to this server's tools; progress notifications extend it. */
  timeout_ms?: number;
}

const NAME = '^[a-z0-9_]{1,60}$';

/**
 * JSON Schema of one `mcp.servers` entry (key types). {@link parseMcpServers} adds the transport
 * rules: stdio needs `command` and takes no `url`; http needs `url` and takes no `command`/`cwd`/`env`.
 */
export const mcpServerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'transport'],
  properties: {
    name: { type: 'string', pattern: NAME },
    transport: { enum: ['stdio', 'http'] },
    command: { type: 'array', minItems: 1, maxItems: 256, items: { type: 'string', minLength: 1 } },
    cwd: { type: 'string', minLength: 1 },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    url: { type: 'string', pattern: '^https?://' },
    trusted: { type: 'boolean' },
    timeout_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  },
} as const;

const check = compileChecker(createAjv(), mcpServerSchema);

/**
 * Splits the config's `mcp.servers` into usable entries and errors: an entry that is invalid
 * (every problem listed, E_INVALID_ARGS) or whose name repeats an earlier one (E_CONFLICT) is
 * skipped; the others still load. `raw` that is not an array yields one error.
 */
export function parseMcpServers(raw: unknown): { servers: McpServerConfig[]; errors: ErrorInfo[] } {
  const servers: McpServerConfig[] = [];
  const errors: ErrorInfo[] = [];
  if (raw === undefined || raw === null) return { servers, errors };
  if (!Array.isArray(raw)) {
    errors.push({ code: 'E_INVALID_ARGS', message: 'mcp.servers must be an array' });
    return { servers, errors };
  }
  const seen = new Map<string, number>();
  raw.forEach((entry: unknown, i) => {
    const where = `mcp.servers[${i}]`;
    const name = (entry as { name?: unknown } | null)?.name;
    const label = typeof name === 'string' ? ` ("${name}")` : '';
    const issues = check(entry);
    const t = (typeof entry === 'object' && entry !== null ? entry : {}) as Partial<McpServerConfig>;
    const only = t.transport === 'stdio' ? ['url'] : t.transport === 'http' ? ['command', 'cwd', 'env'] : [];
    if (t.transport === 'stdio' && t.command === undefined) issues.push({ path: '$.command', message: 'is required' });
    if (t.transport === 'http' && t.url === undefined) issues.push({ path: '$.url', message: 'is required' });
    for (const k of only) {
      if ((t as Record<string, unknown>)[k] !== undefined)
        issues.push({ path: `$.${k}`, message: `is not allowed with transport "${t.transport}"` });
    }
    if (issues.length > 0) {
      const summary = issues.map((x) => `${x.path} ${x.message}`).join('; ');
      errors.push({
        code: 'E_INVALID_ARGS',
        message: `${where}${label} skipped: ${summary}`,
        details: { index: i, issues, ...(typeof name === 'string' ? { name } : {}) },
      });
      return;
    }
    const e = entry as McpServerConfig;
    const first = seen.get(e.name);
    if (first !== undefined) {
      errors.push({
        code: 'E_CONFLICT',
        message: `${where}${label} skipped: duplicates mcp.servers[${first}]`,
        details: { index: i, name: e.name, duplicate_of: first },
      });
      return;
    }
    seen.set(e.name, i);
    servers.push(e);
  });
  return { servers, errors };
}

/**
 * The module manifest of a configured MCP server: id `mcp.<name>`, runtime
 * `{type: 'mcp', transport, command|url, …, trusted}`, no static tools (the runtime lists them
 * at start), `lease.ttl_ms` from `timeout_ms`. Register it with `hub.registry.register()`.
 */
export function mcpManifest(entry: McpServerConfig): ModuleManifest {
  let runtime: RuntimeSpec;
  if (entry.transport === 'http') {
    runtime = { type: 'mcp', transport: 'http', url: entry.url ?? '' };
  } else {
    runtime = { type: 'mcp', transport: 'stdio', command: entry.command ?? [] };
    if (entry.cwd !== undefined) runtime.cwd = entry.cwd;
    if (entry.env !== undefined) runtime.env = { ...entry.env };
  }
  if (entry.trusted !== undefined) runtime.trusted = entry.trusted;
  const m: ModuleManifest = {
    id: `mcp.${entry.name}`,
    name: `MCP server ${entry.name}`,
    version: '0.0.0',
    description: `MCP server "${entry.name}" over ${entry.transport}${entry.trusted ? ' (trusted)' : ''}`,
    kind: 'tool',
    runtime,
    tools: [],
  };
  if (entry.timeout_ms !== undefined) m.lease = { ttl_ms: entry.timeout_ms };
  return m;
}

/**
 * Registers every usable entry of a config's `mcp.servers` (in parallel) as module `mcp.<name>`,
 * source `static`. Bad and duplicate entries, and servers that fail to start, are logged and
 * returned as errors; the others load. Relative `cwd`s resolve against `baseDir`.
 */
export async function registerMcpServers(
  registry: Pick<ModuleRegistry, 'register'>,
  raw: unknown,
  opts: { baseDir: string; logger?: Logger },
): Promise<{ loaded: string[]; errors: ErrorInfo[] }> {
  const { servers, errors } = parseMcpServers(raw);
  const loaded: string[] = [];
  await Promise.all(
    servers.map(async (entry) => {
      try {
        loaded.push((await registry.register(mcpManifest(entry), { baseDir: opts.baseDir, source: 'static' })).id);
      } catch (e) {
        errors.push({ ...toErrorInfo(e), message: `MCP server "${entry.name}" not loaded: ${toErrorInfo(e).message}` });
      }
    }),
  );
  for (const e of errors) opts.logger?.warn({ error: e }, 'MCP server skipped');
  return { loaded: loaded.sort(), errors };
}

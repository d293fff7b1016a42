import type { ToolSpec } from '@finger/protocol';
import { FingerError, toErrorInfo } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import { DEFAULT_LIMITS } from '../hub-types.js';
import type { Logger } from '../logger.js';
import { callMcpTool, type McpInflight } from './mcp-call.js';
import { connectMcp, type McpConnection, type McpSpec } from './mcp-connect.js';
import { McpPinning, type McpQuarantine, pinsFile } from './mcp-pinning.js';
import { McpPinStore } from './mcp-pins.js';
import { MCP_TOOL_NAME, type McpToolDefinition, mcpToolSpec, toDefinition } from './mcp-tools.js';
import { RestartLifecycle } from './restart-lifecycle.js';
import type { ModuleRuntime, RuntimeHealth, RuntimeNotice, RuntimeOptions, ToolCallContext } from './runtime.js';
import { killSandbox, type ProcRef, sandboxInit, waitGone } from './sandbox-tree.js';

export type { McpQuarantine } from './mcp-pinning.js';

/** Counters and state of an MCP runtime, for metrics and tests. */
export interface McpRuntimeStats {
  state: string;
  /** Pid of the stdio server process, while it runs. */
  pid?: number;
  restarts: number;
  inflight: number;
  /** Names of quarantined tools. */
  quarantined: string[];
  /** Protocol revision negotiated with the server. */
  protocol_version?: string;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const DEFAULT_BACKOFF: [number, number] = [100, 10_000];
/** How long a kill or close waits for a sandbox's PID namespace to be empty. */
const SANDBOX_GONE_MS = 5000;

/**
 * Runs an MCP server as a finger module (§3.3), over stdio (a child process with a minimal
 * environment plus the manifest's `env`) or streamable HTTP, through the official MCP client
 * (`@modelcontextprotocol/client`, imported lazily in start() so hubs without MCP never load it).
 *
 * start() connects and lists the tools (all pages); each becomes a ToolSpec whose risk comes from
 * its annotations only when the manifest's runtime says `trusted` (see mcpToolSpec). Every tool
 * definition is pinned by hash on first sight in the pins file; a later change quarantines the
 * tool (calls fail E_FORBIDDEN, and a FIREWALL_VERDICT event is emitted) until trust() re-pins
 * it. A failing tools/list leaves the module with no tools and emits MODULE_HEALTH.
 *
 * Calls time out at the caller's deadline (E_TIMEOUT; the SDK sends `notifications/cancelled`),
 * cancel() aborts the request (also cancelling it at the server), progress notifications extend
 * the lease and reach the caller, tool errors (`isError`) are E_MODULE_ERROR. A stdio server that
 * dies fails its in-flight calls with E_MODULE_CRASHED and is restarted with backoff.
 */
export class McpRuntime implements ModuleRuntime {
  readonly type = 'mcp';
  readonly #opts: RuntimeOptions;
  readonly #id: string;
  readonly #spec: McpSpec;
  readonly #trusted: boolean;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #life: RestartLifecycle;
  readonly #pinning: McpPinning;
  readonly #leaseMs: number;
  #conn: McpConnection | null = null;
  #tools: ToolSpec[] | null = null;
  readonly #inflight = new Map<string, McpInflight>();
  #listError: string | undefined;
  #restarts = 0;
  #closing: Promise<void> | null = null;

  constructor(opts: RuntimeOptions) {
    const rt = opts.manifest.runtime;
    if (rt.type !== 'mcp') {
      throw new FingerError('E_INVALID_MANIFEST', `module "${opts.manifest.id}" is not an MCP module`, {
        issues: [{ path: '$.runtime.type', message: `expected "mcp", got "${rt.type}"` }],
      });
    }
    this.#opts = opts;
    this.#id = opts.manifest.id;
    this.#spec = rt;
    this.#trusted = rt.trusted === true;
    this.#clock = opts.clock ?? systemClock;
    this.#log = opts.logger.child({ runtime: 'mcp' });
    const pins = new McpPinStore(pinsFile(opts.settings, opts.baseDir));
    if (pins.file === undefined)
      this.#log.warn(
        {},
        'no pins_file or home setting: MCP pins are kept in memory only (a restart pins changed tool definitions without quarantine; `module serve --pins-file <file>` keeps them)',
      );
    this.#pinning = new McpPinning({
      id: this.#id,
      pins,
      clock: this.#clock,
      log: this.#log,
      notice: (n) => this.#notice(n),
    });
    this.#leaseMs = opts.manifest.lease?.ttl_ms ?? DEFAULT_LIMITS.default_lease_ms;
    this.#life = new RestartLifecycle({
      id: this.#id,
      clock: this.#clock,
      backoff: opts.limits?.restart_backoff_ms ?? DEFAULT_BACKOFF,
      connect: (first) => this.#connectAndList(first),
      alive: () => !this.#conn?.dead,
      onRestartFailed: (e) => this.#log.warn({ err: errText(e) }, 'MCP server restart failed'),
      onRestarted: () => this.#onRestarted(),
      closedError: () => this.#closedError(),
      notReady: () => this.#notReady(),
    });
  }

  /**
   * Connects, lists the tools and checks them against the pins. Rejects E_MODULE_UNHEALTHY when
   * the server cannot be started or reached (or the pins file is unreadable), E_PROVIDER_CLOSED
   * after close(). A failing tools/list does not reject: the module then has no tools.
   */
  start(): Promise<void> {
    return this.#life.start();
  }

  /** The tools listed at start (empty when tools/list failed). */
  describeTools(): ToolSpec[] {
    return this.#tools ?? [];
  }

  /** Quarantined tools by name. */
  quarantined(): Record<string, McpQuarantine> {
    return this.#pinning.quarantined();
  }

  /**
   * Re-pins a tool's current definition (a human looked at it) and lifts its quarantine.
   * `expected_hash`, when given, must equal the current hash (E_CONFLICT otherwise), so what is
   * trusted is exactly what was shown. Rejects E_NOT_FOUND for a tool the server did not list.
   */
  trust(tool: string, expected_hash?: string): Promise<{ tool: string; pinned_hash: string }> {
    return this.#pinning.trust(tool, expected_hash);
  }

  /**
   * Calls the tool (`tools/call`). Resolves `{content, structuredContent?}`; rejects E_FORBIDDEN
   * (quarantined), E_INVALID_ARGS (arguments not an object, or refused by the server),
   * E_MODULE_ERROR (`isError` results, other server errors), E_TIMEOUT (deadline passed; the
   * server gets `notifications/cancelled`), E_MODULE_CRASHED (the server died), E_PROVIDER_CLOSED
   * (after close()), E_MODULE_UNHEALTHY (not started, or an HTTP server unreachable).
   */
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    return this.#life.whenRunning(ctx.deadline, () => this.#call(this.#conn as McpConnection, tool, args, ctx));
  }

  /** Aborts an in-flight call: the SDK sends `notifications/cancelled` to the server. */
  cancel(call_id: string, reason: string): void {
    const f = this.#inflight.get(call_id);
    if (f === undefined || f.cancelled !== undefined) return;
    f.cancelled = reason;
    f.controller.abort(reason);
  }

  /** `ping` answered within `timeout_ms` is healthy; not running, or a failed tools/list, is not. */
  async health(timeout_ms: number): Promise<RuntimeHealth> {
    const conn = this.#conn;
    if (this.#life.state !== 'running' || conn === null) return { ok: false, detail: this.#life.state };
    try {
      await conn.client.ping({ timeout: timeout_ms });
    } catch (e) {
      return { ok: false, detail: `ping failed: ${e instanceof Error ? e.message : String(e)}` };
    }
    if (this.#listError !== undefined) return { ok: false, detail: `tools/list failed: ${this.#listError}` };
    return { ok: true };
  }

  /**
   * Stops restarting, fails waiting and in-flight calls with E_PROVIDER_CLOSED and closes the
   * connection; a stdio server gets end of stdin, then SIGTERM, then SIGKILL (2 s apart). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /**
   * Kill switch: SIGKILLs a stdio server now (in-flight calls fail, it restarts with backoff as
   * after a crash) and resolves once its connection is gone (bounded: 2 s). HTTP servers: no-op.
   */
  async kill(): Promise<void> {
    const conn = this.#conn;
    if (conn === null || conn.dead || conn.pid === null) return;
    this.#log.warn({ pid: conn.pid, sandboxed: conn.sandboxed }, 'killing the MCP server process (halt)');
    let init: ProcRef | undefined;
    if (conn.sandboxed) init = killSandbox(conn.pid);
    else {
      try {
        process.kill(conn.pid, 'SIGKILL');
      } catch {
        return; // already gone
      }
    }
    const until = this.#clock.now() + 2000;
    while (!conn.dead && this.#clock.now() < until) await new Promise<void>((r) => this.#clock.setTimeout(r, 10));
    // in a sandbox: every process the server started is gone once its init is
    if (init !== undefined) await waitGone([init], SANDBOX_GONE_MS);
  }

  /** Counters and state. */
  stats(): McpRuntimeStats {
    const s: McpRuntimeStats = {
      state: this.#life.state,
      restarts: this.#restarts,
      inflight: this.#inflight.size,
      quarantined: this.#pinning.quarantinedNames(),
    };
    const conn = this.#conn;
    if (conn !== null && !conn.dead && conn.pid !== null) s.pid = conn.pid;
    const v = conn?.client.getNegotiatedProtocolVersion?.();
    if (typeof v === 'string') s.protocol_version = v;
    return s;
  }

  // ---- connection lifecycle ----------------------------------------------------------------

  async #connectAndList(first: boolean): Promise<void> {
    const conn = await connectMcp({
      module_id: this.#id,
      spec: this.#spec,
      baseDir: this.#opts.baseDir,
      // process.env is only read to pick the minimal names; the composition root passes baseEnv.
      baseEnv: this.#opts.baseEnv ?? process.env,
      timeout_ms: this.#opts.limits?.start_timeout_ms ?? DEFAULT_START_TIMEOUT_MS,
      logger: this.#log,
      onClose: (c) => this.#onClosed(c),
      sandbox: this.#opts,
    });
    if (this.#life.state === 'closed') {
      conn.closedByUs = true;
      await conn.client.close().catch(() => undefined);
      throw this.#closedError();
    }
    this.#conn = conn;
    try {
      await this.#listAndAdopt(conn, first);
      if (conn.dead) throw new FingerError('E_MODULE_UNHEALTHY', `MCP server "${this.#id}" exited while starting`);
    } catch (e) {
      // never leave a half-started server behind (a restart would otherwise leak it)
      conn.closedByUs = true;
      if (this.#conn === conn) this.#conn = null;
      await conn.client.close().catch(() => undefined);
      throw e;
    }
  }

  async #listAndAdopt(conn: McpConnection, first: boolean): Promise<void> {
    let listed: McpToolDefinition[] | null = null;
    try {
      listed = await this.#list(conn);
      this.#listError = undefined;
    } catch (e) {
      this.#listError = e instanceof Error ? e.message : String(e);
      this.#log.warn({ err: this.#listError }, 'MCP tools/list failed; the module has no tools');
      this.#notice({
        type: 'event',
        message: `MCP server "${this.#id}": tools/list failed: ${this.#listError}`,
        data: {
          hub_event: 'MODULE_HEALTH',
          module: this.#id,
          healthy: false,
          detail: `tools/list failed: ${this.#listError}`,
          tools: 0,
        },
      });
    }
    if (listed !== null) await this.#adopt(listed, first);
    else if (first) this.#tools = [];
  }

  /** tools/list, every page (the SDK walks the cursors). */
  async #list(conn: McpConnection): Promise<McpToolDefinition[]> {
    const timeout = this.#opts.limits?.start_timeout_ms ?? DEFAULT_START_TIMEOUT_MS;
    const { tools } = await conn.client.listTools(undefined, { timeout, cacheMode: 'refresh' });
    const defs: McpToolDefinition[] = [];
    const seen = new Set<string>();
    for (const raw of tools) {
      const def = toDefinition(raw);
      if (def === null || !MCP_TOOL_NAME.test(def.name) || seen.has(def.name)) {
        this.#log.warn({ tool: (raw as { name?: unknown }).name }, 'MCP tool skipped: unusable or duplicate name');
        continue;
      }
      seen.add(def.name);
      defs.push(def);
    }
    return defs;
  }

  /** Hashes the listed definitions, pins new ones, quarantines changed ones. */
  async #adopt(defs: McpToolDefinition[], first: boolean): Promise<void> {
    await this.#pinning.adopt(defs);
    if (first) {
      const timeout_ms = this.#opts.manifest.lease?.ttl_ms;
      this.#tools = defs.map((d) => mcpToolSpec(d, { trusted: this.#trusted, ...(timeout_ms ? { timeout_ms } : {}) }));
    }
  }

  #onClosed(conn: McpConnection): void {
    if (conn.closedByUs || conn.dead) return;
    conn.dead = true;
    if (this.#conn !== conn || this.#life.state !== 'running') return;
    const inflight = this.#inflight.size;
    const message = `MCP server "${this.#id}" closed the connection (pid ${conn.pid ?? '-'})`;
    this.#log.warn({ pid: conn.pid, inflight }, 'MCP server connection lost');
    this.#notice({ type: 'crashed', message, data: { module: this.#id, pid: conn.pid, inflight } });
    this.#life.crashed();
  }

  #onRestarted(): void {
    this.#restarts++;
    this.#life.resetBackoff();
    this.#notice({
      type: 'restarted',
      message: `MCP server "${this.#id}" reconnected`,
      data: { module: this.#id, pid: this.#conn?.pid ?? null, restarts: this.#restarts },
    });
  }

  async #close(): Promise<void> {
    this.#life.close(this.#closedError());
    const conn = this.#conn;
    if (conn === null) return;
    conn.closedByUs = true;
    for (const f of this.#inflight.values()) f.controller.abort('closed');
    // looked up first: once bubblewrap has exited, its init has another parent
    const init = conn.sandboxed && conn.pid !== null ? sandboxInit(conn.pid) : undefined;
    await conn.client.close().catch((e: unknown) => this.#log.debug({ err: errText(e) }, 'MCP close failed'));
    if (init !== undefined && !(await waitGone([init], SANDBOX_GONE_MS))) {
      killSandbox(conn.pid as number, init);
      await waitGone([init], SANDBOX_GONE_MS);
    }
  }

  // ---- calls ---------------------------------------------------------------------------------

  async #call(conn: McpConnection, tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    this.#pinning.check(tool);
    return callMcpTool(
      {
        id: this.#id,
        conn,
        inflight: this.#inflight,
        clock: this.#clock,
        leaseMs: this.#leaseMs,
        log: this.#log,
        http: this.#spec.transport === 'http',
        closed: () => this.#life.state === 'closed',
      },
      tool,
      args,
      ctx,
    );
  }

  // ---- small helpers -------------------------------------------------------------------------

  #notReady(): FingerError {
    return new FingerError('E_TIMEOUT', `MCP server "${this.#id}" was not ready before the call's deadline`);
  }

  #closedError(): FingerError {
    return new FingerError('E_PROVIDER_CLOSED', `module "${this.#id}" runtime is closed`);
  }

  #notice(n: RuntimeNotice): void {
    try {
      this.#opts.onNotice?.(n);
    } catch (e) {
      this.#log.error({ err: errText(e) }, 'runtime callback threw');
    }
  }
}

function errText(e: unknown): string {
  return toErrorInfo(e).message;
}

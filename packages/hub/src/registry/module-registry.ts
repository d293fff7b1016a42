import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import type { ErrorInfo, ModuleManifest, ToolSpec } from '@finger/protocol';
import { assertManifest, FingerError, internId, rfc3339, toErrorInfo } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import type { ResolvedTarget } from '../hub-types.js';
import type { Logger } from '../logger.js';
import type { ModuleRuntime, RuntimeNotice, RuntimeOptions } from '../runtime/runtime.js';
import type { Sandbox } from '../runtime/sandbox.js';
import {
  compileLateToolSchemas,
  compileToolSchemas,
  type SchemaCheck,
  type ToolChecks,
} from '../tools/schema-validator.js';
import type { ModuleChange } from '../tools/tool-registry.js';
import type { Transport, TransportHandler } from '../transport/transport.js';
import type { NestedCaller } from './call-context.js';
import { createForwardHandler, isForwarding } from './forward-handler.js';
import { type ModuleEntry, type ModuleHealthInfo, type ModuleInfo, toModuleInfo } from './module-entry.js';
import { createModuleHandler } from './module-host.js';

/** A resolved target plus the live module entry behind it. */
export interface TargetEntry extends ResolvedTarget {
  entry: ModuleEntry;
  /** The tool's compiled input_schema (absent when it declares none): checked before dispatch. */
  check_args?: SchemaCheck;
  /** The tool's compiled output_schema (absent when it declares none): checked on every result. */
  check_result?: SchemaCheck;
  /** What interceptors see of this target: one frozen object per tool, made at registration (no per-call copy). */
  resolved: ResolvedTarget;
}

/** Everything the registry needs, passed in by the hub. */
export interface ModuleRegistryOptions {
  transport: Transport;
  events: EventBus;
  clock: Clock;
  logger: Logger;
  createRuntime: (options: RuntimeOptions) => ModuleRuntime;
  nested: NestedCaller;
  default_concurrency: number;
  /** Upper bound for draining a module on unregister (ms). */
  default_drain_ms: number;
  /** Operator settings per module id (daemon config); default none. */
  settingsFor?: (module_id: string) => Record<string, unknown> | undefined;
  /** Environment stdio children pick their minimal env from (composition root passes process.env). */
  baseEnv?: Record<string, string | undefined>;
  /** Sandbox policy for stdio and MCP module children; default none. */
  sandbox?: Sandbox;
}

const DEFAULT_HEALTH_TIMEOUT_MS = 2000;

/**
 * Registered modules: static load of `<dir>/*\/module.json`, dynamic register/unregister
 * (unregister drains in-flight calls first), target resolution, health checks with
 * MODULE_HEALTH events. A bad manifest is refused with every error and registers nothing.
 */
export class ModuleRegistry {
  private readonly entries = new Map<string, ModuleEntry>();
  private readonly targets = new Map<string, TargetEntry>();
  /** Module ids with several tools → their tool ids, for the E_NO_TARGET message. */
  private readonly ambiguous = new Map<string, string[]>();
  private closed = false;
  private readonly listeners = new Set<(change: ModuleChange) => void>();

  constructor(private readonly o: ModuleRegistryOptions) {}

  /** Loads every `<dir>/<name>/module.json`; bad ones are reported, the others still load. */
  async loadDirectory(
    dir: string,
    source: 'static' | 'dynamic' = 'static',
  ): Promise<{ loaded: string[]; errors: ErrorInfo[] }> {
    const loaded: string[] = [];
    const errors: ErrorInfo[] = [];
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
    } catch (e) {
      errors.push({ code: 'E_NOT_FOUND', message: `cannot read module directory ${dir}: ${(e as Error).message}` });
      return { loaded, errors };
    }
    for (const name of names) {
      const file = path.join(dir, name, 'module.json');
      try {
        await readFile(file);
      } catch {
        continue; // a folder without module.json is not a module
      }
      try {
        loaded.push((await this.loadFile(file, source)).id);
      } catch (e) {
        const info = toErrorInfo(e);
        this.o.logger.error({ file, error: info }, 'module not loaded');
        errors.push(info);
      }
    }
    return { loaded, errors };
  }

  /** Reads, validates and registers one module.json. */
  async loadFile(file: string, source: 'static' | 'dynamic' = 'dynamic'): Promise<ModuleInfo> {
    let raw: string;
    try {
      raw = await readFile(file, 'utf8');
    } catch (e) {
      throw new FingerError('E_NOT_FOUND', `cannot read ${file}: ${(e as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (e) {
      throw new FingerError('E_INVALID_MANIFEST', `${file} is not valid JSON: ${(e as Error).message}`, {
        issues: [{ path: '$', message: `is not valid JSON: ${(e as Error).message}` }],
        source: file,
      });
    }
    return this.register(json, { baseDir: path.dirname(path.resolve(file)), source, file });
  }

  /**
   * Validates and registers a manifest: starts its runtime and serves it on the transport.
   * Rejects with E_INVALID_MANIFEST (every issue listed) or E_CONFLICT (id taken); on any
   * failure nothing of the module stays registered.
   */
  async register(
    manifest: unknown,
    opts: {
      baseDir: string;
      source?: 'static' | 'dynamic';
      file?: string;
      /** A runtime built by the caller (an in-process agent object) instead of one made from the manifest. */
      runtime?: ModuleRuntime;
    },
  ): Promise<ModuleInfo> {
    if (this.closed) throw new FingerError('E_PROVIDER_CLOSED', 'registry is closed');
    const m: ModuleManifest = assertManifest(manifest, opts.file);
    const checks = compileToolSchemas(m, opts.file); // a schema that does not compile refuses the manifest
    const held = this.entries.get(m.id);
    // a module imported from the cluster gives way to a local one of its id (calls in flight finish)
    if (held?.manifest.runtime.type === 'nats' && m.runtime.type !== 'nats' && held.status !== 'draining')
      await this.unregister(m.id);
    if (this.entries.has(m.id))
      throw new FingerError('E_CONFLICT', `module "${m.id}" is already registered`, { id: m.id });
    const log = this.o.logger.child({ module: m.id });
    const runtime =
      opts.runtime ??
      this.o.createRuntime({
        manifest: m,
        baseDir: opts.baseDir,
        logger: log,
        onNotice: (n) => this.onNotice(m.id, n),
        clock: this.o.clock,
        ...(this.o.baseEnv ? { baseEnv: this.o.baseEnv } : {}),
        ...(this.o.sandbox ? { sandbox: this.o.sandbox } : {}),
        settings: this.o.settingsFor?.(m.id) ?? {},
      });
    const concurrency = m.concurrency ?? this.o.default_concurrency;
    const entry: ModuleEntry = {
      manifest: m,
      id: m.id,
      baseDir: opts.baseDir,
      source: opts.source ?? 'dynamic',
      registeredAt: rfc3339(this.o.clock.now()),
      runtime,
      forwarder: isForwarding(runtime) ? runtime : undefined,
      concurrency,
      maxQueue: Math.max(1024, concurrency * 64),
      status: 'starting',
      healthy: true,
      inflight: 0,
      queue: [],
      consecutiveFailures: 0,
    };
    this.entries.set(m.id, entry); // reserve the id while starting
    try {
      await runtime.start();
      // Runtime-discovered tools (MCP tools/list) replace the manifest's.
      const tools = runtime.describeTools?.();
      if (tools !== undefined) entry.manifest = { ...m, tools };
      const handler = entry.forwarder
        ? createForwardHandler(entry.forwarder)
        : createModuleHandler(m.id, runtime, this.o.nested);
      entry.unserve = await this.o.transport.serve(m.id, handler);
      entry.handler = handler;
    } catch (e) {
      this.entries.delete(m.id);
      await runtime.close().catch(() => undefined);
      throw e;
    }
    entry.status = 'ready';
    this.publish(entry, checks);
    log.info({ tools: entry.manifest.tools.length, runtime: m.runtime.type }, 'module registered');
    return toModuleInfo(entry);
  }

  /**
   * Gives a module imported from the cluster (runtime `nats` on both sides) a new manifest in
   * place — a new version rolled out on the nodes that serve it. Its runtime, its serving and
   * its calls in flight (which finish with the tool they resolved) stay; its targets switch to
   * the new tools in one step, so no call finds the module missing, as one would between an
   * unregister and a register. The change is announced as `unregistered` then `registered` to
   * the change listeners, and as MODULE_REGISTERED with `previous_version`. Rejects with
   * E_INVALID_MANIFEST (every issue listed), E_NOT_FOUND (not registered, or draining) or
   * E_CONFLICT (still starting, or not a module imported from the cluster).
   */
  update(manifest: unknown): ModuleInfo {
    if (this.closed) throw new FingerError('E_PROVIDER_CLOSED', 'registry is closed');
    const m: ModuleManifest = assertManifest(manifest);
    const checks = compileToolSchemas(m);
    const entry = this.entries.get(m.id);
    if (entry === undefined || entry.status === 'draining')
      throw new FingerError('E_NOT_FOUND', `module "${m.id}" is not registered`, { id: m.id });
    if (entry.status === 'starting')
      throw new FingerError('E_CONFLICT', `module "${m.id}" is still starting`, { id: m.id });
    if (entry.manifest.runtime.type !== 'nats' || m.runtime.type !== 'nats')
      throw new FingerError('E_CONFLICT', `only a module imported from the cluster is updated in place ("${m.id}")`, {
        id: m.id,
      });
    const previous = entry.manifest.version;
    this.unindex(entry);
    this.notify({ type: 'unregistered', module: toModuleInfo(entry) });
    this.stopHealth(entry);
    entry.manifest = m;
    entry.concurrency = m.concurrency ?? this.o.default_concurrency;
    entry.maxQueue = Math.max(1024, entry.concurrency * 64);
    this.publish(entry, checks, { previous_version: previous });
    this.o.logger.info({ module: m.id, version: m.version, previous_version: previous }, 'module updated');
    return toModuleInfo(entry);
  }

  /**
   * Unregisters a module: new calls fail with E_NO_TARGET at once, in-flight calls may finish
   * (up to `drain_ms`), then the runtime is closed. Rejects with E_NOT_FOUND for unknown ids.
   */
  async unregister(id: string, opts: { drain_ms?: number } = {}): Promise<void> {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.status === 'draining')
      throw new FingerError('E_NOT_FOUND', `module "${id}" is not registered`, { id });
    entry.status = 'draining';
    this.unindex(entry);
    this.notify({ type: 'unregistered', module: toModuleInfo(entry) });
    this.stopHealth(entry);
    if (entry.inflight > 0 || entry.queue.length > 0) {
      const drainMs = opts.drain_ms ?? this.o.default_drain_ms;
      await new Promise<void>((resolve) => {
        const t = this.o.clock.setTimeout(resolve, drainMs);
        entry.drained = () => {
          this.o.clock.clearTimeout(t);
          resolve();
        };
      });
    }
    entry.handler = undefined;
    await entry.unserve?.();
    await entry.runtime
      .close()
      .catch((e: unknown) => this.o.logger.warn({ module: id, error: toErrorInfo(e) }, 'runtime close failed'));
    this.entries.delete(id);
    this.o.events.emit('MODULE_UNREGISTERED', { target: id }, { id, drained_inflight: entry.inflight });
  }

  /** Resolves a target to its module and tool. Throws E_NO_TARGET (listing tools when ambiguous). */
  resolve(target: string): TargetEntry {
    const hit = this.targets.get(target);
    if (hit !== undefined) return hit;
    const tools = this.ambiguous.get(target);
    if (tools !== undefined) {
      throw new FingerError(
        'E_NO_TARGET',
        `module "${target}" has ${tools.length} tools; name one of: ${tools.join(', ')}`,
        { target, tools },
      );
    }
    const draining = this.entries.get(target.split('.')[0] ?? '')?.status === 'draining';
    throw new FingerError(
      'E_NO_TARGET',
      draining ? `module of "${target}" is being unregistered` : `no such target "${target}"`,
      { target },
    );
  }

  /**
   * Calls `listener` after every register (once the module's targets resolve) and every
   * unregister (once they stop resolving); the tool registry follows the modules this way.
   * Returns the function that removes the listener.
   */
  onChange(listener: (change: ModuleChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  list(): ModuleInfo[] {
    return [...this.entries.values()].map(toModuleInfo);
  }

  get(id: string): ModuleInfo | undefined {
    const e = this.entries.get(id);
    return e === undefined ? undefined : toModuleInfo(e);
  }

  /**
   * What serves module `id`'s calls on the hub's transport (request envelope and server channel in,
   * reply envelope out; no interceptors), while it is served there: for a node that takes the
   * module's calls from another transport (ClusterNode over NATS) without a second hop through
   * the in-process one. Undefined while the module starts, after it is unserved, or when unknown.
   */
  handlerOf(id: string): TransportHandler | undefined {
    return this.entries.get(id)?.handler;
  }

  /** The live runtime of a registered module (e.g. to re-trust a quarantined MCP tool); undefined when unknown. */
  runtimeOf(id: string): ModuleRuntime | undefined {
    return this.entries.get(id)?.runtime;
  }

  /** Number of registered modules. */
  get size(): number {
    return this.entries.size;
  }

  /** Runs a health check now. Rejects with E_NOT_FOUND for unknown ids. */
  async checkHealth(id: string): Promise<ModuleHealthInfo> {
    const entry = this.entries.get(id);
    if (entry === undefined) throw new FingerError('E_NOT_FOUND', `module "${id}" is not registered`, { id });
    return this.runHealth(entry);
  }

  /** Called by the hub when a module's in-flight count reaches zero. */
  notifyIdle(entry: ModuleEntry): void {
    if (entry.status === 'draining' && entry.inflight === 0 && entry.queue.length === 0) entry.drained?.();
  }

  /** Closes every module (in parallel); idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.entries.values()];
    for (const e of all) this.stopHealth(e);
    await Promise.all(
      all.map(async (e) => {
        await e.unserve?.().catch(() => undefined);
        await e.runtime.close().catch(() => undefined);
      }),
    );
    this.entries.clear();
    this.targets.clear();
    this.ambiguous.clear();
  }

  /** Makes a ready entry's targets resolve, tells the listeners, starts its health checks, emits MODULE_REGISTERED. */
  private publish(entry: ModuleEntry, checks: Map<ToolSpec, ToolChecks>, extra: Record<string, unknown> = {}): void {
    const m = entry.manifest;
    this.index(entry, checks);
    this.notify({ type: 'registered', module: toModuleInfo(entry) });
    this.startHealth(entry);
    this.o.events.emit(
      'MODULE_REGISTERED',
      { target: m.id },
      {
        id: m.id,
        version: m.version,
        runtime: m.runtime.type,
        tools: m.tools.map((t) => t.name),
        source: entry.source,
        ...extra,
      },
    );
  }

  private index(entry: ModuleEntry, compiled: Map<ToolSpec, ToolChecks>): void {
    const m = entry.manifest;
    for (const tool of m.tools) {
      // one string object with the tool registry's id: the maps it is looked up in per call compare by pointer
      const tool_id = internId(`${m.id}.${tool.name}`);
      // tools a runtime discovered at start (MCP) were not in the manifest: compiled now
      const checks = compiled.get(tool) ?? compileLateToolSchemas(tool);
      const resolved: ResolvedTarget = Object.freeze({ module: m, tool, tool_id });
      const target: TargetEntry = { module: m, tool, tool_id, entry, resolved };
      if (checks.args !== undefined) target.check_args = checks.args;
      if (checks.result !== undefined) target.check_result = checks.result;
      this.targets.set(tool_id, target);
    }
    if (m.tools.length === 1) {
      const only = m.tools[0]!;
      this.targets.set(m.id, this.targets.get(`${m.id}.${only.name}`)!);
    } else {
      this.ambiguous.set(
        m.id,
        m.tools.map((t) => `${m.id}.${t.name}`),
      );
    }
  }

  private notify(change: ModuleChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (e) {
        this.o.logger.error({ module: change.module.id, error: toErrorInfo(e) }, 'module change listener failed');
      }
    }
  }

  private unindex(entry: ModuleEntry): void {
    for (const [k, v] of this.targets) if (v.entry === entry) this.targets.delete(k);
    this.ambiguous.delete(entry.id);
  }

  private startHealth(entry: ModuleEntry): void {
    const h = entry.manifest.health;
    if (h?.interval_ms === undefined) return;
    entry.healthTimer = this.o.clock.setInterval(() => void this.runHealth(entry), h.interval_ms);
  }

  private stopHealth(entry: ModuleEntry): void {
    if (entry.healthTimer !== undefined) this.o.clock.clearInterval(entry.healthTimer);
    entry.healthTimer = undefined;
  }

  private async runHealth(entry: ModuleEntry): Promise<ModuleHealthInfo> {
    const timeout = entry.manifest.health?.timeout_ms ?? DEFAULT_HEALTH_TIMEOUT_MS;
    let ok = false;
    let detail: string | undefined;
    try {
      const r = await entry.runtime.health(timeout);
      ok = r.ok;
      detail = r.detail;
    } catch (e) {
      detail = toErrorInfo(e).message;
    }
    entry.consecutiveFailures = ok ? 0 : entry.consecutiveFailures + 1;
    const info: ModuleHealthInfo = {
      id: entry.id,
      healthy: ok,
      checked_at: rfc3339(this.o.clock.now()),
      consecutive_failures: entry.consecutiveFailures,
    };
    if (detail !== undefined) info.detail = detail;
    entry.lastHealth = info;
    if (entry.status === 'draining') return info;
    if (ok !== entry.healthy) {
      entry.healthy = ok;
      entry.status = ok ? 'ready' : 'unhealthy';
      this.o.events.emit(
        'MODULE_HEALTH',
        { target: entry.id },
        { id: entry.id, healthy: ok, ...(detail ? { detail } : {}) },
      );
      this.o.logger.warn({ module: entry.id, healthy: ok, detail }, 'module health changed');
    }
    return info;
  }

  private onNotice(id: string, n: RuntimeNotice): void {
    if (n.type === 'crashed' || n.type === 'restarted') {
      this.o.events.emit(
        'MODULE_HEALTH',
        { target: id },
        { id, runtime: n.type, message: n.message, ...(n.data ?? {}) },
      );
    } else if (n.type === 'event' && n.data !== undefined) {
      // Only hub-side runtimes (mcp) set `hub_event`; stdio module events arrive nested under data.data.
      const { hub_event: type, ...data } = n.data;
      if (type === 'MODULE_HEALTH' || type === 'FIREWALL_VERDICT')
        this.o.events.emit(type, { target: id }, { id, message: n.message, ...data });
    }
  }
}

import { FingerError } from '@finger/protocol';

import type { ModuleInfo } from '../registry/module-entry.js';
import {
  buildSnapshot,
  type CapabilitySnapshot,
  type SnapshotEntry,
  type SnapshotParams,
} from './capability-snapshot.js';
import { type ToolInfo, toToolInfo } from './tool-info.js';

/** A change of the module registry, as the tool registry follows it. */
export interface ModuleChange {
  type: 'registered' | 'unregistered';
  module: ModuleInfo;
}

/** What the tool registry follows: the module registry (structurally). */
export interface ToolSource {
  list(): ModuleInfo[];
  onChange(listener: (change: ModuleChange) => void): () => void;
}

/** Options of the tool registry (daemon config `tools`). */
export interface ToolRegistryOptions {
  /**
   * Module ids in order of preference, for a short tool name offered by several modules.
   * Modules not listed come after, in the default order (this daemon's modules before those other
   * nodes of the cluster announce, non-MCP runtimes before MCP servers, then module id).
   */
  preferred_provider_order?: readonly string[];
  /**
   * The tools a module's runtime currently refuses (a changed MCP definition), by short name;
   * read live on every `list`/`get`. The hub wires it to `runtime.quarantined()`.
   */
  quarantined?: (module_id: string) => Record<string, { reason: string }> | undefined;
  /**
   * Whether a module's runtime can quarantine tools at all, asked once when the module registers
   * (default: yes); `metadata()` skips the live `quarantined` look-up for the others.
   */
  quarantinable?: (module_id: string) => boolean;
}

/** Which provider a short tool name resolves to, and why (`myfinger tool show`). */
export interface ProviderChoice {
  /** The short name. */
  name: string;
  /** Tool id a bare `name` resolves to. */
  chosen: string;
  /** Every tool id offering `name`, in order of preference. */
  candidates: string[];
  rule: 'only_provider' | 'preferred_provider_order' | 'default_order';
}

/** The full schema of one tool, for an agent that asks for it on demand. */
export interface ToolSchema {
  id: string;
  description: string;
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

interface Held {
  info: Readonly<ToolInfo>;
  cost_declared: boolean;
  /** The module's runtime can quarantine tools (see ToolRegistryOptions.quarantinable). */
  quarantinable: boolean;
}

/**
 * Every tool of every registered module under its id `<module>.<tool>`, with its metadata
 * (defaults filled, see TOOL_DEFAULTS), kept in sync with the module registry. Short names
 * offered by several modules resolve through `preferred_provider_order`. Also builds capability
 * snapshots (short summaries within a token budget) and hands out full schemas on demand.
 */
export class ToolRegistry {
  private readonly byId = new Map<string, Held>();
  private readonly byName = new Map<string, string[]>();
  private readonly byModule = new Map<string, string[]>();
  private readonly order: Map<string, number>;
  private readonly quarantinedOf: ToolRegistryOptions['quarantined'];
  private readonly quarantinable: ToolRegistryOptions['quarantinable'];
  private readonly unsubscribe: () => void;

  constructor(source: ToolSource, options: ToolRegistryOptions = {}) {
    this.order = new Map((options.preferred_provider_order ?? []).map((id, i) => [id, i]));
    this.quarantinedOf = options.quarantined;
    this.quarantinable = options.quarantinable;
    for (const m of source.list()) this.add(m);
    this.unsubscribe = source.onChange((c) =>
      c.type === 'registered' ? this.add(c.module) : this.remove(c.module.id),
    );
  }

  /** Every tool, sorted by id. */
  list(): ToolInfo[] {
    return [...this.byId.keys()].sort().map((id) => this.view(id)!);
  }

  /**
   * A tool by id, by short name (several providers: `preferred_provider_order`, then the default
   * order) or by the id of a module with exactly one tool; undefined when none.
   */
  get(idOrName: string): ToolInfo | undefined {
    const id = this.resolveId(idOrName);
    return id === undefined ? undefined : this.view(id);
  }

  /**
   * The metadata of one tool id (defaults filled in, quarantine included) without the copies
   * `get` makes for callers that keep the answer: for per-call judges such as the firewall.
   * The result is shared: read it, never change it.
   */
  metadata(tool_id: string): Readonly<ToolInfo> | undefined {
    const held = this.byId.get(tool_id);
    if (held === undefined) return undefined;
    if (!held.quarantinable) return held.info;
    const q = this.quarantinedOf?.(held.info.module)?.[held.info.name];
    return q === undefined ? held.info : { ...held.info, quarantined: { reason: q.reason } };
  }

  /** Like `get`, but throws E_NO_TARGET when nothing matches. */
  require(idOrName: string): ToolInfo {
    const t = this.get(idOrName);
    if (t !== undefined) return t;
    const tools = this.byModule.get(idOrName);
    if (tools !== undefined) {
      throw new FingerError(
        'E_NO_TARGET',
        `module "${idOrName}" has ${tools.length} tools; name one of: ${tools.join(', ')}`,
        { target: idOrName, tools: [...tools] },
      );
    }
    throw new FingerError('E_NO_TARGET', `no tool "${idOrName}"`, { target: idOrName });
  }

  /** Which provider the short name of `idOrName` resolves to, and by which rule. Throws E_NO_TARGET. */
  providerChoice(idOrName: string): ProviderChoice {
    const name = this.require(idOrName).name;
    const candidates = this.candidates(name);
    const chosen = candidates[0]!;
    const rule =
      candidates.length === 1
        ? 'only_provider'
        : this.order.has(this.byId.get(chosen)!.info.module)
          ? 'preferred_provider_order'
          : 'default_order';
    return { name, chosen, candidates, rule };
  }

  /**
   * Short summaries of `tool_ids` within `budget_tokens`; when over budget the lowest-priority
   * tools are dropped first and named. Throws E_INVALID_ARGS for a negative or non-integer budget.
   */
  snapshot(params: SnapshotParams): CapabilitySnapshot {
    const budget = params.budget_tokens;
    if (!Number.isInteger(budget) || budget < 0)
      throw new FingerError('E_INVALID_ARGS', `budget_tokens must be an integer ≥ 0, got ${String(budget)}`, {
        issues: [{ path: '$.budget_tokens', message: 'must be an integer ≥ 0' }],
      });
    const entries: SnapshotEntry[] = [];
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const ask of params.tool_ids) {
      const id = this.resolveId(ask);
      if (id === undefined) {
        unknown.push(ask);
        continue;
      }
      if (seen.has(id)) continue;
      seen.add(id);
      entries.push({ info: this.view(id)!, cost_declared: this.byId.get(id)!.cost_declared });
    }
    return buildSnapshot(entries, budget, params.priority, unknown);
  }

  /** The full schemas of one tool. Throws E_NO_TARGET. */
  schema(idOrName: string): ToolSchema {
    const t = this.require(idOrName);
    const s: ToolSchema = { id: t.id, description: t.description };
    if (t.input_schema !== undefined) s.input_schema = t.input_schema;
    if (t.output_schema !== undefined) s.output_schema = t.output_schema;
    return s;
  }

  /** Number of tools. */
  get size(): number {
    return this.byId.size;
  }

  /** Stops following the module registry. */
  close(): void {
    this.unsubscribe();
  }

  private add(m: ModuleInfo): void {
    this.remove(m.id);
    const ids: string[] = [];
    const quarantinable = this.quarantinedOf !== undefined && (this.quarantinable?.(m.id) ?? true);
    for (const spec of m.tools) {
      // frozen: metadata() hands this object out on every call, and a consumer (the firewall's
      // verdict cache) may then rely on an identical object being unchanged
      const info = Object.freeze(toToolInfo(m.id, m.runtime, m.grants, spec));
      this.byId.set(info.id, { info, cost_declared: spec.context_cost !== undefined, quarantinable });
      ids.push(info.id);
      const same = this.byName.get(info.name);
      if (same === undefined) this.byName.set(info.name, [info.id]);
      else same.push(info.id);
    }
    this.byModule.set(m.id, ids);
  }

  private remove(module_id: string): void {
    const ids = this.byModule.get(module_id);
    if (ids === undefined) return;
    this.byModule.delete(module_id);
    for (const id of ids) {
      const held = this.byId.get(id);
      this.byId.delete(id);
      if (held === undefined) continue;
      const rest = (this.byName.get(held.info.name) ?? []).filter((x) => x !== id);
      if (rest.length > 0) this.byName.set(held.info.name, rest);
      else this.byName.delete(held.info.name);
    }
  }

  private resolveId(idOrName: string): string | undefined {
    if (this.byId.has(idOrName)) return idOrName;
    if (this.byName.has(idOrName)) return this.candidates(idOrName)[0];
    const tools = this.byModule.get(idOrName);
    return tools?.length === 1 ? tools[0] : undefined;
  }

  /** Tool ids offering short name `name`, most preferred first. */
  private candidates(name: string): string[] {
    const ids = this.byName.get(name) ?? [];
    const rank = (id: string) => {
      const info = this.byId.get(id)!.info;
      return {
        pref: this.order.get(info.module) ?? Infinity,
        // a module another node announces after this daemon's own: a node of the cluster (any
        // serve host) must not take over the short name of a local tool by announcing it
        remote: info.runtime === 'nats' ? 1 : 0,
        mcp: info.runtime === 'mcp' || info.module.startsWith('mcp.') ? 1 : 0, // an MCP server here or on another node
        module: info.module,
      };
    };
    return [...ids].sort((a, b) => {
      const x = rank(a);
      const y = rank(b);
      if (x.pref !== y.pref) return x.pref < y.pref ? -1 : 1;
      if (x.remote !== y.remote) return x.remote - y.remote;
      if (x.mcp !== y.mcp) return x.mcp - y.mcp;
      return x.module < y.module ? -1 : x.module > y.module ? 1 : 0;
    });
  }

  /** The public view of a held tool: a copy, with quarantine and other providers filled in. */
  private view(id: string): ToolInfo | undefined {
    const held = this.byId.get(id);
    if (held === undefined) return undefined;
    const info: ToolInfo = { ...held.info, grants: [...held.info.grants] };
    const q = this.quarantinedOf?.(info.module)?.[info.name];
    if (q !== undefined) info.quarantined = { reason: q.reason };
    const others = this.candidates(info.name).filter((x) => x !== id);
    if (others.length > 0) info.also_offered_by = others.map((x) => this.byId.get(x)!.info.module);
    return info;
  }
}

// The verdict cache of the FirewallEngine's AUTO path: the outcome of layers 1, 3 and 4 (argument
// filter, permission, path sandbox) for a call is a pure function of the policy version, the
// tool's metadata, the principal, the direct flag and the exact arguments — as long as no path
// had to be resolved on disk. Only such AUTO outcomes are kept; the behaviour and metacognitive
// layers (stateful) still run on every call. Bounded: at most `max` keys, then everything is
// dropped at once (no per-call reordering).

import type { EffectivePolicy, PermissionVerdict } from '../policy/evaluate-policy.js';
import type { RiskAssessment } from '../risk/command-model.js';
import type { ToolCallFacts } from './evaluation.js';

/** What layers 1, 3 and 4 concluded about a call that touches no path. */
export interface StaticVerdict {
  readonly shellCall: boolean;
  readonly assessment: RiskAssessment | undefined;
  readonly perm: PermissionVerdict;
}

type Tool = ToolCallFacts['tool'];
type Principal = ToolCallFacts['principal'];

/** One cached verdict and everything besides the key string it depends on. */
interface Entry {
  readonly risk_level: Tool['risk_level'];
  readonly capability_level: Tool['capability_level'];
  readonly permission: Tool['permission'];
  readonly side_effects: boolean;
  readonly input_schema: Tool['input_schema'];
  readonly quarantined: Tool['quarantined'];
  readonly kind: Principal['kind'];
  readonly id: string;
  readonly roles: readonly string[];
  readonly direct: boolean;
  readonly verdict: StaticVerdict;
  /** Another principal or tool version under the same key (at most {@link MAX_CHAIN}). */
  next: Entry | undefined;
}

/** Default bound on cached keys. */
export const DEFAULT_VERDICT_CACHE_SIZE = 4096;
const MAX_CHAIN = 4;

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function matches(e: Entry, t: Tool, p: Principal, direct: boolean): boolean {
  return (
    e.risk_level === t.risk_level &&
    e.capability_level === t.capability_level &&
    e.permission === t.permission &&
    e.side_effects === t.side_effects &&
    e.input_schema === t.input_schema &&
    e.quarantined === t.quarantined &&
    e.kind === p.kind &&
    e.id === p.id &&
    e.direct === direct &&
    sameRoles(e.roles, p.roles)
  );
}

/** Cache statistics (`hits` + `misses` = lookups). */
export interface VerdictCacheStats {
  hits: number;
  misses: number;
  size: number;
  /** Times the policy changed under the cache (everything dropped). */
  policy_resets: number;
  /** Times the cache was full and dropped everything (a generation clear). */
  full_clears: number;
}

/** Argument keys longer than this are not cached (bounds the memory a cache holds). */
export const MAX_CACHED_KEY = 1024;

/**
 * AUTO verdicts of layers 1, 3 and 4 by tool id and argument key ({@link argsKey}); dropped
 * whole when the policy changes, and when it holds `max` keys (a generation clear: the next
 * calls simply evaluate again).
 */
export class VerdictCache {
  readonly #max: number;
  #byTool = new Map<string, Map<string, Entry>>();
  #size = 0;
  #lastTool: string | undefined;
  #lastKeys: Map<string, Entry> | undefined;
  #admin: unknown;
  #user: unknown;
  #hits = 0;
  #misses = 0;
  #resets = 0;
  #clears = 0;

  constructor(max = DEFAULT_VERDICT_CACHE_SIZE) {
    this.#max = Math.max(1, max);
  }

  /**
   * Drops everything when `policy` is not the version the cache was filled under (either
   * layer: compiled policies are immutable, a change makes a new one).
   */
  sync(policy: EffectivePolicy): void {
    if (policy.admin === this.#admin && policy.user === this.#user) return;
    if (this.#size > 0) this.#resets++;
    this.clear();
    this.#admin = policy.admin;
    this.#user = policy.user;
  }

  /**
   * The verdict for (`tool_id`, `key`) when the tool metadata, principal and direct flag are the
   * same; call {@link sync} first. `countMiss` false: a miss the caller will look up again
   * (through the full evaluation) is counted there, once.
   */
  get(
    tool_id: string,
    key: string,
    tool: Tool,
    principal: Principal,
    direct: boolean,
    countMiss = true,
  ): StaticVerdict | undefined {
    const keys = tool_id === this.#lastTool ? this.#lastKeys : this.#keysOf(tool_id);
    for (let e = keys?.get(key); e !== undefined; e = e.next) {
      if (matches(e, tool, principal, direct)) {
        this.#hits++;
        return e.verdict;
      }
    }
    if (countMiss) this.#misses++;
    return undefined;
  }

  /** Remembers an AUTO verdict of layers 1, 3 and 4 (the caller checked that it is pure). */
  set(tool_id: string, key: string, facts: ToolCallFacts, verdict: StaticVerdict): void {
    if (key.length > MAX_CACHED_KEY) return;
    let keys = this.#byTool.get(tool_id);
    let head = keys?.get(key);
    if (head === undefined && this.#size >= this.#max) {
      this.clear();
      this.#clears++;
      keys = undefined;
    }
    if (keys === undefined) {
      keys = new Map();
      this.#byTool.set(tool_id, keys);
      if (this.#lastTool === tool_id) this.#lastKeys = keys;
    }
    if (head === undefined) this.#size++;
    // keep the chain short: the newest first, at most MAX_CHAIN
    let n = 1;
    for (let e = head; e !== undefined; e = e.next) if (++n >= MAX_CHAIN) e.next = undefined;
    const t = facts.tool;
    const p = facts.principal;
    head = {
      risk_level: t.risk_level,
      capability_level: t.capability_level,
      permission: t.permission,
      side_effects: t.side_effects,
      input_schema: t.input_schema,
      quarantined: t.quarantined,
      kind: p.kind,
      id: p.id,
      roles: Object.freeze([...p.roles]),
      direct: facts.direct,
      verdict,
      next: head,
    };
    keys.set(key, head);
  }

  /** Forgets every verdict. */
  clear(): void {
    this.#byTool = new Map();
    this.#size = 0;
    this.#lastTool = undefined;
    this.#lastKeys = undefined;
  }

  /** The keys of `tool_id`, remembered as the last tool looked up. */
  #keysOf(tool_id: string): Map<string, Entry> | undefined {
    const keys = this.#byTool.get(tool_id);
    this.#lastTool = tool_id;
    this.#lastKeys = keys;
    return keys;
  }

  stats(): VerdictCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      size: this.#size,
      policy_resets: this.#resets,
      full_clears: this.#clears,
    };
  }
}

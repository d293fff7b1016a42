// The verdict cache of the FirewallEngine's AUTO path: the outcome of layers 1, 3 and 4 (argument
// filter, permission, path sandbox) for a call is a pure function of the policy version, the
// tool's metadata, the principal, the direct flag and the exact arguments — as long as no path
// had to be resolved on disk. Only such AUTO outcomes are kept; the behaviour and metacognitive
// layers (stateful) still run on every call. Bounded: at most `max` argument sets, then everything
// is dropped at once (no per-call reordering).

import type { RiskAssessment } from '@finger/shell-risk';

import type { EffectivePolicy, PermissionVerdict } from '../policy/evaluate-policy.js';
import type { InternedArgs } from './call-key.js';
import type { ToolCallFacts } from './evaluation.js';

/** What layers 1, 3 and 4 concluded about a call that touches no path. */
export interface StaticVerdict {
  readonly shellCall: boolean;
  readonly assessment: RiskAssessment | undefined;
  readonly perm: PermissionVerdict;
}

type Tool = ToolCallFacts['tool'];
type Principal = ToolCallFacts['principal'];

/** One cached verdict and everything besides the arguments it depends on. */
interface Entry {
  readonly tool_id: string;
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
  /** The metadata object itself when it is frozen (identical then means unchanged), else undefined. */
  readonly frozenTool: Tool | undefined;
  /** Another tool, principal or tool version with the same arguments (at most {@link MAX_CHAIN}). */
  next: Entry | undefined;
}

/** What the cache keeps on an {@link InternedArgs}: its entries, valid in one generation only. */
interface Slot {
  /** The cache that wrote it (an engine's interned arguments are its own; this keeps it so). */
  readonly owner: VerdictCache;
  gen: number;
  head: Entry | undefined;
}

/** Default bound on cached keys. */
export const DEFAULT_VERDICT_CACHE_SIZE = 4096;
const MAX_CHAIN = 8;

/** The tool's metadata as the entry was made under (field by field: another object may hold the same). */
function sameTool(e: Entry, t: Tool): boolean {
  return (
    e.risk_level === t.risk_level &&
    e.capability_level === t.capability_level &&
    e.permission === t.permission &&
    e.side_effects === t.side_effects &&
    e.input_schema === t.input_schema &&
    e.quarantined === t.quarantined
  );
}

function matches(e: Entry, t: Tool, p: Principal, direct: boolean): boolean {
  if (e.kind !== p.kind || e.id !== p.id || e.direct !== direct) return false;
  // a frozen metadata object (the tool registry's) cannot have changed since: no field compares
  if (e.frozenTool !== t && !sameTool(e, t)) return false;
  const a = e.roles;
  const b = p.roles;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
 * AUTO verdicts of layers 1, 3 and 4 by tool id and interned arguments ({@link InternedArgs}):
 * the entries live on the interned arguments themselves, so a look-up is the trie walk that
 * interned them plus a short chain. Dropped whole — a new generation, older entries are never
 * read again — when the policy changes, and when `max` argument sets hold entries (the next calls
 * simply evaluate again).
 */
export class VerdictCache {
  readonly #max: number;
  /** Entries of another generation are stale. */
  #gen = 1;
  #size = 0;
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
   * The verdict for (`tool_id`, `args`) when the tool metadata, principal and direct flag are the
   * same; call {@link sync} first. `countMiss` false: a miss the caller will look up again
   * (through the full evaluation) is counted there, once.
   */
  get(
    tool_id: string,
    args: InternedArgs,
    tool: Tool,
    principal: Principal,
    direct: boolean,
    countMiss = true,
  ): StaticVerdict | undefined {
    const slot = args.verdicts as Slot | undefined;
    if (slot !== undefined && slot.gen === this.#gen && slot.owner === this)
      for (let e = slot.head; e !== undefined; e = e.next) {
        if (e.tool_id === tool_id && matches(e, tool, principal, direct)) {
          this.#hits++;
          return e.verdict;
        }
      }
    if (countMiss) this.#misses++;
    return undefined;
  }

  /** Remembers an AUTO verdict of layers 1, 3 and 4 (the caller checked that it is pure). */
  set(tool_id: string, args: InternedArgs, facts: ToolCallFacts, verdict: StaticVerdict): void {
    if (args.key.length > MAX_CACHED_KEY) return;
    let slot = args.verdicts as Slot | undefined;
    if (slot === undefined || slot.gen !== this.#gen || slot.owner !== this) {
      if (this.#size >= this.#max) {
        this.clear();
        this.#clears++;
      }
      if (slot === undefined || slot.owner !== this)
        args.verdicts = slot = { owner: this, gen: this.#gen, head: undefined };
      else {
        slot.gen = this.#gen;
        slot.head = undefined;
      }
      this.#size++;
    }
    // keep the chain short: the newest first, at most MAX_CHAIN
    let n = 1;
    for (let e = slot.head; e !== undefined; e = e.next) if (++n >= MAX_CHAIN) e.next = undefined;
    const t = facts.tool;
    const p = facts.principal;
    slot.head = {
      tool_id,
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
      frozenTool: Object.isFrozen(t) ? t : undefined,
      next: slot.head,
    };
  }

  /** Forgets every verdict (a new generation). */
  clear(): void {
    this.#gen++;
    this.#size = 0;
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

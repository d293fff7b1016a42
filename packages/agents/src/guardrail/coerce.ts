/**
 * Step 6 of the guardrail: forgive the spellings models use for the right values — enum casing and
 * separators, confidence as `"0.85"` or `"85%"`, booleans as `"true"`, a payload as a JSON string,
 * target casing — and fill the contract's defaults. Nothing here guesses: a value that does not
 * coerce cleanly is left as it was for validation to reject.
 */
import type { GuardrailRegistry, GuardrailRepair } from './guardrail-types.js';
import { clip } from './snippet.js';

/** `Dispatch-Module`, `dispatchModule`, ` DISPATCH MODULE ` → `dispatch_module`. */
export function snakeCase(s: string): string {
  return s
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[\s\-.]+/g, '_')
    .toLowerCase();
}

/** ASCII-only lower case: ids compare case-insensitively with no Unicode folding. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** The enum member `v` spells, or undefined. */
export function coerceEnum<T extends string>(v: unknown, members: readonly T[]): T | undefined {
  if (typeof v !== 'string') return undefined;
  if ((members as readonly string[]).includes(v)) return v as T;
  const s = snakeCase(v);
  return (members as readonly string[]).includes(s) ? (s as T) : undefined;
}

/** A confidence from a number, a numeric string, or a percentage string (`"85%"` → 0.85). */
export function coerceConfidence(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*(%?)\s*$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  return m[2] ? n / 100 : n;
}

/** A boolean from a boolean or the strings `"true"`/`"false"` (any case, trimmed). */
export function coerceBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  return s === 'true' ? true : s === 'false' ? false : undefined;
}

/** A JSON string holding an object, parsed; undefined otherwise. */
export function parseObjectString(v: string): Record<string, unknown> | undefined {
  if (!/^\s*\{/.test(v)) return undefined;
  try {
    const o: unknown = JSON.parse(v);
    return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Where a registered id lives. */
export type TargetKind = 'agent' | 'module' | 'both';

/** Lookup tables of one registry, built once per registry object. */
export interface RegistryIndex {
  /** Exact id → kind. */
  exact: Map<string, TargetKind>;
  /** ASCII-lower-cased id → the registered ids spelling it. */
  lower: Map<string, string[]>;
  /** ASCII-lower-cased high-risk ids. */
  highRisk: Set<string>;
}

const INDEXES = new WeakMap<GuardrailRegistry, RegistryIndex>();

/** The lookup tables of `registry` (cached per object: build a new object when the registry changes). */
export function indexRegistry(registry: GuardrailRegistry): RegistryIndex {
  const cached = INDEXES.get(registry);
  if (cached) return cached;
  const exact = new Map<string, TargetKind>();
  const add = (id: string, kind: 'agent' | 'module'): void => {
    const prev = exact.get(id);
    exact.set(id, prev === undefined || prev === kind ? kind : 'both');
  };
  for (const a of registry.agents) add(a, 'agent');
  for (const m of registry.modules) add(m, 'module');
  const lower = new Map<string, string[]>();
  for (const id of exact.keys()) {
    const k = asciiLower(id);
    const list = lower.get(k);
    if (list) list.push(id);
    else lower.set(k, [id]);
  }
  const index: RegistryIndex = { exact, lower, highRisk: new Set(registry.high_risk.map(asciiLower)) };
  INDEXES.set(registry, index);
  return index;
}

/** The registered id `raw` names (trimmed, then case-insensitively when unambiguous), or undefined. */
export function resolveTarget(raw: string, index: RegistryIndex): string | undefined {
  const t = raw.trim();
  if (index.exact.has(t)) return t;
  const list = index.lower.get(asciiLower(t));
  return list?.length === 1 ? list[0] : undefined;
}

/**
 * True when `target` is listed as high risk (case-insensitively). Exact ids only: a module id in
 * the list means its bare id reaches a high-risk tool, not that every tool of it is high risk.
 */
export function isHighRisk(target: string, index: RegistryIndex): boolean {
  return index.highRisk.has(asciiLower(target));
}

const DECISIONS = ['direct_reply', 'dispatch_agent', 'dispatch_module', 'ask_human', 'reject'] as const;

/**
 * Coerces the masked router fields in place of a copy; records one repair per change. Values that
 * do not coerce stay as they were (validation reports them).
 */
export function coerceRouterFields(
  o: Record<string, unknown>,
  index: RegistryIndex,
  repairs: GuardrailRepair[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...o };
  const note = (kind: string, before: unknown, after: unknown): void => {
    repairs.push({ kind, before: clip(JSON.stringify(before) ?? 'undefined'), after: clip(JSON.stringify(after)) });
  };
  const d = coerceEnum(o.decision, DECISIONS);
  if (d !== undefined && d !== o.decision) {
    note('coerce_decision', o.decision, d);
    out.decision = d;
  }
  const c = coerceConfidence(o.confidence);
  if (c !== undefined && c !== o.confidence) {
    note('coerce_confidence', o.confidence, c);
    out.confidence = c;
  }
  if (o.requires_human === undefined || o.requires_human === null) {
    repairs.push({ kind: 'default_requires_human', after: 'true' });
    out.requires_human = true;
  } else {
    const b = coerceBoolean(o.requires_human);
    if (b !== undefined && b !== o.requires_human) {
      note('coerce_requires_human', o.requires_human, b);
      out.requires_human = b;
    }
  }
  if (o.reason === undefined || o.reason === null) {
    repairs.push({ kind: 'default_reason' });
    out.reason = '';
  }
  if (o.payload === undefined || o.payload === null) {
    repairs.push({ kind: 'default_payload' });
    out.payload = {};
  } else if (typeof o.payload === 'string') {
    const p = parseObjectString(o.payload);
    if (p !== undefined) {
      repairs.push({ kind: 'nested_json_string', detail: 'payload', before: clip(o.payload) });
      out.payload = p;
    }
  }
  if (o.target === undefined) out.target = null;
  else if (typeof o.target === 'string') {
    const t = resolveTarget(o.target, index);
    if (t !== undefined && t !== o.target) {
      note('target_case', o.target, t);
      out.target = t;
    } else if (t === undefined && o.target.trim() !== o.target) out.target = o.target.trim();
  }
  return out;
}

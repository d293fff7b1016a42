/**
 * Step 6 of the guardrail: forgive the spellings models use for the right values — enum casing and
 * separators, confidence as `"0.85"` or `"85%"`, booleans as `"true"`, a payload as a JSON string,
 * target casing — and fill the contract's defaults. Nothing here guesses: a value that does not
 * coerce cleanly is left as it was for validation to reject.
 */
import { scanJson } from './duplicate-keys.js';
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

/** Longest confidence string read (after trimming); a longer one is not a confidence. */
export const MAX_CONFIDENCE_CHARS = 32;

/**
 * A confidence from a number, a numeric string, or a percentage string (`"85%"` → 0.85). A string
 * is trimmed and read only up to {@link MAX_CONFIDENCE_CHARS} characters (longer → undefined, so
 * the schema refuses it), with a pattern that cannot backtrack.
 */
export function coerceConfidence(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (t.length > MAX_CONFIDENCE_CHARS) return undefined;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(%?)$/.exec(t);
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

/**
 * Keys a tool call's arguments may come under (`args` is the contract's; the others are renamed;
 * LangChain's `action_input` among them). Two of them with different values are refused.
 */
export const ARG_KEYS: readonly string[] = [
  'args',
  'arguments',
  'parameters',
  'input',
  'tool_input',
  'params',
  'action_input',
  'tool_args',
];

/** A JSON object held in a string, parsed; or why it is refused. */
export type HeldJson =
  | { ok: true; value: Record<string, unknown> }
  | {
      ok: false;
      /** Path of a key repeated with different values (refused as `duplicate_keys`). */
      duplicate?: string;
      /** What is wrong, as a `$.path message` line. */
      problem: string;
    };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A string holding a JSON object (strict JSON, no repair), parsed — undefined when `v` holds none.
 * Refused like JSON outside a string: a key repeated with different values (`JSON.parse` would keep
 * the last), a number that does not read back as written, nesting too deep. `path` is where the
 * string sits (`$.payload`), for the messages.
 */
export function parseObjectString(v: string, path = '$'): HeldJson | undefined {
  if (!/^\s*\{/.test(v)) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(v);
  } catch {
    return undefined;
  }
  if (!isObject(o)) return undefined;
  const scan = scanJson(v);
  if (scan.duplicate !== undefined) {
    const at = path + scan.duplicate.slice(1);
    return { ok: false, duplicate: at, problem: `${at} appears twice with different values` };
  }
  if (scan.number !== undefined) return { ok: false, problem: path + scan.number.slice(1) };
  if (scan.tooDeep) return { ok: false, problem: `${path} nests too deeply` };
  return { ok: true, value: o };
}

/**
 * The first refusal among the JSON strings coerce will parse in a decision object: a router
 * `payload`, and a tool call's arguments under any of {@link ARG_KEYS} (also under `function`).
 * Run on every candidate before selection, so such a string is refused like JSON outside a string.
 */
export function heldJsonProblem(o: Record<string, unknown>): Extract<HeldJson, { ok: false }> | undefined {
  const held: [string, unknown][] = [['$.payload', o.payload]];
  const calls = Array.isArray(o.tool_calls) ? o.tool_calls : isObject(o.tool_calls) ? [o.tool_calls] : [];
  calls.slice(0, 1024).forEach((c: unknown, i) => {
    if (!isObject(c)) return;
    for (const k of ARG_KEYS) held.push([`$.tool_calls[${i}].${k}`, c[k]]);
    const fn = c.function;
    if (isObject(fn)) for (const k of ARG_KEYS) held.push([`$.tool_calls[${i}].function.${k}`, fn[k]]);
  });
  for (const [path, v] of held) {
    if (typeof v !== 'string') continue;
    const r = parseObjectString(v, path);
    if (r !== undefined && !r.ok) return r;
  }
  return undefined;
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
    // A refused one (repeated key, unreadable number) stays a string: validation rejects it.
    // Selection already refused it as duplicate_keys / unparseable (heldJsonProblem).
    const p = parseObjectString(o.payload, '$.payload');
    if (p?.ok === true) {
      repairs.push({ kind: 'nested_json_string', detail: 'payload', before: clip(o.payload) });
      out.payload = p.value;
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

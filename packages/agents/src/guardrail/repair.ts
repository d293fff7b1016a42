/**
 * Step 2 of the guardrail: turn one extracted fragment into parsed objects. Valid JSON parses as
 * is; anything else goes through jsonrepair (quotes, commas, comments, Python constants, unclosed
 * strings and brackets). A JSON string holding JSON is parsed once more; a one-object array or one
 * known wrapper key is unwrapped. Duplicate keys are detected on the text actually parsed.
 */
import { jsonrepair } from 'jsonrepair';

import { findDuplicateConflict, TOO_DEEP } from './duplicate-keys.js';
import type { Candidate } from './extract.js';
import type { GuardrailRepair } from './guardrail-types.js';
import { clip } from './snippet.js';

/** Keys a decision may arrive wrapped in (tool-call arguments, API envelopes, …). */
export const WRAPPER_KEYS: readonly string[] = [
  'arguments',
  'parameters',
  'input',
  'result',
  'output',
  'response',
  'routing_decision',
  'data',
];

/**
 * Longest broken fragment handed to jsonrepair, and the most characters one answer may have
 * repaired in all: jsonrepair is quadratic on some inputs (unbalanced single quotes: ~0.5 s for
 * 60 KB), and a decision is small. Valid JSON of any length (up to `max_chars`) still parses.
 */
export const MAX_REPAIR_CHARS = 16 * 1024;
export const MAX_REPAIR_TOTAL = 64 * 1024;

/** How many characters the current answer may still have repaired. */
export interface RepairBudget {
  chars: number;
}

/** One parsed object that may be a decision. */
export interface ParsedCandidate {
  value: Record<string, unknown>;
  /** The fragment it came from (raw text, truncated flag). */
  source: Candidate;
  /** Path of a key repeated with different values, when there is one. */
  duplicate?: string;
  /** What parsing this fragment changed (recorded only for the chosen one). */
  repairs: GuardrailRepair[];
}

type Parsed = { ok: true; value: unknown; duplicate?: string } | { ok: false };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses JSON text, repairing it when needed; records a `syntax` repair for a change. Broken
 * answers make JSON.parse and jsonrepair throw, and capturing a stack for each of those errors
 * was the largest cost of the broken path: the stack trace limit is 0 while they run.
 */
function parseText(text: string, repairs: GuardrailRepair[], budget: RepairBudget): Parsed {
  let json = text;
  let value: unknown;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    value = JSON.parse(json);
  } catch {
    if (text.length > MAX_REPAIR_CHARS || text.length > budget.chars) return { ok: false };
    budget.chars -= text.length;
    try {
      json = jsonrepair(text);
      value = JSON.parse(json);
    } catch {
      return { ok: false };
    }
    repairs.push({ kind: 'syntax', before: clip(text), after: clip(json) });
  } finally {
    Error.stackTraceLimit = limit;
  }
  const duplicate = typeof value === 'object' && value !== null ? findDuplicateConflict(json) : undefined;
  if (duplicate === TOO_DEEP) return { ok: false };
  return duplicate === undefined ? { ok: true, value } : { ok: true, value, duplicate };
}

/** A string that holds JSON, parsed once (no further levels). */
function parseNested(value: string, repairs: GuardrailRepair[], budget: RepairBudget): Parsed {
  if (!/^\s*[[{]/.test(value)) return { ok: false };
  const p = parseText(value, repairs, budget);
  if (p.ok) repairs.push({ kind: 'nested_json_string', before: clip(value) });
  return p;
}

/**
 * The objects in `candidate` that pass `isCandidate` (or every object, when none does — select
 * reports why), after the unwrapping rules; null when the fragment cannot be parsed at all.
 */
export function parseCandidate(
  candidate: Candidate,
  isCandidate: (o: Record<string, unknown>) => boolean,
  budget: RepairBudget,
): ParsedCandidate[] | null {
  const repairs: GuardrailRepair[] = [];
  let p = parseText(candidate.text, repairs, budget);
  if (!p.ok) return null;
  let duplicate = p.duplicate;
  let value = p.value;
  if (typeof value === 'string') {
    p = parseNested(value, repairs, budget);
    if (!p.ok) return null;
    value = p.value;
    duplicate ??= p.duplicate;
  }
  const out: ParsedCandidate[] = [];
  const push = (v: Record<string, unknown>, dup: string | undefined): void => {
    const p: ParsedCandidate = { value: v, source: candidate, repairs };
    if (dup !== undefined) p.duplicate = dup;
    out.push(p);
  };
  const objects = (v: unknown): Record<string, unknown>[] => {
    if (isObject(v)) return [v];
    if (!Array.isArray(v)) return [];
    const objs = v.filter(isObject);
    if (objs.length === 1 && v.length === 1) repairs.push({ kind: 'unwrap_array' });
    return objs;
  };
  for (const obj of objects(value)) {
    if (isCandidate(obj)) {
      push(obj, duplicate);
      continue;
    }
    const wrappers = WRAPPER_KEYS.filter(
      (k) => Object.hasOwn(obj, k) && (isObject(obj[k]) || typeof obj[k] === 'string' || Array.isArray(obj[k])),
    );
    if (wrappers.length !== 1) {
      push(obj, duplicate);
      continue;
    }
    const key = wrappers[0]!;
    let inner: unknown = obj[key];
    let dup = duplicate;
    if (typeof inner === 'string') {
      const q = parseNested(inner, repairs, budget);
      if (!q.ok) {
        push(obj, duplicate);
        continue;
      }
      inner = q.value;
      dup ??= q.duplicate;
    }
    const innerObjects = objects(inner);
    if (innerObjects.length === 0) {
      push(obj, duplicate);
      continue;
    }
    repairs.push({ kind: 'unwrap_key', detail: key });
    for (const o of innerObjects) push(o, dup);
  }
  return out;
}

/**
 * Step 5 of the guardrail: keep exactly the whitelisted keys, and copy nested data without the keys
 * that reach an object's prototype (`__proto__`, `constructor`, `prototype`) at any depth, so a
 * payload can never pollute a prototype in the code that consumes it.
 */
import type { GuardrailRepair } from './guardrail-types.js';

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Deepest payload nesting copied; deeper data makes {@link safeCopy} report `tooDeep`. */
export const MAX_PAYLOAD_DEPTH = 64;

/** What {@link safeCopy} dropped, for the repair record. */
export interface CopyReport {
  dropped: string[];
  tooDeep: boolean;
}

/**
 * A deep copy of JSON data without prototype-reaching keys. Objects are plain literals filled by
 * assignment, which is safe once `__proto__` is gone.
 */
export function safeCopy(v: unknown, report: CopyReport, path = '$', depth = 0): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (depth > MAX_PAYLOAD_DEPTH) {
    report.tooDeep = true;
    return null;
  }
  if (Array.isArray(v)) return v.map((x, i) => safeCopy(x, report, `${path}[${i}]`, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    if (FORBIDDEN.has(k)) {
      if (report.dropped.length < 20) report.dropped.push(`${path}.${k}`);
      continue;
    }
    out[k] = safeCopy((v as Record<string, unknown>)[k], report, `${path}.${k}`, depth + 1);
  }
  return out;
}

/**
 * The whitelisted keys of `o` (own keys only, values untouched); records a `mask` repair naming
 * the dropped keys.
 */
export function maskKeys(
  o: Record<string, unknown>,
  whitelist: readonly string[],
  repairs: GuardrailRepair[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of whitelist) if (Object.hasOwn(o, k)) out[k] = o[k];
  const keys = Object.keys(o);
  if (keys.length !== Object.keys(out).length) {
    const dropped = keys.filter((k) => !whitelist.includes(k));
    repairs.push({ kind: 'mask', detail: `dropped keys: ${dropped.slice(0, 20).join(', ')}` });
  }
  return out;
}

// One string per call that names its arguments exactly: the behaviour layer counts calls by it
// (per tool), and the verdict cache looks verdicts up by it (per tool; policy, tool metadata and
// principal compared apart). Built once per call; the same string object serves both maps, so
// its hash is computed once, and the tool id (the registry's own string) is never concatenated.

import { canonicalJson, sha256Hex } from '../audit/canonical-json.js';

/** Argument keys longer than this are hashed (sha256) before the behaviour layer remembers them. */
export const MAX_KEY = 512;
const MAX_FLAT_KEYS = 16;

/**
 * An injective key for a plain object of scalars (strings, finite or not numbers, booleans, null,
 * undefined) — the arguments of most tool calls — without the general canonical walk; null for
 * anything else (nested values, arrays, class instances, more than 16 keys). Keys are sorted
 * (the same arguments in another order give the same key) and every key and string value is
 * length-prefixed, so two different argument objects never share a key: the verdict cache may
 * rely on it. `-0` is told apart from `0`.
 */
export function argsKey(args: unknown): string | null {
  if (typeof args !== 'object' || args === null) return null;
  const proto: unknown = Object.getPrototypeOf(args);
  if (proto !== Object.prototype && proto !== null) return null;
  const keys = Object.keys(args);
  if (keys.length > MAX_FLAT_KEYS) return null;
  if (keys.length > 1) keys.sort();
  let out = '';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = (args as Record<string, unknown>)[k];
    switch (typeof v) {
      case 'string':
        out += `${k.length}:${k}s${v.length}:${v}`;
        break;
      case 'number':
        out += `${k.length}:${k}n${Object.is(v, -0) ? '-0' : String(v)};`;
        break;
      case 'boolean':
        out += `${k.length}:${k}${v ? 't' : 'f'}`;
        break;
      case 'undefined':
        out += `${k.length}:${k}u`;
        break;
      default:
        if (v !== null) return null;
        out += `${k.length}:${k}z`;
    }
  }
  return out;
}

/**
 * The behaviour layer's key for a call's arguments within its tool: {@link argsKey}, or canonical
 * JSON for other arguments; sha256 of it when longer than {@link MAX_KEY} (bounded memory).
 * Identical arguments always give identical keys, whatever the order of their keys.
 */
export function argsFingerprint(args: unknown, key: string | null = argsKey(args)): string {
  let a = key;
  if (a === null) {
    try {
      a = canonicalJson(args ?? null);
    } catch {
      a = String(args);
    }
  }
  return a.length > MAX_KEY ? `#${sha256Hex(a)}` : a;
}

/** The fingerprint of a call across tools: tool id and {@link argsFingerprint}. */
export function callFingerprint(tool_id: string, args: unknown): string {
  return `${tool_id}\u0000${argsFingerprint(args)}`;
}

// Canonical JSON: the one byte form of a JSON value that the audit log hashes. Object keys are
// sorted recursively (by UTF-16 code units, as in RFC 8785 JCS), there is no whitespace, strings
// and numbers are written exactly as JSON.stringify writes them. Everything JSON.stringify drops
// or rewrites is dropped or rewritten the same way (undefined properties are omitted, undefined
// array items and non-finite numbers become null, toJSON() is honoured), so for every value x:
// canonicalJson(JSON.parse(canonicalJson(x))) === canonicalJson(x) — which is what lets
// `verifyAuditLog` recompute a hash from the parsed line.

import { createHash } from 'node:crypto';

/**
 * The canonical JSON text of `value`: keys sorted recursively, no whitespace. Two values that
 * are deep-equal as JSON give the same string whatever the order their keys were inserted in.
 * Throws a TypeError (like JSON.stringify) for a BigInt, a cycle, or a top-level value JSON
 * cannot represent (undefined, a function, a symbol).
 */
export function canonicalJson(value: unknown): string {
  const out = write(value, '', []);
  if (out === undefined) throw new TypeError(`canonicalJson: ${typeof value} is not JSON-serializable`);
  return out;
}

/** Serializes one value; undefined means "omit" (as JSON.stringify does for properties). */
function write(value: unknown, key: string, ancestors: object[]): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalJson: a BigInt is not JSON-serializable');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (ancestors.includes(obj)) throw new TypeError('canonicalJson: the value contains a cycle');
  ancestors.push(obj);
  let out: string;
  if (Array.isArray(obj)) {
    const items: string[] = [];
    for (let i = 0; i < obj.length; i++) items.push(write(obj[i], String(i), ancestors) ?? 'null');
    out = `[${items.join(',')}]`;
  } else if (obj instanceof String || obj instanceof Number || obj instanceof Boolean) {
    out = write(obj.valueOf(), key, ancestors) ?? 'null';
  } else {
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(record).sort()) {
      const v = write(record[k], k, ancestors);
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${v}`);
    }
    out = `{${parts.join(',')}}`;
  }
  ancestors.pop();
  return out;
}

/** Lowercase hex sha256 of the UTF-8 bytes of the given strings, concatenated. */
export function sha256Hex(...parts: string[]): string {
  return createHash('sha256')
    .update(parts.length === 1 ? (parts[0] as string) : parts.join(''), 'utf8')
    .digest('hex');
}

/**
 * The digest the audit log stores instead of a value (tool arguments, results): sha256 hex of its
 * canonical JSON. Equal values give equal digests whatever their key order, so a caller holding
 * the arguments can prove which entry they belong to, while the log never holds the arguments
 * themselves (they may carry secrets). Throws a TypeError when the value is not serializable.
 */
export function digestOf(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

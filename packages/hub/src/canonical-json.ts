import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level and `undefined` members dropped, so equal
 * definitions hash equally whatever order a server sends its keys in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** `sha256:<hex>` of the canonical JSON of a call's payload: which arguments a request id was first used with. */
export function payloadDigest(payload: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(payload ?? null))
    .digest('hex')}`;
}

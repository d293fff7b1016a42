// The keys the hub compares a request id's arguments by: `payloadDigest` between daemons (stores
// they share) and `argsKey` inside one process. Both are over canonical JSON (`@finger/protocol`),
// so the same arguments give the same key whatever order their keys were written in.

import { hash } from 'node:crypto';

import { canonicalJson } from '@finger/protocol';

/** `sha256:<hex>` of the canonical JSON of a call's payload: which arguments a request id was first used with. */
export function payloadDigest(payload: unknown): string {
  // one-shot hash: no Hash object per call
  return `sha256:${hash('sha256', canonicalJson(payload ?? null), 'hex')}`;
}

/** Canonical JSON up to this length is its own arguments key; longer is digested. */
const ARGS_KEY_INLINE = 160;

/**
 * What a request id's arguments are compared by inside one process: the canonical JSON itself
 * when short (exact, and no hash to compute), `sha256:<hex>` of it otherwise (a record stays
 * small). The two never collide: canonical JSON never starts with `s`. Stores shared between
 * daemons use {@link payloadDigest}.
 */
export function argsKey(payload: unknown): string {
  const json = flatCanonical(payload) ?? canonicalJson(payload ?? null);
  return json.length <= ARGS_KEY_INLINE ? json : `sha256:${hash('sha256', json, 'hex')}`;
}

/**
 * The canonical JSON of the common small payload — a plain object of at most 8 keys, already in
 * sorted order, whose values are strings, finite numbers, booleans or null — in one native
 * JSON.stringify (the same text canonicalJson writes); undefined for anything else.
 */
function flatCanonical(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  if (Object.getPrototypeOf(payload) !== Object.prototype) return undefined;
  const obj = payload as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length > 8) return undefined;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && keys[i - 1]! >= keys[i]!) return undefined;
    const v = obj[keys[i]!];
    const t = typeof v;
    if (t === 'string' || t === 'boolean' || v === null) continue;
    if (t === 'number' && Number.isFinite(v)) continue;
    return undefined;
  }
  return JSON.stringify(obj);
}

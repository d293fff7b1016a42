// The audit log's hashes: sha256 of canonical JSON (`canonicalJson`, one implementation for all
// of finger in `@finger/protocol`, whose bytes are the ones this log has always hashed) and the
// digest an entry stores instead of a value. `canonicalJson` is re-exported here for the
// firewall's own files.

import { hash } from 'node:crypto';

import { canonicalJson } from '@finger/protocol';

export { canonicalJson };

/**
 * Lowercase hex sha256 of the UTF-8 bytes of the given strings, concatenated. One-shot
 * `crypto.hash` (no Hash object per call: half the CPU of createHash…digest on an audit line).
 */
export function sha256Hex(...parts: string[]): string {
  return hash('sha256', parts.length === 1 ? (parts[0] as string) : parts.join(''), 'hex');
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

// The audit entry: its shape, how it is hashed, and how a line of the log is assembled.
//
// hash = sha256(prev_hash + canonicalJson(entry without `hash`)), hex. The first entry (seq 1)
// links to GENESIS_HASH, 64 zeros. A line on disk is the canonical JSON of the whole entry
// (`hash` included) followed by "\n", so every line is also byte-for-byte canonical.

import { FingerError, jsonString } from '@finger/protocol';

import { canonicalJson, digestOf, sha256Hex } from './canonical-json.js';

/** prev_hash of the first entry (seq 1) of every audit log: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Kinds of audit entries. Closed on purpose: a typo must not create a kind that
 * `read({type})` would never find.
 * - `tool.call`: the firewall's verdict on a tool call, written (and fsync'd) before it runs
 * - `tool.result`: the outcome of a call that ran (`result_digest`)
 * - `approval.requested` / `approval.resolved`: a hold for a person, and its answer
 *   (`decision`: approve, approve_edited, reject, always, abort, timeout)
 * - `policy.changed`: a UserPolicy change (set, reset, adaptation)
 * - `grant.changed`, `breaker.tripped`, `halt`, `unlock`, `undo`
 * - `module.changed`: a module registered or unregistered over HTTP
 * - `token.changed`: a token created or revoked (its name and role, never the token)
 * - `route.decision`: the ingress router's decision on one text input, with every model attempt
 * - `audit.acknowledged`: the first entry of a chain started by `myfinger audit acknowledge` over a
 *   broken one — what was lost, the heads it supersedes, who acknowledged it (audit-acknowledge.ts)
 */
export const AUDIT_ENTRY_TYPES = [
  'tool.call',
  'tool.result',
  'approval.requested',
  'approval.resolved',
  'policy.changed',
  'grant.changed',
  'breaker.tripped',
  'halt',
  'unlock',
  'undo',
  'module.changed',
  'token.changed',
  'route.decision',
  'task.step',
  'task.state',
  'audit.acknowledged',
] as const;

/** One of {@link AUDIT_ENTRY_TYPES}. */
export type AuditEntryType = (typeof AUDIT_ENTRY_TYPES)[number];

/** Who caused an entry: a principal's kind and id (roles are not recorded). */
export interface AuditActor {
  kind: string;
  id: string;
}

/** One line of the audit log (§3.8). Absent facts are `null`; `details` is omitted when empty. */
export interface AuditEntry {
  /** 1, 2, 3, … without gaps, across segment files. */
  seq: number;
  /** RFC 3339 UTC time the entry was appended. */
  ts: string;
  type: AuditEntryType;
  actor: AuditActor | null;
  request_id: string | null;
  correlation_id: string | null;
  tool: string | null;
  /** {@link digestOf} the call's arguments: the arguments themselves are never stored. */
  args_digest: string | null;
  /**
   * The firewall's Evaluation, as-is except its `preview` (a diff or the full command, which may
   * hold secrets): that is replaced by `preview_digest`, {@link digestOf} the preview.
   */
  verdict: unknown;
  decision: string | null;
  /** {@link digestOf} the call's result. */
  result_digest: string | null;
  /** Non-secret facts (reasons, policy diff summary, breaker name…). */
  details?: Record<string, unknown>;
  /** `hash` of the previous entry, {@link GENESIS_HASH} for seq 1. */
  prev_hash: string;
  /** sha256(prev_hash + canonical JSON of this entry without `hash`), lowercase hex. */
  hash: string;
}

/**
 * What a caller appends. Raw `args` and `result` are digested on the spot and never stored;
 * pass `args_digest` / `result_digest` instead when only the digest is at hand.
 */
export interface AuditRecord {
  type: AuditEntryType;
  actor?: AuditActor | null;
  request_id?: string | null;
  correlation_id?: string | null;
  tool?: string | null;
  args?: unknown;
  args_digest?: string | null;
  /** The Evaluation; its `preview` is stored only as `preview_digest`. */
  verdict?: unknown;
  decision?: string | null;
  result?: unknown;
  result_digest?: string | null;
  details?: Record<string, unknown>;
}

/**
 * An entry frozen at append time (so later mutation by the caller changes nothing), waiting
 * for its seq and prev_hash. `head` and `tail` are canonical JSON fragments around them.
 */
export interface EntryDraft {
  /** The entry's fields but the verdict (kept as its JSON until an entry object is wanted) and the chain's. */
  entry: Omit<AuditEntry, 'seq' | 'prev_hash' | 'hash' | 'verdict'>;
  /** The canonical JSON of the verdict, as hashed and written. */
  verdictJson: string;
  /** `{"actor":…,…,"details":…,` — the keys sorting before `hash`. */
  head: string;
  /** `,"request_id":…,"result_digest":…,"seq":` — between prev_hash and the seq digits. */
  mid: string;
  /** `,"tool":…,"ts":…,"type":…,"verdict":…}`. */
  tail: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const TYPES: ReadonlySet<string> = new Set(AUDIT_ENTRY_TYPES);

function invalid(message: string): FingerError {
  return new FingerError('E_INVALID_ARGS', `audit record: ${message}`);
}

function optString(record: AuditRecord, key: 'request_id' | 'correlation_id' | 'tool' | 'decision'): string | null {
  const v = record[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw invalid(`${key} must be a string or null`);
  return v;
}

function digestField(record: AuditRecord, raw: 'args' | 'result', key: 'args_digest' | 'result_digest'): string | null {
  const given = record[key];
  if (given !== undefined && given !== null) {
    if (typeof given !== 'string' || !HEX64.test(given)) throw invalid(`${key} must be 64 lowercase hex digits`);
    return given;
  }
  const value = record[raw];
  if (value === undefined) return null;
  try {
    return digestOf(value);
  } catch (e) {
    throw invalid(`${raw} is not JSON-serializable (${(e as Error).message})`);
  }
}

/** JSON of a string-or-null field (canonical: nothing to sort). */
function str(v: string | null): string {
  return v === null ? 'null' : jsonString(v);
}

/** JSON of a digest field: lowercase hex (checked or made by {@link digestField}) needs no escape scan. */
function hex(v: string | null): string {
  return v === null ? 'null' : `"${v}"`;
}

function canon(value: unknown, what: string): string {
  try {
    return canonicalJson(value);
  } catch (e) {
    throw invalid(`${what} is not JSON-serializable (${(e as Error).message})`);
  }
}

/** The verdict to store: null for none; an object's `preview` replaced by its digest. */
function withoutPreview(verdict: unknown): unknown {
  if (verdict === undefined) return null;
  if (typeof verdict !== 'object' || verdict === null || !('preview' in verdict)) return verdict;
  const { preview, ...rest } = verdict as Record<string, unknown>;
  if (preview === undefined) return rest;
  try {
    return { ...rest, preview_digest: digestOf(preview) };
  } catch (e) {
    throw invalid(`verdict.preview is not JSON-serializable (${(e as Error).message})`);
  }
}

/**
 * Validates a record and freezes it into a draft stamped `ts`. Throws E_INVALID_ARGS for an
 * unknown type, a malformed digest or field, or a verdict/details that JSON cannot represent.
 */
export function draftEntry(record: AuditRecord, ts: string): EntryDraft {
  if (typeof record !== 'object' || record === null) throw invalid('must be an object');
  if (!TYPES.has(record.type)) throw invalid(`unknown type ${JSON.stringify(record.type)}`);
  let actor: AuditActor | null = null;
  if (record.actor !== undefined && record.actor !== null) {
    const { kind, id } = record.actor;
    if (typeof kind !== 'string' || typeof id !== 'string') throw invalid('actor must be {kind, id} strings');
    actor = { kind, id };
  }
  const details = record.details;
  if (details !== undefined && (typeof details !== 'object' || details === null || Array.isArray(details))) {
    throw invalid('details must be an object');
  }
  const entry: EntryDraft['entry'] = {
    ts,
    type: record.type,
    actor,
    request_id: optString(record, 'request_id'),
    correlation_id: optString(record, 'correlation_id'),
    tool: optString(record, 'tool'),
    args_digest: digestField(record, 'args', 'args_digest'),
    decision: optString(record, 'decision'),
    result_digest: digestField(record, 'result', 'result_digest'),
  };
  const detailsJson = details === undefined ? '{}' : canon(details, 'details');
  const verdictJson = canon(withoutPreview(record.verdict), 'verdict');
  // Return exactly what was hashed and written (undefined fields dropped, a frozen copy; the
  // verdict's copy is made by sealedEntry).
  if (detailsJson !== '{}') entry.details = JSON.parse(detailsJson) as Record<string, unknown>;
  const actorJson = actor === null ? 'null' : `{"id":${str(actor.id)},"kind":${str(actor.kind)}}`;
  const head =
    `{"actor":${actorJson},"args_digest":${hex(entry.args_digest)},"correlation_id":${str(entry.correlation_id)}` +
    `,"decision":${str(entry.decision)},${detailsJson === '{}' ? '' : `"details":${detailsJson},`}`;
  const mid = `,"request_id":${str(entry.request_id)},"result_digest":${hex(entry.result_digest)},"seq":`;
  const tail = `,"tool":${str(entry.tool)},"ts":${str(ts)},"type":"${entry.type}","verdict":${verdictJson}}`;
  return { entry, verdictJson, head, mid, tail };
}

/** A draft chained after `prevHash` as entry `seq`: its hash and its line ("\n"-terminated). */
export function sealEntry(draft: EntryDraft, seq: number, prevHash: string): { hash: string; line: string } {
  const hashed = `${prevHash}${draft.head}"prev_hash":"${prevHash}"${draft.mid}${seq}${draft.tail}`;
  const hash = sha256Hex(hashed);
  // The line is what was hashed, without the leading prev_hash, with `"hash":…,` put in after the
  // head. Hashing made `hashed` one flat string, so these two slices of it are views: the batch's
  // join copies them as they are, instead of walking the pieces the draft was built of once more
  // (≈ 10 % of an entry's draft, seal and write).
  const at = prevHash.length + draft.head.length;
  return { hash, line: `${hashed.slice(prevHash.length, at)}"hash":"${hash}",${hashed.slice(at)}\n` };
}

/**
 * The entry object of a draft sealed as `seq` after `prev_hash` with `hash` (see {@link sealEntry}):
 * its fields in the draft's order, the verdict parsed back from what was hashed (a frozen copy),
 * then seq, prev_hash and hash — written out, not spread (a spread of the draft's fields cost
 * ≈ 3 µs an entry, more than its hash), one object shape with `details` and one without.
 */
export function sealedEntry(draft: EntryDraft, seq: number, prev_hash: string, hash: string): AuditEntry {
  const { ts, type, actor, request_id, correlation_id, tool, args_digest, decision, result_digest, details } =
    draft.entry;
  const verdict = JSON.parse(draft.verdictJson) as unknown;
  return details === undefined
    ? {
        ts,
        type,
        actor,
        request_id,
        correlation_id,
        tool,
        args_digest,
        verdict,
        decision,
        result_digest,
        seq,
        prev_hash,
        hash,
      }
    : {
        ts,
        type,
        actor,
        request_id,
        correlation_id,
        tool,
        args_digest,
        verdict,
        decision,
        result_digest,
        details,
        seq,
        prev_hash,
        hash,
      };
}

/** The hash an entry parsed from a line must carry: sha256(prev_hash + canonical JSON without hash). */
export function computeEntryHash(entry: Record<string, unknown>): string {
  const { hash: _hash, ...rest } = entry;
  return sha256Hex(String(entry.prev_hash), canonicalJson(rest));
}

/**
 * Checks the fields the chain depends on. Returns null when they are well-formed, else what is
 * wrong (the hash check then catches any other change).
 */
export function entryShapeProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const e = value as Record<string, unknown>;
  if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq) || e.seq < 1) return 'seq is not a positive integer';
  if (typeof e.hash !== 'string' || !HEX64.test(e.hash)) return 'hash is not 64 lowercase hex digits';
  if (typeof e.prev_hash !== 'string' || !HEX64.test(e.prev_hash)) return 'prev_hash is not 64 lowercase hex digits';
  return null;
}

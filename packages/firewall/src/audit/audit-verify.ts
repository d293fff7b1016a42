// verifyAuditLog: recomputes the whole hash chain from the segment files alone, so it works with
// the daemon stopped (`myfinger audit verify`) as well as behind `GET /v1/audit/verify`.

import { stat } from 'node:fs/promises';

import { FingerError } from '@finger/protocol';

import { ANCHOR_FILE, readAnchor } from './audit-anchor.js';
import { computeEntryHash, entryShapeProblem, GENESIS_HASH } from './audit-entry.js';
import { listSegments, readSegmentLines, segmentName, segmentPath } from './audit-files.js';
import type { AuditHead, SourcedHead } from './audit-head.js';

/** Outcome of {@link verifyAuditLog}; also the JSON `myfinger audit verify --json` prints. */
export interface AuditVerifyResult {
  ok: boolean;
  /** Entry lines found in the log (all of them, including any after the first bad one). */
  entries: number;
  /** seq of the first bad entry (see {@link verifyAuditLog}), null when ok. */
  first_bad: number | null;
  /** What is wrong with it, naming the file and line; null when ok. */
  reason: string | null;
  /**
   * Set when the chain was checked from an archive anchor (`audit archive`): entries up to this
   * seq are in the archive, not here (check them there).
   */
  archived_through?: number;
}

/** Options of {@link verifyAuditLog}. */
export interface AuditVerifyOptions {
  /** Read at most this many bytes of the given segment numbers (the live log's acknowledged size). */
  limits?: ReadonlyMap<number, number>;
  /** Ignore segments numbered above this one (a live log's segment being created). */
  through_segment?: number;
  /**
   * Copies of the log's head kept elsewhere (`state/audit-head.json`, Redis, an operator's copy
   * given to `audit verify --anchor`): the log must reach each of them, with the same hash.
   */
  heads?: readonly SourcedHead[];
}

/** What {@link scanAuditLog} found besides the verdict (for `audit acknowledge`). */
export interface AuditScan {
  result: AuditVerifyResult;
  /** The last entry of the intact chain (null when there is none). */
  last: (AuditHead & { where: string }) | null;
}

interface Misplaced {
  expected: number;
  found: number;
  where: string;
  seen: boolean;
}

/**
 * Verifies the audit log in `dir` (`FINGER_HOME/audit`): every line must parse, carry the hash
 * recomputed from its content (sha256(prev_hash + canonical JSON without hash)), link to the
 * previous entry's hash (GENESIS_HASH for the first) and have seq = previous seq + 1; the last
 * line must end with "\n". When the first segments were archived (`archived.json`, see
 * audit-anchor.ts, and segment 1 is gone), the chain is checked from the anchor: the first entry
 * here must follow the anchor's seq and hash (`archived_through` says so); when segment 1 is
 * still here, from the start, the anchor's entry checked against it. Reads the files directly.
 *
 * A chain alone cannot prove that nothing was cut from its end: a missing or empty directory is
 * an empty, valid chain. `options.heads` (the audit head, audit-head.ts) supply that proof — the
 * log must hold each head's entry with its hash — and name what is missing otherwise, `first_bad`
 * the first missing entry: `missing: …` (no entries at all), `truncated: 1,204 entries missing …`
 * (the log ends before the head: cut short or replaced by an older copy), `rewritten: …` (the
 * head's entry has another hash). A head that an `audit.acknowledged` entry of the chain names as
 * superseded is not compared (`myfinger audit acknowledge` started this chain over it).
 *
 * `first_bad` names the first bad entry by seq:
 * - a line whose content no longer matches its hash (any changed byte, an unparseable or
 *   truncated line) is reported as the seq that line should have had (previous seq + 1);
 * - an intact entry in the wrong place: when the entry expected there appears later in the log
 *   (entries were reordered) the expected seq is reported; when it appears nowhere (entries were
 *   removed) the seq of the entry found after the gap is reported;
 * - an intact entry whose prev_hash does not link to its predecessor: its seq.
 *
 * Rejects with E_STORE_UNAVAILABLE when the directory or a segment cannot be read.
 */
export async function verifyAuditLog(dir: string, options: AuditVerifyOptions = {}): Promise<AuditVerifyResult> {
  return (await scanAuditLog(dir, options)).result;
}

/** {@link verifyAuditLog}, also returning the last entry of the intact chain. */
export async function scanAuditLog(dir: string, options: AuditVerifyOptions = {}): Promise<AuditScan> {
  try {
    return await verifyChain(dir, options);
  } catch (e) {
    throw new FingerError(
      'E_STORE_UNAVAILABLE',
      `audit log ${dir} cannot be read: ${(e as Error).message}`,
      undefined,
      {
        cause: e,
      },
    );
  }
}

async function verifyChain(dir: string, options: AuditVerifyOptions): Promise<AuditScan> {
  let entries = 0;
  let expected = 1;
  let prevHash = GENESIS_HASH;
  let lastWhere = '';
  /** The log's last line, whatever the chain before it. */
  let lastText: string | null = null;
  let bad: { seq: number; reason: string } | null = null;
  let misplaced: Misplaced | null = null;
  const anchor = await readAnchor(dir);
  const segments = await listSegments(dir);
  /** The chain starts at the anchor: segments up to its own were archived. */
  const fromAnchor = anchor !== undefined && segments[0] !== 1;
  if (fromAnchor) {
    expected = anchor.seq + 1;
    prevHash = anchor.hash;
  }
  const heads = (options.heads ?? []).filter((h) => h.seq > 0);
  /** The hash (and place) of each entry a head names, as found in the intact chain. */
  const atHead = new Map<number, { hash: string; where: string }>();
  const wanted = new Set(heads.map((h) => h.seq));
  /** Heads named by `audit acknowledge` as superseded (`seq:hash`). */
  const acknowledged = new Set<string>();

  for (const n of segments) {
    if (options.through_segment !== undefined && n > options.through_segment) break;
    if (fromAnchor && n <= anchor.through_segment) continue; // left over from an archiving: in the archive
    const path = segmentPath(dir, n);
    const limit = options.limits?.get(n) ?? (await stat(path)).size;
    for await (const line of readSegmentLines(path, limit)) {
      entries++;
      lastText = line.text;
      const where = `${segmentName(n)}:${line.lineNo}`;
      if (bad !== null) continue;
      if (misplaced !== null) {
        if (!misplaced.seen && intactSeq(line.text) === misplaced.expected) misplaced.seen = true;
        continue;
      }
      const problem = checkLine(line.text, line.terminated);
      if (typeof problem === 'string') {
        bad = { seq: expected, reason: `${where}: ${problem}` };
        continue;
      }
      const entry = problem;
      if (entry.seq !== expected) {
        if (entry.seq > expected) misplaced = { expected, found: entry.seq, where, seen: false };
        else bad = { seq: expected, reason: `${where}: found seq ${entry.seq} where seq ${expected} was expected` };
        continue;
      }
      if (entry.prev_hash !== prevHash) {
        bad = {
          seq: expected,
          reason: `${where}: prev_hash does not match the hash of the ${
            fromAnchor && expected === anchor.seq + 1 ? `last archived entry (${ANCHOR_FILE})` : 'entry before it'
          }`,
        };
        continue;
      }
      if (anchor !== undefined && !fromAnchor && entry.seq === anchor.seq && entry.hash !== anchor.hash) {
        bad = { seq: expected, reason: `${where}: ${ANCHOR_FILE} names another hash for entry ${entry.seq}` };
        continue;
      }
      if (wanted.has(entry.seq)) atHead.set(entry.seq, { hash: entry.hash, where });
      if (entry.type === 'audit.acknowledged') for (const k of supersededHeads(entry)) acknowledged.add(k);
      prevHash = entry.hash;
      lastWhere = where;
      expected++;
    }
  }
  if (misplaced !== null) {
    const { expected: e, found, where, seen } = misplaced;
    bad = seen
      ? { seq: e, reason: `${where}: entries are out of order: seq ${found} found where seq ${e} belongs` }
      : {
          seq: found,
          reason:
            `${where}: ${found - e === 1 ? `entry ${e} is` : `entries ${e}..${found - 1} are`} missing ` +
            `before entry ${found}` +
            (e === 1 && anchor === undefined && segments[0] !== 1
              ? ' (segments moved away by hand? `myfinger audit archive --to <dir>` moves closed segments and records where the chain goes on)'
              : ''),
        };
  }
  const lastSeq = expected - 1;
  const chainStart = fromAnchor ? anchor.seq : 0;
  for (const h of heads) {
    if (acknowledged.has(`${h.seq}:${h.hash}`)) continue;
    const found = headProblem(h, {
      atHead,
      lastSeq,
      lastWhere,
      chainStart,
      archived: fromAnchor ? anchor : undefined,
      brokenAt: bad?.seq,
      endSeq: lastText === null ? null : intactSeq(lastText),
      dir,
    });
    if (found === null) continue;
    if (bad === null || found.seq < bad.seq) bad = { seq: found.seq, reason: found.reason };
    else bad = { seq: bad.seq, reason: `${bad.reason}; and ${found.reason}` };
  }
  const archived = fromAnchor ? { archived_through: anchor.seq } : {};
  const result: AuditVerifyResult =
    bad === null
      ? { ok: true, entries, first_bad: null, reason: null, ...archived }
      : { ok: false, entries, first_bad: bad.seq, reason: bad.reason, ...archived };
  return { result, last: lastSeq > chainStart ? { seq: lastSeq, hash: prevHash, where: lastWhere } : null };
}

/** What the chain scan knows when a head is compared with it. */
interface HeadContext {
  atHead: ReadonlyMap<number, { hash: string; where: string }>;
  /** seq of the last entry of the intact chain (chainStart when there is none). */
  lastSeq: number;
  lastWhere: string;
  /** seq before the first entry here (0, or the archive anchor's). */
  chainStart: number;
  archived: { seq: number; hash: string } | undefined;
  /** seq of the first bad entry of the chain itself, if any. */
  brokenAt: number | undefined;
  /** seq of the log's last line when it is an intact entry. */
  endSeq: number | null;
  dir: string;
}

/**
 * Why the log does not reach head `h` (`first_bad` and reason), or null when it does: the entry
 * `h.seq` is in the chain with `h.hash`. Past a break of the chain itself nothing is counted: the
 * head is only named next to the break when the log's last line comes before it.
 */
function headProblem(h: SourcedHead, c: HeadContext): { seq: number; reason: string } | null {
  if (c.archived !== undefined && h.seq <= c.archived.seq) {
    // archived: only the archive's last entry is known here (the archive itself checks the rest)
    if (h.seq < c.archived.seq || h.hash === c.archived.hash) return null;
    return {
      seq: h.seq,
      reason: `rewritten: ${h.source} records entry ${fmt(h.seq)} with hash ${short(h.hash)}, ${ANCHOR_FILE} names ${short(c.archived.hash)}`,
    };
  }
  const at = c.atHead.get(h.seq);
  if (at !== undefined) {
    if (at.hash === h.hash) return null;
    return {
      seq: h.seq,
      reason:
        `rewritten: entry ${fmt(h.seq)} (${at.where}) has hash ${short(at.hash)} but ${h.source} records ` +
        `${short(h.hash)} — the log was replaced or rewritten at or before that entry`,
    };
  }
  const records = `${h.source} records entry ${fmt(h.seq)} (hash ${short(h.hash)})`;
  // past a break of the chain itself, what follows cannot be counted: only a log ending before the head is named
  if (c.brokenAt !== undefined && c.brokenAt <= h.seq)
    return c.endSeq !== null && c.endSeq >= h.seq
      ? null
      : { seq: c.brokenAt, reason: `${records}, past the log's end` };
  const missing = h.seq - c.lastSeq;
  if (c.lastSeq === c.chainStart)
    return {
      seq: c.chainStart + 1,
      reason: `missing: no audit entries in ${c.dir} but ${records}: ${fmt(missing)} ${plural(missing)} missing (the log was emptied or deleted)`,
    };
  return {
    seq: c.lastSeq + 1,
    reason:
      `truncated: ${fmt(missing)} ${plural(missing)} missing — the log ends at entry ${fmt(c.lastSeq)} (${c.lastWhere}) ` +
      `but ${records} (cut short, or replaced by an older copy)`,
  };
}

/** `seq:hash` of each head an `audit.acknowledged` entry names as superseded. */
function supersededHeads(entry: ChainFields): string[] {
  const list = (entry.details as { previous_heads?: unknown } | undefined)?.previous_heads;
  if (!Array.isArray(list)) return [];
  return list.flatMap((h: unknown) => {
    const { seq, hash } = (h ?? {}) as Partial<AuditHead>;
    return typeof seq === 'number' && typeof hash === 'string' ? [`${seq}:${hash}`] : [];
  });
}

/** 1204 → "1,204". */
function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function plural(n: number): string {
  return n === 1 ? 'entry' : 'entries';
}

/** The first 12 hex digits of a hash, for messages. */
function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
}

interface ChainFields {
  seq: number;
  hash: string;
  prev_hash: string;
  type?: unknown;
  details?: unknown;
}

/** The entry of an intact line, or what is wrong with the line. */
function checkLine(text: string, terminated: boolean): ChainFields | string {
  if (!terminated) return 'the last line is incomplete (no final newline: a torn write or truncation)';
  if (text.length === 0) return 'empty line';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the line is not valid JSON';
  }
  const shape = entryShapeProblem(value);
  if (shape !== null) return shape;
  const entry = value as Record<string, unknown> & ChainFields;
  if (computeEntryHash(entry) !== entry.hash) return 'hash mismatch: the entry was changed after it was written';
  return entry;
}

/** seq of an intact line (parses, well-formed, hash matches), else null. */
function intactSeq(text: string): number | null {
  const r = checkLine(text, true);
  return typeof r === 'string' ? null : r.seq;
}

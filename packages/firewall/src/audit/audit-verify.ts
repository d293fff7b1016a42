// verifyAuditLog: recomputes the whole hash chain from the segment files alone, so it works with
// the daemon stopped (`myfinger audit verify`) as well as behind `GET /v1/audit/verify`.

import { stat } from 'node:fs/promises';

import { FingerError } from '@finger/protocol';

import { ANCHOR_FILE, readAnchor } from './audit-anchor.js';
import { computeEntryHash, entryShapeProblem, GENESIS_HASH } from './audit-entry.js';
import { listSegments, readSegmentLines, segmentName, segmentPath } from './audit-files.js';

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
 * still here, from the start, the anchor's entry checked against it. Reads the files directly; a missing or empty directory is an empty,
 * valid log (a chain cannot prove that nothing was deleted at its end: keep the head hash of a
 * backup to compare).
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

async function verifyChain(dir: string, options: AuditVerifyOptions): Promise<AuditVerifyResult> {
  let entries = 0;
  let expected = 1;
  let prevHash = GENESIS_HASH;
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

  for (const n of segments) {
    if (options.through_segment !== undefined && n > options.through_segment) break;
    if (fromAnchor && n <= anchor.through_segment) continue; // left over from an archiving: in the archive
    const path = segmentPath(dir, n);
    const limit = options.limits?.get(n) ?? (await stat(path)).size;
    for await (const line of readSegmentLines(path, limit)) {
      entries++;
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
      prevHash = entry.hash;
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
  const archived = fromAnchor ? { archived_through: anchor.seq } : {};
  return bad === null
    ? { ok: true, entries, first_bad: null, reason: null, ...archived }
    : { ok: false, entries, first_bad: bad.seq, reason: bad.reason, ...archived };
}

interface ChainFields {
  seq: number;
  hash: string;
  prev_hash: string;
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

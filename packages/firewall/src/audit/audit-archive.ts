// archiveAuditLog (`myfinger audit archive --to <dir>`): moves the closed segments of an audit
// log to an archive directory and records in `archived.json` (audit-anchor.ts) where the chain
// goes on, so the log here still verifies and continues. Safe while the daemon runs: it only ever
// appends to the newest segment, which stays.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { constants, copyFile, mkdir, open, realpath, stat, unlink } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';

import { FingerError, isFingerError, rfc3339 } from '@finger/protocol';

import { ANCHOR_FILE, type AuditAnchor, readAnchor, writeAnchor } from './audit-anchor.js';
import { listSegments, readLastLine, segmentName, segmentPath } from './audit-files.js';
import { verifyAuditLog } from './audit-verify.js';

/** What {@link archiveAuditLog} did. */
export interface AuditArchiveResult {
  /** Segment files moved (none when only the newest segment is here). */
  archived: string[];
  /** The archive directory (absolute). */
  to: string;
  /** The anchor now in force (undefined: nothing was ever archived). */
  anchor?: AuditAnchor;
}

/**
 * Moves every segment of the log in `dir` but the newest to `to` (created with mode 0700): each
 * is copied, synced and compared before the anchor is written and the original removed, so a
 * crash at any point loses nothing (a copy left behind is skipped by verify, or copied again).
 * Rejects with E_INVALID_ARGS when `to` is the log's directory or inside it, E_CONFLICT when the
 * chain to be archived is broken (nothing is moved: `audit verify` locates it) or `to` holds a
 * different file of a segment's name, E_STORE_UNAVAILABLE when a file cannot be read or written.
 */
export async function archiveAuditLog(
  dir: string,
  to: string,
  o: { clock?: { now(): number } } = {},
): Promise<AuditArchiveResult> {
  try {
    return await archive(resolve(dir), resolve(to), o.clock ?? { now: () => Date.now() });
  } catch (e) {
    if (isFingerError(e)) throw e;
    throw new FingerError(
      'E_STORE_UNAVAILABLE',
      `audit log ${dir} cannot be archived: ${(e as Error).message}`,
      undefined,
      {
        cause: e,
      },
    );
  }
}

async function archive(dir: string, to: string, clock: { now(): number }): Promise<AuditArchiveResult> {
  const realDir = await realpath(dir);
  await mkdir(to, { recursive: true, mode: 0o700 });
  const realTo = await realpath(to);
  if (realTo === realDir || realTo.startsWith(realDir + sep))
    throw new FingerError('E_INVALID_ARGS', `the archive cannot be the audit log's own directory or inside it: ${to}`);
  const before = await readAnchor(dir);
  const segments = await listSegments(dir);
  const closed = segments.slice(0, -1);
  if (closed.length === 0) return { archived: [], to: realTo, ...(before ? { anchor: before } : {}) };
  const last = closed.at(-1)!;
  const check = await verifyAuditLog(dir, { through_segment: last });
  if (!check.ok)
    throw new FingerError(
      'E_CONFLICT',
      `the audit log is broken at entry ${check.first_bad} (${check.reason}): nothing archived — \`myfinger audit verify\` locates the damage`,
      { first_bad: check.first_bad },
    );
  const head = await lastEntryOf(dir, closed);
  // an archive that does not begin with the chain's first segment verifies from the anchor it continues
  const archivedAnchor = join(realTo, ANCHOR_FILE);
  if (
    before !== undefined &&
    closed[0] !== 1 &&
    !(await exists(join(realTo, segmentName(1)))) &&
    !(await exists(archivedAnchor))
  )
    await writeAnchor(realTo, before);
  const archived: string[] = [];
  for (const n of closed) {
    const name = segmentName(n);
    await copyInto(segmentPath(dir, n), join(realTo, name), name);
    archived.push(name);
  }
  await syncDir(realTo);
  const anchor: AuditAnchor =
    head === undefined
      ? (before ?? { through_segment: last, seq: 0, hash: '' })
      : { through_segment: last, seq: head.seq, hash: head.hash, to: realTo, at: rfc3339(clock.now()) };
  if (head !== undefined) await writeAnchor(dir, anchor);
  for (const n of closed) await unlink(segmentPath(dir, n));
  await syncDir(dir);
  return { archived, to: realTo, ...(head !== undefined || before !== undefined ? { anchor } : {}) };
}

/** seq and hash of the last entry in the newest non-empty segment of `closed` (undefined: all empty). */
async function lastEntryOf(dir: string, closed: number[]): Promise<{ seq: number; hash: string } | undefined> {
  for (let i = closed.length - 1; i >= 0; i--) {
    const path = segmentPath(dir, closed[i]!);
    const bytes = (await stat(path)).size;
    if (bytes === 0) continue;
    const line = await readLastLine(path, bytes);
    const e = JSON.parse(line!.text) as { seq: number; hash: string };
    return { seq: e.seq, hash: e.hash };
  }
  return undefined;
}

/** Copies `src` to `dest` (a copy already there must be the same bytes) and syncs it. */
async function copyInto(src: string, dest: string, name: string): Promise<void> {
  if (await exists(dest)) {
    if ((await digest(dest)) === (await digest(src))) return;
    throw new FingerError(
      'E_CONFLICT',
      `${dest} already exists and differs from ${name}: nothing removed from the log`,
      {
        file: dest,
      },
    );
  }
  await copyFile(src, dest, constants.COPYFILE_EXCL);
  const fh = await open(dest, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
  if ((await digest(dest)) !== (await digest(src))) throw new Error(`the copy of ${name} in ${dest} differs from it`);
}

async function digest(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

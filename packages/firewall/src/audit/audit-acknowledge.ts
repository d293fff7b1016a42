// acknowledgeAuditGap (`myfinger audit acknowledge`): with the daemon stopped, an admin accepts
// that the audit chain is broken — entries missing against its recorded head, a rewritten or
// damaged log, an unreadable head — and starts a new chain whose first entry records what was
// lost. The old files are kept (moved aside, never deleted) and every head store is reset to the
// new chain, so the daemon starts again.

import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { FingerError, isFingerError, rfc3339 } from '@finger/protocol';

import { ANCHOR_FILE } from './audit-anchor.js';
import type { AuditActor, AuditEntry } from './audit-entry.js';
import { listSegments, nodeAuditFileSystem, segmentName } from './audit-files.js';
import type { AuditHead, AuditHeadStore, SourcedHead } from './audit-head.js';
import { AuditLog } from './audit-log.js';
import type { AuditVerifyResult } from './audit-verify.js';
import { scanAuditLog } from './audit-verify.js';

/** Options of {@link acknowledgeAuditGap}. */
export interface AuditAcknowledgeOptions {
  /** The recorded heads (`state/audit-head.json`, Redis): compared, then reset to the new chain. */
  heads: readonly AuditHeadStore[];
  /** Further copies of the head to compare (`--anchor <file>`); not written. */
  copies?: readonly SourcedHead[];
  /** Who acknowledges (the OS user running the command). */
  by: AuditActor;
  /** Why, in the admin's words (kept in the entry). */
  reason?: string;
  clock?: { now(): number };
}

/** What {@link acknowledgeAuditGap} found and did. */
export interface AuditAcknowledgeResult {
  /** The verdict on the old log against its heads (`ok: false`, or a head that could not be read). */
  found: AuditVerifyResult;
  /** Heads that could not be read, with why. */
  unreadable: { source: string; error: string }[];
  /** Where the old files went (absolute), null when there were none. */
  superseded: string | null;
  /** The first entry of the new chain (`audit.acknowledged`). */
  entry: AuditEntry;
  /** The head every store now records. */
  head: AuditHead;
}

/**
 * Starts a new chain in `dir` over a broken one. Verifies the log against every head; when it
 * is intact and reaches them all, rejects with E_CONFLICT (nothing to acknowledge). Otherwise
 * moves every segment and `archived.json` into `dir/superseded-<UTC time>/` (kept as they were:
 * `audit verify --dir` reads them), appends the first entry of a new chain, `audit.acknowledged`,
 * whose details record the heads it supersedes (`previous_heads`), what was found (`found`: the
 * verdict and the last intact entry), where the old files went and who acknowledged it and why,
 * and writes its head to every store. Must run while no daemon uses `dir`. Rejects with
 * E_STORE_UNAVAILABLE when a file or a store cannot be read or written.
 */
export async function acknowledgeAuditGap(dir: string, o: AuditAcknowledgeOptions): Promise<AuditAcknowledgeResult> {
  try {
    return await acknowledge(dir, o);
  } catch (e) {
    if (isFingerError(e)) throw e;
    throw new FingerError(
      'E_STORE_UNAVAILABLE',
      `audit log ${dir}: the acknowledgement failed: ${(e as Error).message}`,
      undefined,
      { cause: e },
    );
  }
}

async function acknowledge(dir: string, o: AuditAcknowledgeOptions): Promise<AuditAcknowledgeResult> {
  const clock = o.clock ?? { now: () => Date.now() };
  const heads: SourcedHead[] = [];
  const unreadable: { source: string; error: string }[] = [];
  for (const store of o.heads) {
    try {
      const h = await store.read();
      if (h !== undefined) heads.push({ ...h, source: store.source });
    } catch (e) {
      if (isFingerError(e) && e.code === 'E_STORE_UNAVAILABLE') throw e;
      unreadable.push({ source: store.source, error: (e as Error).message });
    }
  }
  heads.push(...(o.copies ?? []));
  const scan = await scanAuditLog(dir, { heads });
  if (scan.result.ok && unreadable.length === 0)
    throw new FingerError(
      'E_CONFLICT',
      `nothing to acknowledge: the audit log in ${dir} is intact (${scan.result.entries} entries) and reaches its recorded head`,
      { dir, entries: scan.result.entries },
    );

  const at = clock.now();
  const superseded = await moveAside(dir, at);
  const log = await AuditLog.open({ dir, clock });
  let entry: AuditEntry;
  try {
    entry = await log.append({
      type: 'audit.acknowledged',
      actor: o.by,
      decision: 'new_chain',
      details: {
        previous_heads: heads.map(({ seq, hash, source }) => ({ seq, hash, source })),
        found: {
          entries: scan.result.entries,
          first_bad: scan.result.first_bad,
          reason: scan.result.reason,
          last: scan.last === null ? null : { seq: scan.last.seq, hash: scan.last.hash },
          ...(scan.result.archived_through !== undefined ? { archived_through: scan.result.archived_through } : {}),
        },
        ...(unreadable.length > 0 ? { unreadable } : {}),
        superseded: superseded === null ? null : superseded.name,
        acknowledged_at: rfc3339(at),
        ...(o.reason !== undefined ? { reason: o.reason } : {}),
      },
    });
  } finally {
    await log.close();
  }
  const head = { seq: entry.seq, hash: entry.hash };
  for (const store of o.heads) await store.write(head, { sync: true });
  return {
    found: scan.result,
    unreadable,
    superseded: superseded === null ? null : superseded.path,
    entry,
    head,
  };
}

/** Moves the segments and `archived.json` of `dir` into a new `superseded-<time>` folder; null when there are none. */
async function moveAside(dir: string, at: number): Promise<{ name: string; path: string } | null> {
  const names = [...(await listSegments(dir)).map(segmentName)];
  const files = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [] as string[];
    throw e;
  });
  if (files.includes(ANCHOR_FILE)) names.push(ANCHOR_FILE);
  if (names.length === 0) return null;
  const stamp = rfc3339(at).replace(/[-:]/g, '').replace(/\.\d+/, '');
  let name = `superseded-${stamp}`;
  for (let i = 2; await exists(join(dir, name)); i++) name = `superseded-${stamp}-${i}`;
  const to = join(dir, name);
  await mkdir(to, { mode: 0o700 });
  for (const n of names) await rename(join(dir, n), join(to, n));
  await nodeAuditFileSystem.syncDir(to);
  await nodeAuditFileSystem.syncDir(dir);
  return { name, path: to };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

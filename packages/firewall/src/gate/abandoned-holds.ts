// Holds a person never answered because the daemon died (kill -9, a crash, power loss): their
// `approval.requested` audit entries have no `approval.resolved`. At start the daemon settles each
// as `abandoned` — an audit entry and an APPROVAL_RESOLVED event — so the log says what became of
// every hold. A clean stop resolves every hold itself (`closed`), so only a crash leaves any.
//
// The scan starts after the audit seq kept in a marker file (`state/approvals-settled.json`),
// written once the settling is done: each start reads only what the previous run appended.

import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

import { atomicWriteFile } from '@finger/workspace';

import type { AuditEntry, AuditRecord } from '../audit/audit-entry.js';
import type { AuditQuery } from '../audit/audit-log.js';
import type { GateEvents, GateLogger } from './gate-types.js';

/** The audit log as {@link settleAbandonedHolds} uses it (AuditLog satisfies it). */
export interface AbandonedHoldsAudit {
  read(query: AuditQuery): Promise<AuditEntry[]>;
  append(record: AuditRecord): Promise<AuditEntry>;
  head(): { seq: number };
}

/** Options of {@link settleAbandonedHolds}. */
export interface AbandonedHoldsOptions {
  audit: AbandonedHoldsAudit;
  /** Where the last settled audit seq is kept (the daemon: `FINGER_HOME/state/approvals-settled.json`). */
  markerFile: string;
  events?: GateEvents;
  logger?: GateLogger;
}

/** The reason recorded on an abandoned hold. */
export const ABANDONED_REASON = 'the daemon stopped before anyone answered (found at the next start)';

/** Audit entries read per page while scanning. */
const PAGE = 10_000;

/** At most this many unanswered holds are tracked while scanning (the gate holds at most max_pending at once). */
const MAX_TRACKED = 100_000;

function approvalIdOf(e: AuditEntry): string | undefined {
  const id = e.details?.approval_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Pairs `approval.requested` with `approval.resolved` entries (by `details.approval_id`), in log
 * order: `open` keeps the requested entries still unanswered (at most {@link MAX_TRACKED}, oldest
 * dropped first). Pure.
 */
export function pairHolds(
  entries: Iterable<AuditEntry>,
  open: Map<string, AuditEntry> = new Map(),
): Map<string, AuditEntry> {
  for (const e of entries) {
    const id = approvalIdOf(e);
    if (id === undefined) continue;
    if (e.type === 'approval.requested') {
      open.set(id, e);
      if (open.size > MAX_TRACKED) open.delete(open.keys().next().value as string);
    } else if (e.type === 'approval.resolved') open.delete(id);
  }
  return open;
}

/** The `approval.resolved` record that settles the unanswered hold `requested` as abandoned. */
export function abandonedAuditRecord(requested: AuditEntry): AuditRecord {
  return {
    type: 'approval.resolved',
    actor: { kind: 'system', id: 'human-gate' },
    request_id: requested.request_id,
    correlation_id: requested.correlation_id,
    tool: requested.tool,
    args_digest: requested.args_digest,
    verdict: requested.verdict,
    decision: 'abandoned',
    details: {
      approval_id: approvalIdOf(requested),
      session_id: requested.details?.session_id ?? null,
      decided_by: 'gate',
      reason: ABANDONED_REASON,
      requested_seq: requested.seq,
      requested_at: requested.ts,
    },
  };
}

function readMarker(file: string): number {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as { seq?: unknown };
    return typeof v.seq === 'number' && Number.isSafeInteger(v.seq) && v.seq >= 0 ? v.seq : 0;
  } catch {
    return 0; // absent or unreadable: scan the whole log once
  }
}

/**
 * Settles every hold the previous run left unanswered (see the file comment): appends its
 * `approval.resolved` entry (`decision: "abandoned"`), emits APPROVAL_RESOLVED, then records the
 * audit head in the marker file. Returns how many were settled. Call it once at start, before the
 * gate takes holds; rejects (E_STORE_UNAVAILABLE) when the log cannot be read or written.
 */
export async function settleAbandonedHolds(o: AbandonedHoldsOptions): Promise<number> {
  const since = readMarker(o.markerFile);
  const open = new Map<string, AuditEntry>();
  let after = since;
  for (;;) {
    const page = await o.audit.read({ since_seq: after, limit: PAGE });
    pairHolds(page, open);
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  for (const requested of open.values()) {
    await o.audit.append(abandonedAuditRecord(requested));
    const session = requested.details?.session_id;
    o.events?.emit(
      'APPROVAL_RESOLVED',
      {
        ...(requested.request_id !== null ? { request_id: requested.request_id } : {}),
        ...(requested.correlation_id !== null ? { correlation_id: requested.correlation_id } : {}),
        ...(typeof session === 'string' ? { session_id: session } : {}),
        ...(requested.tool !== null ? { target: requested.tool } : {}),
      },
      {
        id: approvalIdOf(requested),
        tool_id: requested.tool,
        decision: 'abandoned',
        approved: false,
        decided_by: 'gate',
        reason: ABANDONED_REASON,
      },
    );
  }
  if (open.size > 0)
    o.logger?.warn(
      { abandoned: [...open.keys()] },
      `${open.size} held call(s) left unanswered by the previous run: recorded as abandoned`,
    );
  await mkdir(dirname(o.markerFile), { recursive: true, mode: 0o700 });
  await atomicWriteFile(o.markerFile, Buffer.from(`${JSON.stringify({ seq: o.audit.head().seq })}\n`), { mode: 0o600 });
  return open.size;
}

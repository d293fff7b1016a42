// The audit head at run time: the check AuditLog.open makes against every recorded head (a log
// that does not reach one refuses to open with E_AUDIT_BROKEN), and the recorder that keeps the
// stores up to date after each durable batch without ever delaying an append.

import { stat } from 'node:fs/promises';

import { FingerError, isFingerError } from '@finger/protocol';

import { computeEntryHash, entryShapeProblem } from './audit-entry.js';
import { listSegments, readSegmentLines, segmentPath } from './audit-files.js';
import type { AuditHead, AuditHeadStore, SourcedHead } from './audit-head.js';
import { verifyAuditLog } from './audit-verify.js';

/** The logging surface used here (AuditLogger). */
interface HeadLogger {
  info(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  warn?(obj: object | string, msg?: string): void;
}

/** The E_AUDIT_BROKEN a log that does not reach a recorded head opens with. */
export function auditBroken(dir: string, first_bad: number | null, reason: string, source?: string): FingerError {
  return new FingerError(
    'E_AUDIT_BROKEN',
    `audit log ${dir} is broken: ${reason}. finger will not start a new chain over it: ` +
      '`myfinger audit verify` shows what is missing; with the daemon stopped, `myfinger audit acknowledge --yes` ' +
      'starts a new chain that records the gap (docs/operations.md, "The audit anchor")',
    { dir, first_bad, reason, ...(source !== undefined ? { source } : {}) },
  );
}

/**
 * Compares the log whose last entry is `log` with the head each store recorded. Resolves with
 * the recorded heads (undefined: none yet) when the log reaches all of them — equal, or behind
 * the log with the same hash at their seq (a store that lagged: a crash before it was written),
 * or superseded by an `audit acknowledge` of the chain. Otherwise rejects with E_AUDIT_BROKEN
 * naming what is missing (the whole chain is verified then, for the exact report). A store that
 * cannot be read: its own error when it is a FingerError (Redis unavailable), else E_AUDIT_BROKEN.
 */
export async function checkAuditHeads(
  dir: string,
  log: AuditHead,
  stores: readonly AuditHeadStore[],
  logger?: HeadLogger,
): Promise<(AuditHead | undefined)[]> {
  const recorded = await Promise.all(
    stores.map(async (s) => {
      try {
        return await s.read();
      } catch (e) {
        if (isFingerError(e)) throw e;
        throw auditBroken(
          dir,
          null,
          `${(e as Error).message} (if the log itself verifies, remove the file: the next start takes the head from the log)`,
          s.source,
        );
      }
    }),
  );
  const doubtful: SourcedHead[] = [];
  for (let i = 0; i < stores.length; i++) {
    const r = recorded[i];
    if (r === undefined || r.seq === 0 || (r.seq === log.seq && r.hash === log.hash)) continue;
    if (r.seq < log.seq && (await holdsEntry(dir, r))) continue;
    doubtful.push({ ...r, source: (stores[i] as AuditHeadStore).source });
  }
  if (doubtful.length > 0) {
    const v = await verifyAuditLog(dir, { heads: doubtful });
    if (!v.ok) throw auditBroken(dir, v.first_bad, v.reason ?? 'broken', doubtful[0]?.source);
  }
  for (let i = 0; i < stores.length; i++)
    if (recorded[i] === undefined && log.seq > 0)
      (logger?.warn ?? logger?.info)?.call(
        logger,
        { dir, source: (stores[i] as AuditHeadStore).source, seq: log.seq },
        'audit head was missing: recorded from the log (the first start with it, or it was deleted)',
      );
  return recorded;
}

/** True when the log in `dir` holds entry `head.seq` intact with `head.hash` (searched from the newest segment). */
async function holdsEntry(dir: string, head: AuditHead): Promise<boolean> {
  const segments = await listSegments(dir);
  for (let i = segments.length - 1; i >= 0; i--) {
    const path = segmentPath(dir, segments[i] as number);
    if ((await stat(path)).size === 0) continue;
    let first = true;
    let earlier = false;
    for await (const line of readSegmentLines(path)) {
      const e = parse(line.text);
      if (first) {
        first = false;
        // in an earlier segment, if anywhere
        if (e === null || e.seq > head.seq) {
          earlier = true;
          break;
        }
      }
      if (e?.seq === head.seq) return e.hash === head.hash && computeEntryHash(e) === e.hash;
    }
    if (!earlier) return false;
  }
  return false;
}

function parse(text: string): (Record<string, unknown> & { seq: number; hash: string }) | null {
  try {
    const v = JSON.parse(text) as unknown;
    return entryShapeProblem(v) === null ? (v as Record<string, unknown> & { seq: number; hash: string }) : null;
  } catch {
    return null;
  }
}

interface Slot {
  store: AuditHeadStore;
  /** The newest head not yet written. */
  want: AuditHead | null;
  running: Promise<void> | null;
  failing: boolean;
}

/**
 * Keeps every head store at the log's head: {@link record} after each durable batch hands the
 * head over and returns at once; each store has at most one write in flight and then writes the
 * newest head it was given (heads in between are skipped). A failed write is logged (once until
 * one succeeds again) and never fails an append: the store then lags, which the next open accepts.
 */
export class AuditHeadRecorder {
  private readonly slots: Slot[];

  constructor(
    stores: readonly AuditHeadStore[],
    private readonly logger?: HeadLogger,
  ) {
    this.slots = stores.map((store) => ({ store, want: null, running: null, failing: false }));
  }

  /**
   * At open: writes `head` durably to each store whose recorded head differs. Rejects with
   * E_STORE_UNAVAILABLE when one cannot be written (the log would run unanchored).
   */
  async init(head: AuditHead, recorded: readonly (AuditHead | undefined)[]): Promise<void> {
    for (let i = 0; i < this.slots.length; i++) {
      const r = recorded[i];
      if (r !== undefined && r.seq === head.seq && r.hash === head.hash) continue;
      const { store } = this.slots[i] as Slot;
      try {
        await store.write(head, { sync: true });
      } catch (e) {
        if (isFingerError(e)) throw e;
        throw new FingerError(
          'E_STORE_UNAVAILABLE',
          `the audit head ${store.source} cannot be written: ${(e as Error).message}`,
          { file: store.source },
          { cause: e },
        );
      }
    }
  }

  /** Hands a durable head to every store (returns at once). */
  record(head: AuditHead): void {
    for (const slot of this.slots) {
      slot.want = head;
      slot.running ??= this.pump(slot);
    }
  }

  /** The head each store records now, with its source; stores that fail or hold none are left out. */
  async readAll(): Promise<SourcedHead[]> {
    const out = await Promise.all(
      this.slots.map(async ({ store }) => {
        const h = await store.read().catch(() => undefined);
        return h === undefined ? undefined : { ...h, source: store.source };
      }),
    );
    return out.filter((h): h is SourcedHead => h !== undefined);
  }

  /** Waits for writes in flight, then writes `head` durably to every store (failures logged) and closes them. */
  async close(head: AuditHead): Promise<void> {
    await Promise.all(this.slots.map((s) => s.running));
    for (const slot of this.slots) {
      await slot.store.write(head, { sync: true }).catch((e: unknown) => {
        this.logger?.error({ err: e, source: slot.store.source }, 'audit head could not be written at close');
      });
      await slot.store.close?.().catch(() => undefined);
    }
  }

  private async pump(slot: Slot): Promise<void> {
    while (slot.want !== null) {
      const head = slot.want;
      slot.want = null;
      try {
        await slot.store.write(head);
        slot.failing = false;
      } catch (e) {
        if (!slot.failing)
          this.logger?.error(
            { err: e, source: slot.store.source, seq: head.seq },
            'audit head could not be written: it lags behind the log until a write succeeds',
          );
        slot.failing = true;
      }
    }
    slot.running = null;
  }
}

// Admin changes made over HTTP (grants, modules, tokens, undo) are audited before they take
// effect: the entry is appended (written and fsync'd) first, and only then is the change
// applied. If the entry cannot be written the change is not made (E_STORE_UNAVAILABLE); if the
// change then fails, a compensating entry (decision "failed") records that it did not happen.

import type { AuditEntry, AuditLog, AuditRecord } from '@finger/firewall';
import { FingerError, isFingerError, type Principal } from '@finger/protocol';

/** The logging surface used for a compensating entry that could not be written. */
interface ErrorLogger {
  error(obj: object, msg?: string): void;
}

/** Who an entry names as its actor: the principal's kind and id (roles are not recorded). */
export function auditActor(principal: Principal): { kind: string; id: string } {
  return { kind: principal.kind, id: principal.id };
}

/**
 * Appends `record`, mapping any failure to E_STORE_UNAVAILABLE (the caller must then not make
 * the change it records). Resolves with the durable entry.
 */
export async function appendOrRefuse(audit: AuditLog, record: AuditRecord): Promise<AuditEntry> {
  try {
    return await audit.append(record);
  } catch (e) {
    if (isFingerError(e) && e.code === 'E_STORE_UNAVAILABLE') throw e;
    throw new FingerError(
      'E_STORE_UNAVAILABLE',
      `the audit entry could not be written, so the change was not made: ${(e as Error).message}`,
      undefined,
      { cause: e },
    );
  }
}

/**
 * Runs one audited change: appends `record`, then `apply()`. When `apply` throws, a second entry
 * of the same type with `decision: "failed"` and the error code in `details.error` is appended
 * (a failure to write it is logged, not thrown) and the original error is rethrown.
 */
export async function auditedChange<T>(
  audit: AuditLog,
  logger: ErrorLogger,
  record: AuditRecord,
  apply: () => T | Promise<T>,
): Promise<T> {
  const entry = await appendOrRefuse(audit, record);
  try {
    return await apply();
  } catch (e) {
    const code = isFingerError(e) ? e.code : 'E_INTERNAL';
    const compensating: AuditRecord = {
      ...record,
      decision: 'failed',
      details: { ...record.details, error: code, of_seq: entry.seq },
    };
    await audit.append(compensating).catch((err: unknown) => {
      logger.error(
        { err, seq: entry.seq, type: record.type },
        'audit: compensating entry for a failed change not written',
      );
    });
    throw e;
  }
}

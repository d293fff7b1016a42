// The audit head: the seq and hash of the log's last entry, kept outside the log file as well
// (`FINGER_HOME/state/audit-head.json`, and in Redis in distributed mode), so a log that was
// emptied, deleted, cut short or replaced by an older copy is noticed — a hash chain alone cannot
// prove that nothing was removed from its end. Not to be confused with the archive anchor
// (audit-anchor.ts, `archived.json`), which says where the chain continues after `audit archive`.

import { type FileHandle, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Where the daemon keeps the audit head of `home` (FINGER_HOME): `state/audit-head.json`. */
export function auditHeadPath(home: string): string {
  return join(home, 'state', 'audit-head.json');
}

/** The head of an audit chain: its last entry's seq and hash (seq 0 and 64 zeros: empty). */
export interface AuditHead {
  seq: number;
  hash: string;
}

/**
 * Where a copy of the head is kept. {@link AuditLog} reads each store when it opens (a log
 * behind a store's head refuses the start) and writes the new head after every durable batch —
 * one write at a time per store, the latest head winning, never delaying an append.
 */
export interface AuditHeadStore {
  /** Names the copy in messages (`state/audit-head.json`, `redis finger:prod:audit:head:…`). */
  readonly source: string;
  /** The recorded head; undefined when none was ever written. Rejects when it cannot be read or is not a head. */
  read(): Promise<AuditHead | undefined>;
  /** Records `head`; `sync`: durably (at open and close), else as cheaply as the store can. */
  write(head: AuditHead, o?: { sync?: boolean }): Promise<void>;
  /** Releases what the store holds open (after the last write). Optional. */
  close?(): Promise<void>;
}

/** A head compared with a log: where it came from and what it records. */
export interface SourcedHead extends AuditHead {
  source: string;
}

const HASH_RE = /^[0-9a-f]{64}$/;

/** `v` as an AuditHead, or undefined when it is not one (`seq` a safe integer ≥ 0, `hash` 64 lowercase hex). */
export function asAuditHead(v: unknown): AuditHead | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { seq, hash } = v as Partial<AuditHead>;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return undefined;
  if (typeof hash !== 'string' || !HASH_RE.test(hash)) return undefined;
  return { seq, hash };
}

/**
 * Reads a head file (`state/audit-head.json`, or an operator's copy of it): undefined when it
 * does not exist; throws naming the file when it cannot be read or holds no `{seq, hash}`.
 */
export async function readAuditHeadFile(path: string): Promise<AuditHead | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`the audit head ${path} cannot be read: ${(e as Error).message}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`the audit head ${path} is not valid JSON`);
  }
  const head = asAuditHead(v);
  if (head === undefined) throw new Error(`the audit head ${path} does not hold {seq, hash}`);
  return head;
}

/** Bytes of a head record on disk: `{"seq":…,"hash":"…"}` padded with spaces, then "\n". */
const RECORD_BYTES = 128;

/** The fixed-size record of `head` (JSON: the padding is whitespace). */
function headRecord(head: AuditHead): Buffer {
  const json = JSON.stringify({ seq: head.seq, hash: head.hash });
  return Buffer.from(`${json.padEnd(RECORD_BYTES - 1, ' ')}\n`, 'utf8');
}

/**
 * The head kept in a file, mode 0600, as one fixed-size record (128 bytes of JSON and padding).
 * `sync` writes (at open and close) replace the file whole — a temporary file, fsync, rename over
 * it, fsync of the directory. Writes after each batch rewrite the record in place with one
 * `pwrite` at offset 0 on a file kept open, not fsync'd: a record inside one disk sector and one
 * page is never seen or left half-written, and the head is written only after the entries it
 * names are durable in the log, so after a power loss it can only lag behind the log — which
 * start-up accepts and brings up to date. (Measured with bench/firewall-audit: a temp file and a
 * rename per batch cost about 2.5× the CPU of an append at one caller; the in-place write is one
 * system call.)
 */
export class FileAuditHeadStore implements AuditHeadStore {
  readonly source: string;
  private readonly tmp: string;
  private fh: FileHandle | null = null;

  /** `path`: the file (`FINGER_HOME/state/audit-head.json`); `source`: its name in messages (default the path). */
  constructor(
    private readonly path: string,
    source?: string,
  ) {
    this.source = source ?? path;
    this.tmp = `${path}.tmp-${process.pid}`;
  }

  read(): Promise<AuditHead | undefined> {
    return readAuditHeadFile(this.path);
  }

  async write(head: AuditHead, o: { sync?: boolean } = {}): Promise<void> {
    const record = headRecord(head);
    if (o.sync !== true && this.fh !== null) {
      const { bytesWritten } = await this.fh.write(record, 0, record.length, 0);
      if (bytesWritten !== record.length) throw new Error(`short write to ${this.path}`);
      return;
    }
    await this.replace(record, o.sync === true);
    // a handle kept before names the replaced file: later writes open the new one
    await this.close();
    if (o.sync !== true) this.fh = await open(this.path, 'r+');
  }

  /** Closes the handle kept for in-place writes (the AuditLog calls it at close, after the last write). */
  async close(): Promise<void> {
    await this.fh?.close().catch(() => undefined);
    this.fh = null;
  }

  private async replace(record: Buffer, sync: boolean): Promise<void> {
    if (sync) await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const fh = await open(this.tmp, 'w', 0o600);
    try {
      await fh.writeFile(record);
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await rename(this.tmp, this.path);
    } catch (e) {
      await unlink(this.tmp).catch(() => undefined);
      throw e;
    }
    if (sync) {
      const d = await open(dirname(this.path), 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    }
  }
}

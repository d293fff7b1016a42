// AuditLog: the append-only, hash-chained, fsync'd JSON-lines log of §3.8.
//
// Durability contract: append() resolves only after the entry's bytes were written AND
// fdatasync'd; the action it records may run only then. Any failure rejects with
// E_STORE_UNAVAILABLE and the caller must not run the action.
//
// Group commit: appends that arrive while a write+sync is in flight wait in `pending`; when it
// completes, all of them are chained (seq, prev_hash, hash) in arrival order and go to disk in
// one write and one datasync. An append arriving when nothing is in flight is started on the
// next microtask, so appends issued in the same tick share one sync too.

import { mkdir, stat } from 'node:fs/promises';

import { FingerError, isFingerError, rfc3339 } from '@finger/protocol';

import { readAnchor } from './audit-anchor.js';
import type { AuditEntry, AuditEntryType, AuditRecord, EntryDraft } from './audit-entry.js';
import {
  computeEntryHash,
  draftEntry,
  entryShapeProblem,
  GENESIS_HASH,
  sealedEntry,
  sealEntry,
} from './audit-entry.js';
import type { AuditFile, AuditFileSystem } from './audit-files.js';
import {
  listSegments,
  nodeAuditFileSystem,
  readLastLine,
  readSegmentLines,
  segmentName,
  segmentPath,
} from './audit-files.js';
import type { AuditHeadStore, SourcedHead } from './audit-head.js';
import { AuditHeadRecorder, checkAuditHeads } from './audit-head-check.js';
import type { AuditVerifyResult } from './audit-verify.js';
import { verifyAuditLog } from './audit-verify.js';

/** The logging surface the audit log uses (the hub's Logger and pino satisfy it). */
export interface AuditLogger {
  info(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  warn?(obj: object | string, msg?: string): void;
}

/** Options of {@link AuditLog.open}. */
export interface AuditLogOptions {
  /** `FINGER_HOME/audit`; created with mode 0700 when missing. */
  dir: string;
  /** Time source for `ts` (the hub's Clock satisfies it). Default Date.now. */
  clock?: { now(): number };
  logger?: AuditLogger;
  /** A new segment file starts when the next line would pass this size. Default 64 MiB. */
  max_segment_bytes?: number;
  /** Write side of the file system; tests pass a failing shim. */
  fs?: AuditFileSystem;
  /**
   * Where the head is also kept (audit-head.ts): `state/audit-head.json`, Redis. Checked at open —
   * a log that does not reach a recorded head refuses to open with E_AUDIT_BROKEN — and written
   * after every durable batch. Default none.
   */
  heads?: readonly AuditHeadStore[];
}

/** Counters since open. `fsyncs` counts every file and directory sync. */
export interface AuditLogStats {
  /** Entries acknowledged (written and synced). */
  appends: number;
  /** Appends rejected with E_STORE_UNAVAILABLE (or E_INVALID_ARGS). */
  failed: number;
  fsyncs: number;
  /** write+datasync units (a batch crossing a segment boundary counts twice). */
  batches: number;
  /** Number of the segment being written. */
  segment: number;
}

/** The last write or sync that failed, until a later one works (see {@link AuditLog.writeFailure}). */
export interface AuditWriteFailure {
  /** The operating-system code (`ENOSPC`, `EIO`, …), or `E_UNKNOWN`. */
  code: string;
  message: string;
  /** Epoch ms (wall clock, whatever clock the log was given: compared with the daemon's disk probe). */
  at: number;
}

/** Filter of {@link AuditLog.read} (`GET /v1/audit`). */
export interface AuditQuery {
  request_id?: string;
  type?: AuditEntryType;
  /** Only entries with seq > since_seq (page on by passing the last seq you got). */
  since_seq?: number;
  /** At most this many entries, oldest first. Default 100, at most 10,000. */
  limit?: number;
}

interface Pending {
  draft: EntryDraft;
  /** The caller wants the entry object ({@link AuditLog.append}); {@link AuditLog.commit} does not. */
  full: boolean;
  resolve(entry: AuditEntry | undefined): void;
  reject(err: unknown): void;
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

function unavailable(message: string, cause?: unknown, details?: unknown): FingerError {
  return new FingerError('E_STORE_UNAVAILABLE', message, details, cause === undefined ? undefined : { cause });
}

/**
 * The tamper-evident audit log. `await AuditLog.open({dir})`, then `append()` an entry before
 * each action and run the action only once the promise resolved. One AuditLog per directory:
 * two writers would fork the chain.
 */
export class AuditLog {
  private readonly dir: string;
  private readonly clock: { now(): number };
  private readonly logger: AuditLogger | undefined;
  private readonly fs: AuditFileSystem;
  private readonly maxSegmentBytes: number;
  private file: AuditFile;
  private segment: number;
  /** Acknowledged bytes of the current segment. */
  private size: number;
  private headSeq: number;
  private headHash: string;
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private broken: FingerError | null = null;
  private lastFailure: AuditWriteFailure | undefined;
  private readonly counters = { appends: 0, failed: 0, fsyncs: 0, batches: 0 };
  /** First seq of each closed segment (read lazily), to skip segments in read(). */
  private readonly firstSeqs = new Map<number, number>();
  private readonly appendedListeners = new Set<(entry: AuditEntry) => void>();
  private readonly heads: AuditHeadRecorder;

  private constructor(
    options: AuditLogOptions,
    init: { file: AuditFile; segment: number; size: number; seq: number; hash: string },
  ) {
    this.heads = new AuditHeadRecorder(options.heads ?? [], options.logger);
    this.dir = options.dir;
    this.clock = options.clock ?? { now: () => Date.now() };
    this.logger = options.logger;
    this.fs = options.fs ?? nodeAuditFileSystem;
    this.maxSegmentBytes = options.max_segment_bytes ?? DEFAULT_SEGMENT_BYTES;
    this.file = init.file;
    this.segment = init.segment;
    this.size = init.size;
    this.headSeq = init.seq;
    this.headHash = init.hash;
  }

  /**
   * Opens (or creates) the log in `options.dir` and continues its chain from the last entry,
   * whose hash is checked. Rejects with E_STORE_UNAVAILABLE when the directory cannot be
   * created or read, or when the log's end is damaged (a torn or changed last line): it never
   * starts a new chain over a broken one. `myfinger audit verify` then locates the damage.
   *
   * With `options.heads`, the log must also reach every recorded head (the entry it names, with
   * its hash): a log emptied, deleted, cut short, replaced by an older copy or rewritten rejects
   * with E_AUDIT_BROKEN (details `{dir, first_bad, reason, source}`) before anything is created;
   * `myfinger audit acknowledge` starts a new chain over it. A store with no head yet (the first
   * start with it) or one behind the log (a crash before it was written) is brought up to date.
   */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const { dir } = options;
    const fs = options.fs ?? nodeAuditFileSystem;
    try {
      const segments = await listSegments(dir);
      // every segment archived but the anchor (audit-anchor.ts): the chain and the numbering go on from it
      const anchor = await readAnchor(dir);
      const segment = segments.at(-1) ?? (anchor ? anchor.through_segment + 1 : 1);
      let size = 0;
      let head = anchor ? { seq: anchor.seq, hash: anchor.hash } : { seq: 0, hash: GENESIS_HASH };
      for (let i = segments.length - 1; i >= 0; i--) {
        const n = segments[i] as number;
        const bytes = (await stat(segmentPath(dir, n))).size;
        if (n === segment) size = bytes;
        if (bytes > 0) {
          head = await readHead(dir, n, bytes);
          break;
        }
      }
      const recorded = await checkAuditHeads(dir, head, options.heads ?? [], options.logger);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const created = segments.length === 0;
      const file = await fs.openAppend(segmentPath(dir, segment));
      const log = new AuditLog(options, { file, segment, size, seq: head.seq, hash: head.hash });
      if (created) {
        await fs.syncDir(dir);
        log.counters.fsyncs++;
      }
      try {
        await log.heads.init(head, recorded);
      } catch (e) {
        await file.close().catch(() => {});
        throw e;
      }
      options.logger?.info({ dir, segment, seq: head.seq }, 'audit log opened');
      return log;
    } catch (e) {
      if (isFingerError(e)) throw e;
      throw unavailable(`audit log ${dir} cannot be opened: ${(e as Error).message}`, e);
    }
  }

  /**
   * Appends one entry. Resolves with the sealed entry only after it is written and fsync'd;
   * rejects with E_STORE_UNAVAILABLE when it could not be (the recorded action must then not
   * run), or E_INVALID_ARGS for a malformed record. `args` and `result` are digested here and
   * never written.
   */
  append(record: AuditRecord): Promise<AuditEntry> {
    return this.enqueue(record, true) as Promise<AuditEntry>;
  }

  /**
   * {@link append} for a caller that waits only for durability (the firewall's `tool.call` entry
   * before the call runs): the same entry, chained, written and fdatasync'd before the promise
   * resolves, the same refusals — but it resolves with nothing, so no entry object is built
   * for it (unless an {@link onAppended} listener wants one).
   */
  commit(record: AuditRecord): Promise<void> {
    return this.enqueue(record, false) as Promise<void>;
  }

  private enqueue(record: AuditRecord, full: boolean): Promise<AuditEntry | undefined> {
    if (this.closed) return this.fail(unavailable('the audit log is closed'));
    if (this.broken !== null) return this.fail(this.broken);
    let draft: EntryDraft;
    try {
      draft = draftEntry(record, rfc3339(this.clock.now()));
    } catch (e) {
      return this.fail(e);
    }
    return new Promise<AuditEntry | undefined>((resolve, reject) => {
      this.pending.push({ draft, full, resolve, reject });
      if (this.flushing === null && !this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.flushing = this.drain();
        });
      }
    });
  }

  /** The last acknowledged entry's seq and hash (seq 0 and GENESIS_HASH for an empty log). */
  head(): { seq: number; hash: string } {
    return { seq: this.headSeq, hash: this.headHash };
  }

  /** Counters since open (see {@link AuditLogStats}). */
  stats(): AuditLogStats {
    return { ...this.counters, segment: this.segment };
  }

  /**
   * The last failed write or sync (a full disk: `ENOSPC`), undefined once a later batch was
   * written and synced — what `/v1/health` reports. Appends meanwhile reject with
   * E_STORE_UNAVAILABLE; the next one tries the disk again.
   */
  writeFailure(): AuditWriteFailure | undefined {
    return this.lastFailure ? { ...this.lastFailure } : undefined;
  }

  /**
   * Acknowledged entries matching `query`, oldest first (`GET /v1/audit`); lines that do not
   * parse are skipped (verify() reports them). Rejects with E_STORE_UNAVAILABLE when the files
   * cannot be read.
   */
  async read(query: AuditQuery = {}): Promise<AuditEntry[]> {
    try {
      return await this.scan(query);
    } catch (e) {
      throw unavailable(`audit log ${this.dir} cannot be read: ${msg(e)}`, e);
    }
  }

  private async scan(query: AuditQuery): Promise<AuditEntry[]> {
    const limit = Math.min(Math.max(query.limit ?? 100, 0), 10_000);
    const since = query.since_seq ?? 0;
    const out: AuditEntry[] = [];
    if (limit === 0) return out;
    const current = this.segment;
    const currentSize = this.size;
    const segments = (await listSegments(this.dir)).filter((n) => n <= current);
    let start = 0;
    for (let i = segments.length - 1; i > 0; i--) {
      const first = await this.firstSeqOf(segments[i] as number);
      if (first !== null && first <= since + 1) {
        start = i;
        break;
      }
    }
    for (const n of segments.slice(start)) {
      const limitBytes = n === current ? currentSize : Infinity;
      for await (const line of readSegmentLines(segmentPath(this.dir, n), limitBytes)) {
        if (!line.terminated) break;
        const e = parseEntry(line.text);
        if (e === null || e.seq <= since) continue;
        if (query.type !== undefined && e.type !== query.type) continue;
        if (query.request_id !== undefined && e.request_id !== query.request_id) continue;
        out.push(e);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  /**
   * Calls `listener` with every entry once it is durable (after its fsync), in order — for
   * mirrors such as the Redis audit stream of distributed mode. It must be cheap and must not
   * throw (a throwing listener is ignored). Returns the function that removes it.
   */
  onAppended(listener: (entry: AuditEntry) => void): () => void {
    this.appendedListeners.add(listener);
    return () => this.appendedListeners.delete(listener);
  }

  /**
   * {@link verifyAuditLog} over this log's directory, reading only acknowledged bytes, against the
   * heads its stores record now (a store that cannot be read is left out).
   */
  async verify(): Promise<AuditVerifyResult> {
    // read before the limits are taken: a store never holds a head the log had not reached then
    const heads: SourcedHead[] = await this.heads.readAll();
    return verifyAuditLog(this.dir, {
      limits: new Map([[this.segment, this.size]]),
      through_segment: this.segment,
      heads,
    });
  }

  /** Waits for pending appends to be written, then closes the file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing !== null || this.scheduled) {
      await (this.flushing ?? Promise.resolve());
    }
    await this.file.close().catch(() => {});
    await this.heads.close(this.head());
  }

  private fail(e: unknown): Promise<never> {
    this.counters.failed++;
    return Promise.reject(e);
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      await this.writeBatch(batch);
    }
    this.flushing = null;
  }

  /** Chains a batch after the head and writes it, one write+datasync per segment it touches. */
  private async writeBatch(batch: Pending[]): Promise<void> {
    const first = this.headSeq + 1;
    let prev = this.headHash;
    const n = batch.length;
    // hashes[i + 1] is entry i's, hashes[0] the head it follows
    const hashes: string[] = new Array<string>(n + 1);
    hashes[0] = prev;
    const lines: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const s = sealEntry((batch[i] as Pending).draft, first + i, prev);
      prev = s.hash;
      hashes[i + 1] = prev;
      lines[i] = s.line;
    }
    const chain = { first, hashes };
    // the whole batch as one buffer when it fits the segment (the usual case): no line measured apart
    const whole = Buffer.from(lines.join(''), 'utf8');
    if (this.broken === null && this.size + whole.length <= this.maxSegmentBytes) {
      await this.writeChunk(batch, chain, 0, n, whole);
      return;
    }
    const bytes = lines.map((l) => Buffer.byteLength(l));
    let start = 0;
    while (start < n) {
      if (this.broken !== null) return this.rejectFrom(batch, start, this.broken);
      if (this.size > 0 && this.size + (bytes[start] as number) > this.maxSegmentBytes) {
        try {
          await this.rotate();
        } catch (e) {
          this.logger?.error({ err: e, dir: this.dir }, 'audit segment rotation failed');
          const code = (e as NodeJS.ErrnoException | null)?.code;
          this.lastFailure = { code: typeof code === 'string' ? code : 'E_UNKNOWN', message: msg(e), at: Date.now() };
          return this.rejectFrom(batch, start, unavailable(`audit log: cannot start a new segment: ${msg(e)}`, e));
        }
      }
      let end = start;
      let size = 0;
      while (end < n) {
        const b = bytes[end] as number;
        if (end > start && this.size + size + b > this.maxSegmentBytes) break;
        size += b;
        end++;
      }
      if (!(await this.writeChunk(batch, chain, start, end, Buffer.from(lines.slice(start, end).join(''), 'utf8'))))
        return;
      start = end;
    }
  }

  /**
   * Writes and syncs entries `start` to `end` of a batch (their lines are `data`), then moves the
   * head and resolves their appends; on failure rejects them and every later one of the batch
   * and returns false.
   */
  private async writeChunk(
    batch: Pending[],
    chain: { first: number; hashes: string[] },
    start: number,
    end: number,
    data: Buffer,
  ): Promise<boolean> {
    try {
      this.counters.batches++;
      await this.file.write(data);
      this.counters.fsyncs++;
      await this.file.datasync();
    } catch (e) {
      await this.recover(e);
      this.rejectFrom(
        batch,
        start,
        unavailable(`audit log: the entry could not be written and synced: ${msg(e)}`, e, {
          file: segmentName(this.segment),
        }),
      );
      return false;
    }
    this.size += data.length;
    this.lastFailure = undefined;
    const { first, hashes } = chain;
    this.headSeq = first + end - 1;
    this.headHash = hashes[end] as string;
    // after the entries are durable, never before: a recorded head must not run ahead of the log
    this.heads.record({ seq: this.headSeq, hash: this.headHash });
    const listeners = this.appendedListeners;
    for (let i = start; i < end; i++) {
      this.counters.appends++;
      const p = batch[i] as Pending;
      // the entry object only for a caller or a listener that wants it
      const entry =
        p.full || listeners.size > 0
          ? sealedEntry(p.draft, first + i, hashes[i] as string, hashes[i + 1] as string)
          : undefined;
      if (entry !== undefined)
        for (const l of listeners) {
          try {
            l(entry);
          } catch {
            // a mirror must never break the log
          }
        }
      p.resolve(entry);
    }
    return true;
  }

  /**
   * After a failed write or sync, cuts the segment back to its acknowledged size and syncs, so
   * the file holds exactly the acknowledged chain and later appends can continue it. If that
   * fails too the log is broken: every later append rejects until it is reopened (whose tail
   * check then decides).
   */
  private async recover(cause: unknown): Promise<void> {
    const code = (cause as NodeJS.ErrnoException | null)?.code;
    this.lastFailure = { code: typeof code === 'string' ? code : 'E_UNKNOWN', message: msg(cause), at: Date.now() };
    this.logger?.error({ err: cause, dir: this.dir, segment: this.segment }, 'audit append failed');
    try {
      await this.file.truncate(this.size);
      this.counters.fsyncs++;
      await this.file.datasync();
    } catch (e) {
      this.broken = unavailable(
        `audit log is unavailable after a failed write (${msg(cause)}) and a failed repair (${msg(e)}); reopen it`,
        e,
      );
      this.logger?.error({ err: e, dir: this.dir }, 'audit log broken: cannot cut back a failed write');
    }
  }

  private async rotate(): Promise<void> {
    const next = this.segment + 1;
    const file = await this.fs.openAppend(segmentPath(this.dir, next));
    try {
      this.counters.fsyncs++;
      await this.fs.syncDir(this.dir);
    } catch (e) {
      await file.close().catch(() => {});
      throw e;
    }
    const old = this.file;
    this.file = file;
    this.segment = next;
    this.size = 0;
    await old.close().catch(() => {});
    this.logger?.info({ dir: this.dir, segment: next, seq: this.headSeq + 1 }, 'audit segment started');
  }

  private rejectFrom(batch: Pending[], start: number, err: FingerError): void {
    for (let i = start; i < batch.length; i++) {
      this.counters.failed++;
      (batch[i] as Pending).reject(err);
    }
  }

  private async firstSeqOf(n: number): Promise<number | null> {
    const known = this.firstSeqs.get(n);
    if (known !== undefined) return known;
    for await (const line of readSegmentLines(segmentPath(this.dir, n), 1 << 20)) {
      const first = parseEntry(line.text)?.seq ?? null;
      if (first !== null) this.firstSeqs.set(n, first);
      return first;
    }
    return null;
  }
}

/** The head of an existing log: its last line must be intact (parse, shape, hash). */
async function readHead(dir: string, n: number, bytes: number): Promise<{ seq: number; hash: string }> {
  const file = segmentName(n);
  const last = await readLastLine(segmentPath(dir, n), bytes);
  let problem: string | null = null;
  let entry: Record<string, unknown> | null = null;
  if (last === null || !last.terminated) problem = 'its last line is incomplete (a torn write or truncation)';
  else {
    try {
      entry = JSON.parse(last.text) as Record<string, unknown>;
      problem = entryShapeProblem(entry);
      if (problem === null && computeEntryHash(entry) !== entry.hash) problem = 'its last entry fails its hash check';
    } catch {
      problem = 'its last line is not valid JSON';
    }
  }
  if (problem !== null || entry === null) {
    throw unavailable(
      `audit log ${dir}: ${file} is damaged at its end: ${problem}. Refusing to continue the hash chain; ` +
        'run `myfinger audit verify` to locate the damage (see docs/operations.md, "Audit log")',
      undefined,
      { dir, file, reason: problem },
    );
  }
  return { seq: entry.seq as number, hash: entry.hash as string };
}

function parseEntry(text: string): AuditEntry | null {
  try {
    const v = JSON.parse(text) as unknown;
    return entryShapeProblem(v) === null ? (v as AuditEntry) : null;
  } catch {
    return null;
  }
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

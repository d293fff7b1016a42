import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';

import { FingerError, type FingerEvent } from '@finger/protocol';

import type { EventFilter } from '../events/event-bus.js';
import { type Logger, silentLogger } from '../logger.js';
import { listSegments, packSegment, readSegmentText, segmentFile, unlinkIfThere } from './event-segments.js';
import { type EventStore, isFingerEventLike, matchesFilter, mergeById } from './event-store.js';
import { MemoryEventStore } from './memory-event-store.js';

/**
 * gzip level of closed segments: 3, zlib's fastest matching with a little search. Event lines (ids,
 * digests, timestamps) compress to about a tenth at any level; 3 takes ≈ 2.5× less CPU than the
 * default 6 for ≈ 9 % larger files (a 4 MiB segment of /hub calls: ≈ 10 ms instead of 24 ms of a
 * worker thread, 0.098 instead of 0.090 of the lines — ≈ 2.7 instead of 6.4 µs a call). Retention
 * is bounded by the number of segments, so the last tenth of a ratio buys a few hundred KB in all.
 */
const PACK_LEVEL = 3;

/** The retention a FileEventStore keeps when its options do not say (docs/operations.md, Events storage). */
export const EVENT_STORE_DEFAULTS = {
  max_segment_bytes: 4 * 1024 * 1024,
  max_segments: 16,
  compress_closed: true,
} as const;

/** Options of {@link FileEventStore}. */
export interface FileEventStoreOptions {
  /** Directory of the segment files; created with mode 0700 when missing. */
  dir: string;
  /** A segment is closed and a new one started once the next line would pass this size. Default 4 MiB. */
  max_segment_bytes?: number;
  /** Segments kept; the oldest are deleted beyond this. Default 16. */
  max_segments?: number;
  /**
   * Closed segments are gzip'd (`events-<seq>.jsonl.gz`, off the event loop) — default true; the
   * segment being written stays plain JSON lines.
   */
  compress_closed?: boolean;
  /**
   * The line stored for an event (on disk and in the memory tail), given the event (undefined for
   * one that came as JSON only) and the line its subscribers got: how the daemon keeps what only a
   * live reader needs (a held call's arguments) out of the files. Default: the line as it is.
   */
  stored_line?: (event: FingerEvent | undefined, line: string) => string;
  /** Newest events also kept in memory, to answer `recent()` without disk. Default 2,000. */
  tail_size?: number;
  logger?: Logger;
}

/** Counters of a {@link FileEventStore}. */
export interface FileEventStoreStats {
  /** Segment files currently tracked. */
  segments: number;
  /** Events handed to `append`. */
  appended: number;
  /** Events written to disk. */
  written: number;
  /** Batches that could not be written (their events live on only in the memory tail). */
  write_failures: number;
  /** Unparseable or non-event lines met (and skipped) while reading segments; counted per read. */
  corrupt_lines: number;
  /** Events in the memory tail. */
  tail: number;
  /** Closed segments stored gzip'd. */
  packed_segments: number;
}

/**
 * Append-only, bounded event persistence in JSON-lines segment files
 * `events-<10-digit seq>.jsonl` under `dir`. Each appended batch is one file write on the open
 * handle of the newest segment; when the next line would push a segment past
 * `max_segment_bytes` a new segment starts, and segments beyond `max_segments` are deleted
 * oldest first, so disk use stays at about `max_segment_bytes × max_segments` (64 MiB by
 * default) — the oldest events are lost by design. On open the newest segment is continued.
 *
 * A bad disk (EACCES, ENOSPC, a file where the directory should be…) never throws out of the
 * store's reads and never crashes the daemon: the first failure of a streak is logged once,
 * each failed batch is counted (`stats().write_failures`) and rejected with
 * E_STORE_UNAVAILABLE, and its events stay answerable from the in-memory tail. Writes are not
 * fsync'd: a crash may lose the last batch, and a torn last line is skipped on read.
 */
export class FileEventStore implements EventStore {
  readonly dir: string;
  private readonly maxSegmentBytes: number;
  private readonly maxSegments: number;
  private readonly logger: Logger;
  private readonly tail: MemoryEventStore;
  private readonly compress: boolean;
  /** Most bytes a gzip'd segment may decode to (4 segments' worth, at least 64 MiB: the bound may have been larger when it was written). */
  private readonly maxReadBytes: number;
  private readonly storedLine: ((event: FingerEvent | undefined, line: string) => string) | undefined;
  /** Segments stored gzip'd. */
  private readonly packed = new Set<number>();
  /** Closed plain segments waiting to be packed (after the batch that closed them). */
  private toPack: number[] = [];
  /** Serialises open, writes and rotation; never rejects. */
  private chain: Promise<void>;
  private opened = false;
  private everOpened = false;
  /** The directory held events before this store first opened it. */
  private hadPriorData = false;
  private seqs: number[] = [];
  private curSeq = 1;
  private curSize = 0;
  private needsNewline = false;
  private handle: FileHandle | null = null;
  private failing = false;
  private closing: Promise<void> | null = null;
  private appended = 0;
  private written = 0;
  private writeFailures = 0;
  private corrupt = 0;

  constructor(options: FileEventStoreOptions) {
    this.dir = options.dir;
    this.maxSegmentBytes = options.max_segment_bytes ?? EVENT_STORE_DEFAULTS.max_segment_bytes;
    this.maxSegments = Math.max(1, options.max_segments ?? EVENT_STORE_DEFAULTS.max_segments);
    this.compress = options.compress_closed ?? EVENT_STORE_DEFAULTS.compress_closed;
    this.maxReadBytes = Math.max(4 * this.maxSegmentBytes, 64 * 1024 * 1024);
    this.storedLine = options.stored_line;
    this.logger = options.logger ?? silentLogger;
    this.tail = new MemoryEventStore({ capacity: options.tail_size ?? 2000 });
    this.chain = this.open().catch((err: unknown) => this.fail(err, 'open'));
  }

  /** Counters for health and metrics. */
  stats(): FileEventStoreStats {
    return {
      segments: this.everOpened ? this.seqs.length : 0,
      appended: this.appended,
      written: this.written,
      write_failures: this.writeFailures,
      corrupt_lines: this.corrupt,
      tail: this.tail.size,
      packed_segments: this.everOpened ? this.packed.size : 0,
    };
  }

  append(batch: readonly (FingerEvent | undefined)[], lines?: readonly string[]): Promise<void> {
    let ls = lines ?? batch.map((e) => JSON.stringify(e ?? null));
    const storedLine = this.storedLine;
    if (storedLine !== undefined) ls = ls.map((l, i) => storedLine(batch[i], l));
    // the tail keeps each line's bytes (parsed when a query reads it), not the event's graph
    for (let i = 0; i < batch.length; i++) this.tail.add(batch[i], ls[i]);
    this.appended += batch.length;
    if (this.closing) {
      this.writeFailures++;
      return Promise.reject(new FingerError('E_STORE_UNAVAILABLE', 'event store is closed', { dir: this.dir }));
    }
    if (batch.length === 0) return this.chain;
    const p = this.chain.then(() => this.writeBatch(ls));
    this.chain = p.catch(() => undefined);
    return p;
  }

  flush(): Promise<void> {
    return this.chain;
  }

  close(): Promise<void> {
    this.closing ??= this.chain.then(() => this.closeHandle());
    return this.closing;
  }

  async forRequest(request_id: string): Promise<FingerEvent[]> {
    if (!request_id) return [];
    await this.chain;
    let disk: FingerEvent[] = [];
    let diskOk = true;
    try {
      disk = await this.requestPathFromDisk(request_id);
    } catch (err) {
      diskOk = false;
      this.fail(err, 'read');
    }
    if (diskOk && this.everOpened && this.writeFailures === 0) return disk;
    return mergeById(disk, this.tail.pathOf(request_id));
  }

  async recent(filter: EventFilter, limit: number): Promise<FingerEvent[]> {
    if (limit <= 0) return [];
    const fromTail = this.tail.latest(filter, limit);
    if (fromTail.length >= limit || this.tailIsComplete()) return fromTail;
    await this.chain;
    if (this.tailIsComplete()) return this.tail.latest(filter, limit);
    let disk: FingerEvent[] = [];
    let diskOk = true;
    try {
      disk = await this.recentFromDisk(filter, limit);
    } catch (err) {
      diskOk = false;
      this.fail(err, 'read');
    }
    if (diskOk && this.everOpened && this.writeFailures === 0) return disk;
    return mergeById(disk, this.tail.latest(filter, limit), limit);
  }

  /** True when every event ever stored in `dir` is still in the memory tail. */
  private tailIsComplete(): boolean {
    return this.everOpened && !this.hadPriorData && this.tail.evicted === 0;
  }

  private segmentPath(seq: number): string {
    return segmentFile(this.dir, seq, false);
  }

  /** A segment's text, or null when it was deleted (rotated away) meanwhile; an unreadable gzip'd one counts as one corrupt line. */
  private async readSegment(seq: number, packed: boolean): Promise<string | null> {
    try {
      return await readSegmentText(this.dir, seq, packed, this.maxReadBytes);
    } catch (err) {
      // zlib's codes (Z_DATA_ERROR…): not gzip at all; past the bound: not a segment this store
      // wrote; anything else is the disk's and is the caller's
      const code = String((err as NodeJS.ErrnoException).code);
      if (!code.startsWith('Z_') && code !== 'ERR_BUFFER_TOO_LARGE') throw err;
      this.corrupt++;
      return null;
    }
  }

  private parseLine(line: string): FingerEvent | null {
    try {
      const v: unknown = JSON.parse(line);
      if (isFingerEventLike(v)) return v;
    } catch {
      // fall through: counted as corrupt
    }
    this.corrupt++;
    return null;
  }

  private async requestPathFromDisk(request_id: string): Promise<FingerEvent[]> {
    const texts: string[] = [];
    const { seqs, packed } = await listSegments(this.dir);
    for (const seq of seqs) {
      const t = await this.readSegment(seq, packed.has(seq));
      if (t) texts.push(t);
    }
    // Pass 1: the request's correlation ids (only lines that mention the id are parsed).
    const needle = JSON.stringify(request_id);
    const cids = new Set<string>();
    for (const text of texts) {
      for (const line of text.split('\n')) {
        if (!line.includes(needle)) continue;
        try {
          const v: unknown = JSON.parse(line);
          if (isFingerEventLike(v) && v.request_id === request_id && v.correlation_id) cids.add(v.correlation_id);
        } catch {
          // counted in pass 2
        }
      }
    }
    // Pass 2: every event with the request id or one of those correlation ids.
    const needles = [needle, ...[...cids].map((c) => JSON.stringify(c))];
    const out: FingerEvent[] = [];
    for (const text of texts) {
      for (const line of text.split('\n')) {
        if (!needles.some((n) => line.includes(n))) continue;
        const e = this.parseLine(line);
        if (e && (e.request_id === request_id || cids.has(e.correlation_id))) out.push(e);
      }
    }
    return out;
  }

  private async recentFromDisk(filter: EventFilter, limit: number): Promise<FingerEvent[]> {
    // Cheap necessary conditions on the raw line before parsing it.
    const required: string[] = [];
    for (const v of [filter.request_id, filter.session_id, filter.correlation_id])
      if (v) required.push(JSON.stringify(v));
    const anyType = filter.types && filter.types.length > 0 ? filter.types.map((t) => JSON.stringify(t)) : null;
    const out: FingerEvent[] = [];
    const { seqs, packed } = await listSegments(this.dir);
    for (let s = seqs.length - 1; s >= 0 && out.length < limit; s--) {
      const text = await this.readSegment(seqs[s]!, packed.has(seqs[s]!));
      if (!text) continue;
      let end = text.length;
      while (end > 0 && out.length < limit) {
        const nl = text.lastIndexOf('\n', end - 1);
        const line = text.slice(nl + 1, end);
        end = nl < 0 ? 0 : nl;
        if (!line) continue;
        if (!required.every((n) => line.includes(n))) continue;
        if (anyType && !anyType.some((n) => line.includes(n))) continue;
        const e = this.parseLine(line);
        if (e && matchesFilter(e, filter)) out.push(e);
      }
    }
    return out.reverse();
  }

  private async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const found = await listSegments(this.dir);
    // a packing a stop cut short: the .tmp is never whole; the plain file beside a whole .gz is not needed
    for (const t of found.temps) await unlinkIfThere(t);
    for (const seq of found.both) await unlinkIfThere(this.segmentPath(seq));
    const seqs = found.seqs;
    this.packed.clear();
    for (const seq of found.packed) this.packed.add(seq);
    let size = 0;
    if (seqs.length === 0) {
      this.seqs = [1];
      this.curSeq = 1;
    } else {
      this.seqs = seqs;
      this.curSeq = seqs[seqs.length - 1]!;
      // the newest was packed (by hand, or by another version): it is closed, a new one starts
      if (this.packed.has(this.curSeq)) this.seqs.push(++this.curSeq);
      else size = await fileSize(this.segmentPath(this.curSeq));
    }
    // closed segments a stop left plain (or written while compression was off)
    this.toPack = this.compress ? this.seqs.filter((q) => q !== this.curSeq && !this.packed.has(q)) : [];
    this.curSize = size;
    this.needsNewline = size > 0 && (await lastByte(this.segmentPath(this.curSeq), size)) !== 0x0a;
    if (!this.everOpened) this.hadPriorData = seqs.length > 1 || size > 0;
    await this.prune();
    this.opened = true;
    this.everOpened = true;
    await this.packClosed();
  }

  /**
   * gzips the closed segments waiting for it, one at a time on zlib's worker thread (the event
   * loop only reads and writes the files). A failure leaves that segment plain — it is read as
   * such — and is logged.
   */
  private async packClosed(): Promise<void> {
    while (this.toPack.length > 0) {
      const seq = this.toPack.shift()!;
      if (!this.seqs.includes(seq) || this.packed.has(seq)) continue;
      try {
        if ((await packSegment(this.dir, seq, PACK_LEVEL)) !== null) this.packed.add(seq);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        this.logger.warn(
          { dir: this.dir, seq, err: { code: e?.code, message: e?.message ?? String(err) } },
          'closed event segment left uncompressed',
        );
      }
    }
  }

  private async writeBatch(lines: readonly string[]): Promise<void> {
    try {
      if (!this.opened) await this.open();
      let chunk = '';
      let chunkBytes = 0;
      for (const line of lines) {
        const b = Buffer.byteLength(line) + 1;
        const used = this.curSize + chunkBytes;
        if (used > 0 && used + b > this.maxSegmentBytes) {
          if (chunkBytes > 0) await this.writeChunk(chunk, chunkBytes);
          chunk = '';
          chunkBytes = 0;
          await this.rotate();
        }
        chunk += line + '\n';
        chunkBytes += b;
      }
      if (chunkBytes > 0) await this.writeChunk(chunk, chunkBytes);
      this.written += lines.length;
      await this.packClosed();
      if (this.failing) {
        this.failing = false;
        this.logger.info({ dir: this.dir }, 'event store writable again');
      }
    } catch (err) {
      this.writeFailures++;
      this.opened = false; // re-open (re-stat, re-check the last line) before the next write
      await this.closeHandle();
      this.fail(err, 'write');
      const code = (err as NodeJS.ErrnoException).code;
      throw new FingerError('E_STORE_UNAVAILABLE', `event store ${this.dir} could not be written`, {
        dir: this.dir,
        errno: code,
      });
    }
  }

  private async writeChunk(chunk: string, bytes: number): Promise<void> {
    this.handle ??= await open(this.segmentPath(this.curSeq), 'a', 0o600);
    const text = this.needsNewline ? '\n' + chunk : chunk;
    await this.handle.appendFile(text, 'utf8');
    this.curSize += bytes + (this.needsNewline ? 1 : 0);
    this.needsNewline = false;
  }

  private async rotate(): Promise<void> {
    await this.closeHandle();
    if (this.compress) this.toPack.push(this.curSeq);
    this.curSeq++;
    this.seqs.push(this.curSeq);
    this.curSize = 0;
    this.needsNewline = false;
    await this.prune();
  }

  private async prune(): Promise<void> {
    while (this.seqs.length > this.maxSegments) {
      const seq = this.seqs.shift()!;
      try {
        await unlinkIfThere(segmentFile(this.dir, seq, this.packed.delete(seq)));
        // a packing may have renamed it since the list was made
        await unlinkIfThere(segmentFile(this.dir, seq, true));
      } catch (err) {
        this.fail(err, 'prune');
      }
    }
  }

  private async closeHandle(): Promise<void> {
    const h = this.handle;
    this.handle = null;
    if (h) await h.close().catch(() => undefined);
  }

  /** Logs the first failure of a streak; later ones are only counted. */
  private fail(err: unknown, op: string): void {
    if (this.failing) return;
    this.failing = true;
    const e = err as NodeJS.ErrnoException;
    this.logger.error(
      { dir: this.dir, op, err: { code: e?.code, message: e?.message ?? String(err) } },
      'event store unavailable; events are kept in memory only',
    );
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

async function lastByte(path: string, size: number): Promise<number> {
  const h = await open(path, 'r');
  try {
    const buf = Buffer.alloc(1);
    await h.read(buf, 0, 1, size - 1);
    return buf[0]!;
  } finally {
    await h.close();
  }
}

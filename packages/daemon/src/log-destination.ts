// The daemon's log destination: pino writes its JSON lines here, and from here they go to a file
// descriptor (stdout: the terminal in the foreground, FINGER_HOME/daemon.log in the background).
//
// pino's default destination (sonic-boom) turns a failed write into an 'error' event nobody
// handles — an uncaught exception — and then loops in flushSync at exit, retrying the write every
// 100 ms for as long as the disk stays full (issue 28: the daemon hung > 8 minutes, deaf to
// SIGTERM). Here a failed write never throws and never blocks: the lines it held are dropped and
// counted, later lines are dropped (and counted) until `retry_ms` has passed, and the first write
// that works again — the next line logged, or a retry every `retry_ms` — starts with one line
// saying how many were lost and why.

import { write as fsWrite } from 'node:fs';

/** A write the destination could not make (a full disk, a closed descriptor). */
export interface LogWriteFailure {
  /** The operating-system code (`ENOSPC`, `EDQUOT`, `EBADF`, …) or `E_UNKNOWN`. */
  code: string;
  message: string;
  /** Epoch ms of the last failure. */
  at: number;
}

/** Counters of {@link LogDestination} (health, metrics). */
export interface LogDestinationStats {
  /** Lines written. */
  written: number;
  /** Lines dropped: a failed write, the retry back-off, or a full buffer. */
  dropped: number;
  /** Lines waiting to be written. */
  queued: number;
  /** Set while writes fail (cleared by the next write that works). */
  failing?: LogWriteFailure;
}

/** Options of {@link LogDestination}. */
export interface LogDestinationOptions {
  /** Default 1 (stdout). */
  fd?: number;
  /** Lines waiting beyond this many bytes are dropped (counted). Default 1 MiB. */
  max_buffer_bytes?: number;
  /** After a failed write, lines are dropped for this long before a write is tried again. Default 1000 ms. */
  retry_ms?: number;
  /** Time source (tests). */
  now?: () => number;
  /** Called once when writes start failing, and once when they work again (the daemon's disk watch). */
  onFailure?: (failure: LogWriteFailure) => void;
  onRecovered?: () => void;
  /** The low-level write (tests pass a failing one); default `fs.write`. */
  write?: (fd: number, data: Buffer, cb: (err: NodeJS.ErrnoException | null, written: number) => void) => void;
}

/** A busy non-blocking descriptor (a pipe): tried again shortly, the lines kept. */
const BUSY = new Set(['EAGAIN', 'EWOULDBLOCK', 'EBUSY']);
const BUSY_RETRY_MS = 10;
/** At most this many bytes go to one write. */
const MAX_WRITE_BYTES = 64 * 1024;

/**
 * A pino destination (`pino(options, destination)`) that never throws into the caller and never
 * blocks the event loop: lines are queued (bounded) and written asynchronously in order.
 */
export class LogDestination {
  private readonly fd: number;
  private readonly maxBuffer: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly writeFn: NonNullable<LogDestinationOptions['write']>;
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;
  private retryAt = 0;
  private failing: LogWriteFailure | undefined;
  /** Lines dropped since the last write that worked, and why (said in the next line written). */
  private lost = { lines: 0, why: '' };
  private written = 0;
  private dropped = 0;
  private readonly drained = new Set<() => void>();
  private busyTimer: NodeJS.Timeout | undefined;
  /** A write failed in the middle of a line: the next write starts a new line. */
  private torn = false;
  /** After a failure: writes the notice of lost lines once `retry_ms` has passed, even if nothing else is logged. */
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LogDestinationOptions = {}) {
    this.fd = options.fd ?? 1;
    this.maxBuffer = options.max_buffer_bytes ?? 1024 * 1024;
    this.retryMs = options.retry_ms ?? 1000;
    this.now = options.now ?? Date.now;
    this.writeFn = options.write ?? fsWrite;
  }

  /** Queues one line (pino's call). Always returns true: a line that cannot be kept is counted, never thrown. */
  write(line: string): boolean {
    if (this.failing !== undefined && this.now() < this.retryAt) {
      this.drop(1, this.failing.message);
      return true;
    }
    const bytes = Buffer.byteLength(line);
    if (this.queuedBytes + bytes > this.maxBuffer) {
      this.drop(1, `more than ${this.maxBuffer} bytes waited to be written`);
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    this.pump();
    return true;
  }

  /** Counters (see {@link LogDestinationStats}). */
  stats(): LogDestinationStats {
    return {
      written: this.written,
      dropped: this.dropped,
      queued: this.queue.length,
      ...(this.failing ? { failing: { ...this.failing } } : {}),
    };
  }

  /** The current failure, if writes fail (for the daemon's disk watch). */
  failure(): LogWriteFailure | undefined {
    return this.failing ? { ...this.failing } : undefined;
  }

  /**
   * Resolves once every queued line is written or dropped, or after `timeout_ms` (whichever is
   * first): before the process exits, so the last lines (shutdown, a start error) reach the log.
   */
  flush(timeout_ms = 2000): Promise<void> {
    if (!this.writing && this.busyTimer === undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.drained.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeout_ms);
      timer.unref();
      this.drained.add(done);
    });
  }

  private drop(lines: number, why: string): void {
    this.dropped += lines;
    this.lost.lines += lines;
    this.lost.why = why;
  }

  private pump(retrying = false): void {
    if (this.writing || this.busyTimer !== undefined) return;
    const owed = this.lost.lines > 0 || this.torn;
    if (this.queue.length === 0 && !(retrying && owed)) {
      for (const d of [...this.drained]) d();
      return;
    }
    let take = 0;
    let bytes = 0;
    while (take < this.queue.length) {
      const b = Buffer.byteLength(this.queue[take] as string);
      if (take > 0 && bytes + b > MAX_WRITE_BYTES) break;
      bytes += b;
      take++;
    }
    const lines = this.queue.splice(0, take);
    this.queuedBytes = Math.max(0, this.queuedBytes - bytes);
    // lines lost since the last write that worked: said first, in the log itself
    const noticed = this.lost.lines;
    const notice = (this.torn ? '\n' : '') + (noticed > 0 ? this.lostLine() : '');
    const data = Buffer.from(notice + lines.join(''), 'utf8');
    this.writing = true;
    this.writeAll(data, 0, lines.length, noticed);
  }

  /** Writes `data` (`lines` lines after a notice of `noticed` lost lines) to its end. */
  private writeAll(data: Buffer, offset: number, lines: number, noticed: number): void {
    this.writeFn(this.fd, data.subarray(offset), (err, n) => {
      if (err === null && offset + n < data.length && n > 0) {
        this.writeAll(data, offset + n, lines, noticed);
        return;
      }
      this.writing = false;
      if (err !== null && BUSY.has(err.code ?? '')) {
        // a busy pipe: keep the unwritten rest in front and try again shortly (the buffer stays bounded)
        const rest = data.subarray(offset).toString('utf8');
        this.queue.unshift(rest);
        this.queuedBytes += Buffer.byteLength(rest);
        // the notice (and the torn line's end) is written or in `rest` now
        this.lost.lines -= noticed;
        this.torn = false;
        this.busyTimer = setTimeout(() => {
          this.busyTimer = undefined;
          this.pump();
        }, BUSY_RETRY_MS);
        this.busyTimer.unref();
        return;
      }
      const end = err === null ? offset + n : offset;
      if (end < data.length) {
        // part of a line may be in the file: the next write starts on a new line
        if (end > 0) this.torn = data[end - 1] !== 0x0a;
        this.failed(err ?? Object.assign(new Error('short write'), { code: 'EIO' }), lines);
      } else {
        this.torn = false;
        this.succeeded(lines, noticed);
      }
      this.pump();
    });
  }

  private failed(err: NodeJS.ErrnoException, lines: number): void {
    // the lines of this write, and everything queued behind it: the disk will not take them now
    const queued = this.queue.length;
    this.queue = [];
    this.queuedBytes = 0;
    const first = this.failing === undefined;
    this.failing = { code: err.code ?? 'E_UNKNOWN', message: err.message, at: this.now() };
    this.retryAt = this.now() + this.retryMs;
    this.drop(lines + queued, this.failing.message);
    if (first) this.options.onFailure?.({ ...this.failing });
    if (this.retryTimer === undefined) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (this.failing !== undefined) this.pump(true);
      }, this.retryMs);
      this.retryTimer.unref();
    }
  }

  private succeeded(lines: number, noticed: number): void {
    this.written += lines;
    this.lost.lines -= noticed;
    if (this.failing !== undefined) {
      this.failing = undefined;
      this.options.onRecovered?.();
    }
  }

  /** A pino-shaped warning line: how many lines were lost and why. */
  private lostLine(): string {
    return `${JSON.stringify({
      level: 40,
      time: this.now(),
      pid: process.pid,
      component: 'log',
      dropped: this.lost.lines,
      dropped_total: this.dropped,
      msg: `${this.lost.lines} log line(s) dropped: ${this.lost.why}`,
    })}\n`;
  }
}

import { type Logger, silentLogger } from '../logger.js';
import type { RedisConnection } from './redis-client.js';

/** Tuning of {@link RedisAuditMirror}. */
export interface RedisAuditMirrorOptions {
  /** Approximate cap of the stream (`XADD MAXLEN ~`). Default 100,000 entries. */
  max_len?: number;
  /** Most entries waiting while Redis is slow or down; the oldest are dropped past it. Default 10,000. */
  max_queue?: number;
  logger?: Logger;
}

/** One audit entry as mirrored: its sequence number and the entry itself. */
export interface MirroredEntry {
  seq: number;
  ts?: string;
}

/**
 * Mirrors audit entries into a capped Redis stream `<prefix>audit` (one stream per cluster; each
 * record carries the daemon's `node` name), so the entries of every daemon can be read in one
 * place. The local hash-chained file stays the record of truth: mirroring never delays nor fails
 * an append. Entries queue (bounded) and go out in pipelined batches; while Redis is down they
 * wait, and past `max_queue` the oldest are dropped and counted in {@link stats}.
 */
export class RedisAuditMirror {
  readonly stream: string;
  private readonly max_len: number;
  private readonly max_queue: number;
  private readonly logger: Logger;
  private queue: string[] = [];
  private flushing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly counters = { mirrored: 0, dropped: 0, failed_batches: 0 };

  constructor(
    private readonly redis: RedisConnection,
    private readonly node: string,
    options: RedisAuditMirrorOptions = {},
  ) {
    this.stream = redis.key('audit');
    this.max_len = options.max_len ?? 100_000;
    this.max_queue = options.max_queue ?? 10_000;
    this.logger = options.logger ?? silentLogger;
  }

  /** Queues an entry for the stream; never throws, never waits. */
  push(entry: MirroredEntry): void {
    if (this.closed) return;
    if (this.queue.length >= this.max_queue) {
      this.queue.shift();
      if (this.counters.dropped++ === 0)
        this.logger.warn({ max_queue: this.max_queue }, 'audit mirror dropping entries');
    }
    this.queue.push(JSON.stringify(entry));
    // while a retry waits, it sends what was queued meanwhile (one attempt at a time)
    if (this.retryTimer === undefined) this.kick();
  }

  /** Counters since start. */
  stats(): { mirrored: number; dropped: number; failed_batches: number; queued: number } {
    return { ...this.counters, queued: this.queue.length };
  }

  /** Waits until the queue is empty or Redis failed once (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
  }

  /** Writes what it can (one attempt), then stops. The connection is shared; its owner closes it. */
  async close(): Promise<void> {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.kick();
    await this.drain();
    this.closed = true;
  }

  /**
   * Starts a flush unless one runs. `flushing` is set before the flush begins (on a microtask)
   * and cleared when it ends, so it never holds a flush that already ended.
   */
  private kick(): void {
    if (this.flushing !== undefined || this.closed) return;
    this.flushing = Promise.resolve().then(() => this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, 256);
        const p = this.redis.client.pipeline();
        for (const e of batch) p.xadd(this.stream, 'MAXLEN', '~', this.max_len, '*', 'node', this.node, 'entry', e);
        const r = await this.redis.run('audit.mirror', () => p.exec());
        if (r === null || r.some(([err]) => err !== null)) throw new Error('XADD failed');
        this.queue.splice(0, batch.length);
        this.counters.mirrored += batch.length;
      }
    } catch (e) {
      this.counters.failed_batches++;
      this.logger.debug({ err: (e as Error).message }, 'audit mirror batch failed; retrying');
      if (!this.closed && this.retryTimer === undefined) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.kick();
        }, 500);
        this.retryTimer.unref();
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

import type { ErrorInfo } from '@finger/protocol';
import { rfc3339 } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { RequestRecord } from '../hub-types.js';
import { argsKey } from '../payload-key.js';
import type { RequestOutcome, RequestStore } from './request-store.js';

/** {@link MemoryRequestEntry.args} of an entry that holds no payload (none tracked, or its key is made). */
export const NO_ARGS: unique symbol = Symbol('no args');

/**
 * A record as this store holds it: the record's fields plus the store's own bookkeeping. Never
 * handed out — {@link MemoryRequestStore.peek} and `get` build a plain {@link RequestRecord} (the
 * result by reference, not copied, the times formatted) only when someone asks.
 */
export interface MemoryRequestEntry {
  readonly request_id: string;
  correlation_id: string;
  target: string;
  /**
   * The first call's payload, held by reference until its key is needed ({@link argsKeyOf}: a
   * duplicate arrives, or the record is read); {@link NO_ARGS} once keyed or when not tracked.
   */
  args: unknown;
  /** The key of the first call's arguments ({@link argsKey}), once made; undefined while `args` holds them or none are tracked. */
  args_digest: string | undefined;
  caller: string | undefined;
  status: RequestRecord['status'];
  created_at: string;
  /** Epoch ms the outcome was written (+∞ while running); `finished_at` is formatted from it when read. */
  finished: number;
  /** A `finished_at` given as text (a record handed to `begin` already finished); else undefined. */
  finished_at: string | undefined;
  result: unknown;
  error: ErrorInfo | undefined;
  /** While the call runs in this process: what a duplicate joins. */
  done: Promise<unknown> | undefined;
  /** How long the outcome is kept once written: the record leaves at `finished + keep_ms`. */
  keep_ms: number;
  /** A refusal before the call reached its module forgets the id (a blocking call: its caller may retry). */
  readonly forgettable: boolean;
}

/**
 * The key an entry's arguments are compared by: made from the held payload the first time it is
 * asked for (then the payload is let go, so the key stays what it was then). Throws what
 * {@link argsKey} throws for a payload with no JSON form (a BigInt, a cycle).
 */
export function argsKeyOf(e: MemoryRequestEntry): string | undefined {
  if (e.args !== NO_ARGS) {
    e.args_digest = argsKey(e.args); // a throw leaves the payload held: never compared as "no arguments"
    e.args = NO_ARGS;
  }
  return e.args_digest;
}

/**
 * Request records in memory, bounded by count (`max_records`: the oldest finished records are
 * evicted first, in batches, from a FIFO of finishing order — no walk over the whole map) and by
 * age (`ttl_ms` after finishing; one sweeper, {@link prune}, called by the hub every 10 s, plus a
 * check on every read — no timer per record). Running records are never evicted.
 *
 * The hub's tracked calls use the synchronous {@link lookup}/{@link open}/{@link settle} path (no
 * promise per step); `begin`/`finish`/`get` are the {@link RequestStore} interface over the same
 * entries.
 */
export class MemoryRequestStore implements RequestStore {
  private readonly entries = new Map<string, MemoryRequestEntry>();
  /** Ids in the order they finished; `head` is the next to evict. */
  private finished: string[] = [];
  private head = 0;

  constructor(
    private readonly clock: Clock,
    private readonly max_records: number,
    private readonly ttl_ms: number,
  ) {}

  /** The live entry of a request id (an expired one is dropped and answers undefined). */
  lookup(request_id: string): MemoryRequestEntry | undefined {
    const e = this.entries.get(request_id);
    if (e === undefined) return undefined;
    if (e.finished + e.keep_ms <= this.clock.now()) {
      this.entries.delete(request_id);
      return undefined;
    }
    return e;
  }

  /**
   * Creates the running entry of a request id the caller found absent with {@link lookup}.
   * `args`: the payload whose key the id will be compared by, held by reference ({@link argsKeyOf}),
   * or {@link NO_ARGS}.
   */
  open(
    request_id: string,
    correlation_id: string,
    target: string,
    caller: string | undefined,
    args: unknown,
    created_at: string,
    keep_ms: number = this.ttl_ms,
    forgettable = false,
  ): MemoryRequestEntry {
    const e: MemoryRequestEntry = {
      request_id,
      correlation_id,
      target,
      args,
      args_digest: undefined,
      caller,
      status: 'running',
      created_at,
      finished: Number.POSITIVE_INFINITY,
      finished_at: undefined,
      result: undefined,
      error: undefined,
      done: undefined,
      keep_ms,
      forgettable,
    };
    this.entries.set(request_id, e);
    if (this.entries.size > this.max_records) this.evict();
    return e;
  }

  /**
   * Records the outcome of a running entry from {@link open} (the result by reference), kept for
   * `keep_ms` (default the entry's) from now; one clock read, `finished_at` is formatted from it
   * when the record is read.
   */
  settle(e: MemoryRequestEntry, ok: boolean, value: unknown, keep_ms = e.keep_ms): void {
    if (e.status !== 'running' || this.entries.get(e.request_id) !== e) return; // written already, or forgotten meanwhile
    e.done = undefined;
    if (ok) {
      e.status = 'succeeded';
      e.result = value;
    } else {
      e.status = 'failed';
      e.error = value as ErrorInfo;
    }
    e.keep_ms = keep_ms;
    e.finished = this.clock.now();
    this.finished.push(e.request_id);
  }

  /** Drops an entry from {@link open} (a call refused before it reached its module may be retried). */
  drop(e: MemoryRequestEntry): void {
    if (e.status === 'running' && this.entries.get(e.request_id) === e) this.entries.delete(e.request_id);
  }

  async begin(record: RequestRecord): Promise<RequestRecord | undefined> {
    const existing = this.peek(record.request_id);
    if (existing !== undefined) return existing;
    const e = this.open(
      record.request_id,
      record.correlation_id,
      record.target,
      record.caller,
      NO_ARGS,
      record.created_at,
    );
    e.args_digest = record.args_digest;
    if (record.status !== 'running') {
      // a record written finished (not what the hub does): keep it as given
      e.status = record.status;
      e.finished_at = record.finished_at;
      e.result = record.result;
      e.error = record.error;
    }
    return undefined;
  }

  async finish(
    request_id: string,
    outcome: RequestOutcome,
    finished_at: string,
    keep_ms: number = this.ttl_ms,
  ): Promise<void> {
    const e = this.entries.get(request_id);
    if (e === undefined || e.status !== 'running') return;
    this.settle(e, outcome.ok, outcome.ok ? outcome.result : outcome.error, keep_ms);
    if (e.status !== 'running') e.finished_at = finished_at; // the time as the caller wrote it
  }

  async get(request_id: string): Promise<RequestRecord | undefined> {
    return this.peek(request_id);
  }

  async forget(request_id: string): Promise<void> {
    this.entries.delete(request_id);
  }

  /**
   * The record of a request id. `withDigest` false leaves `args_digest` out (the hub's
   * `getRequest` never shows it): the held arguments are then not keyed for the read.
   */
  peek(request_id: string, withDigest = true): RequestRecord | undefined {
    const e = this.lookup(request_id);
    return e === undefined ? undefined : toRecord(e, withDigest);
  }

  /** Drops expired records; called periodically by the hub. */
  prune(): void {
    const now = this.clock.now();
    for (const [id, e] of this.entries) if (e.finished + e.keep_ms <= now) this.entries.delete(id);
    // records that left by age (or were forgotten) still have their ids in the FIFO, and under
    // max_records evict() never runs to pass them: drop them, or the FIFO grows by one per call
    if (this.finished.length - this.head > this.entries.size) {
      this.finished = this.finished.slice(this.head).filter((id) => this.entries.has(id));
      this.head = 0;
    } else this.compact();
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.finished = [];
    this.head = 0;
  }

  /** Evicts finished records, oldest first, down to 90% of the bound (so it runs rarely). */
  private evict(): void {
    const target = Math.floor(this.max_records * 0.9);
    while (this.entries.size > target && this.head < this.finished.length) {
      const id = this.finished[this.head++]!;
      const e = this.entries.get(id);
      if (e !== undefined && e.status !== 'running') this.entries.delete(id);
    }
    this.compact();
  }

  private compact(): void {
    if (this.head > 4096 && this.head * 2 > this.finished.length) {
      this.finished = this.finished.slice(this.head);
      this.head = 0;
    }
  }
}

/** The public record of an entry (absent fields left out, the result by reference, the times formatted). */
function toRecord(e: MemoryRequestEntry, withDigest: boolean): RequestRecord {
  const r: RequestRecord = {
    request_id: e.request_id,
    correlation_id: e.correlation_id,
    target: e.target,
    status: e.status,
    created_at: e.created_at,
  };
  if (withDigest) {
    let digest: string | undefined;
    try {
      digest = argsKeyOf(e);
    } catch {
      digest = undefined; // arguments with no JSON form have no key (a duplicate of them is refused)
    }
    if (digest !== undefined) r.args_digest = digest;
  }
  if (e.caller !== undefined) r.caller = e.caller;
  if (e.finished_at !== undefined) r.finished_at = e.finished_at;
  else if (e.status !== 'running') r.finished_at = rfc3339(e.finished);
  if (e.status === 'succeeded') r.result = e.result;
  if (e.error !== undefined) r.error = e.error;
  return r;
}

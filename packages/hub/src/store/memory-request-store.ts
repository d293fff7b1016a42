import { randomBytes } from 'node:crypto';

import type { ErrorInfo } from '@finger/protocol';
import { rfc3339 } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { RequestRecord } from '../hub-types.js';
import { argsKey } from '../payload-key.js';
import type { RequestOutcome, RequestStore } from './request-store.js';

/** `args` of {@link MemoryRequestStore.open} for a record whose arguments are not tracked. */
export const NO_ARGS: unique symbol = Symbol('no args');

/** A slot's state. */
const FREE = 0;
const RUNNING = 1;
const SUCCEEDED = 2;
const FAILED = 3;
const STATUS: readonly RequestRecord['status'][] = ['running', 'running', 'succeeded', 'failed'];
/** An insert probing further than this rebuilds the index with a new seed (not more often than once per half the records' inserts). */
const MAX_PROBE = 48;
/**
 * Code units of a request id kept in the slot's row of {@link MemoryRequestStore.idChars} (a
 * ULID is 26, a UUID 36; a multiple of 4: rows are written a word at a time). A longer id, or one
 * with a code unit past 255, is kept as its string.
 */
const ID_WIDTH = 40;
/** Whether this machine stores the low byte of a word first (how a row's bytes are written four at a time). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Numbers of a record: {@link MemoryRequestStore.nums}, row of {@link NW}. */
const NW = 8;
const N_STATE = 0;
const N_FORGETTABLE = 1;
const N_ID_LENGTH = 2;
const N_HASH = 3;
const N_QUEUED = 4;
const N_BORN = 5;
const N_ENDED = 6;
const N_KEEPS = 7;
/** Values of a record: {@link MemoryRequestStore.refs}, row of {@link RW}. */
const RW = 8;
const R_ID = 0;
const R_CORRELATION = 1;
const R_TARGET = 2;
const R_CALLER = 3;
const R_ARGS = 4;
const R_KEY = 5;
const R_VALUE = 6;
const R_DONE = 7;

/** Settled once: a reaction to it runs after the microtasks already queued (one per batch of outcomes, see {@link MemoryRequestStore.stamp}). */
const SETTLED = Promise.resolve();

function randomSeed(): number {
  return randomBytes(4).readInt32LE(0);
}

/** What a duplicate of a request id learns of its record (made only when an id is sent again). */
export interface MemoryRequestView {
  caller: string | undefined;
  target: string;
  status: RequestRecord['status'];
  /** While the call runs in this process: what the duplicate joins. */
  done: Promise<unknown> | undefined;
  result: unknown;
  error: ErrorInfo | undefined;
}

/**
 * Request records in memory, bounded by count (`max_records`: the oldest finished records are
 * evicted first, in batches, from a FIFO of finishing order — no walk over the whole map) and by
 * age (`ttl_ms` after finishing; one sweeper, {@link prune}, called by the hub every 10 s, plus a
 * check on every read — no timer per record). Running records are never evicted.
 *
 * A record is a slot — a row of numbers in a typed array, a row of values in an array — not an
 * object: a tracked call allocates nothing here, a record's fields share a cache line or two (an
 * array per field touched a line per field, out of cache with ~10,000 records kept), and the
 * records kept for the idempotency window cost the garbage collector only the values they point
 * to (the payload, the result). The request id is copied into a typed array too (up to {@link ID_WIDTH} one-byte code
 * units), so its string — a caller's concatenation is two strings once hashed — is not kept: every
 * young object a record holds is copied by each scavenge it lives through, and about 10,000 are
 * live at once at the bound. The index maps a request id to its slot.
 *
 * The time an outcome was written is read once per batch (the outcomes written in one run of
 * code, e.g. every answer a module host gives in one turn): a microtask queued by the first of
 * them reads the clock and stamps them all, before the code their callers resume runs. So a
 * record's `finished_at`, and the start of its keep, is never before its outcome, and later only
 * by the microtasks queued ahead (a read of the record in between stamps it then).
 *
 * The hub's tracked calls use the synchronous {@link find}/{@link open}/{@link attach}/
 * {@link settle} path (no promise per step); `begin`/`finish`/`get` are the {@link RequestStore}
 * interface over the same records. A running record is named by its slot and the promise its
 * caller holds (`done`): a slot freed and reused meanwhile never takes another call's outcome.
 */
export class MemoryRequestStore implements RequestStore {
  /**
   * The index: open addressing, linear probing, twice as many places as slots; place `i` holds
   * `slot + 1` of a live record (0: empty) at `2i` and its id's hash at `2i + 1`, so a probe reads
   * one line and an id only when the hashes match. The hash is seeded per store and the seed
   * changes when an insert probes too far, so ids chosen to collide cannot pile up (the ids come
   * from callers).
   */
  private table = new Int32Array(0);
  private mask = 0;
  private seed = randomSeed();
  /** Inserts since the last reseed (a reseed needs half as many as there are records: its cost stays O(1) per insert). */
  private sinceReseed = 0;
  private hashes = new Int32Array(0);
  private count = 0;
  /** The id and hash of the last {@link find} that missed: {@link open} of that id does not hash it again. */
  private missedId: string | undefined = undefined;
  private missedHash = 0;
  private cap = 0;
  /**
   * The numbers of the records, {@link NW} a slot (one row, so a record's numbers share a cache
   * line or two instead of one line per field): N_STATE, N_FORGETTABLE (1: a refusal forgets the
   * id), N_ID_LENGTH (of the id in {@link idChars}), N_HASH (of the id), N_QUEUED (where the
   * finished record stands in the FIFO, its absolute position; -1 when not there), N_BORN (epoch ms
   * the record was made; `created_at` is formatted from it when read), N_ENDED (epoch ms the
   * outcome was written: +∞ while running, NaN until its batch is stamped, which no expiry check
   * passes; `finished_at` is formatted from it), N_KEEPS (how long the outcome is kept: the record
   * leaves at ended + keeps).
   */
  private nums = new Float64Array(0);
  /**
   * The values of the records, {@link RW} a slot (one row): R_ID (the request id when it is not in
   * {@link idChars}: longer than {@link ID_WIDTH}, or a code unit past 255), R_CORRELATION (the
   * correlation id when it is not the request id), R_TARGET, R_CALLER, R_ARGS (the first call's
   * payload, held by reference until a duplicate or a read needs its key), R_KEY (the key of those
   * arguments, {@link argsKey}, once made), R_VALUE (the result, or the ErrorInfo of a failure),
   * R_DONE (while the call runs in this process: what a duplicate joins, and the record's owner).
   */
  private refs: unknown[] = [];
  /** The request id's code units, {@link ID_WIDTH} per slot, when its R_ID has none. */
  private idChars = new Uint8Array(0);
  /** {@link idChars} four bytes at a time (a row is a whole number of words). */
  private idWords = new Uint32Array(0);
  /**
   * Where {@link hashOf} copies an id's code units as it reads them when no slot is free (else into
   * the row of the slot the next open takes): an id is read once (the first read of a
   * concatenated id also flattens it), and its row is filled as it is hashed.
   */
  private readonly stage = new Uint8Array(ID_WIDTH);
  /** The last id hashed, when it fits a row (its code units are in the row of {@link stagedSlot}, or in {@link stage} when that is -1). */
  private staged: string | undefined = undefined;
  /**
   * The free slot (the next {@link open} takes) whose row {@link hashOf} copied the id into: the
   * usual open of the id just found absent then copies nothing. -1: the copy is in {@link stage}.
   */
  private stagedSlot = -1;
  /** `created_at` given as text (a record handed to `begin`). */
  private readonly createdText = new Map<number, string>();
  /** `finished_at` given as text (through {@link finish}, or a record handed to `begin` finished). */
  private readonly finishedText = new Map<number, string>();
  private free: number[] = [];
  /**
   * The FIFO: slots in the order their records finished, a ring over absolute positions (position
   * `p` at `finished[p & finishedMask]`; `head` is the next to evict, `tail` the next to write).
   * An item whose slot was freed (and maybe taken again) since is passed over: its position is no
   * longer the slot's N_QUEUED. A typed array that grows (doubling) only when full, never an array
   * pushed to and sliced: that churned a copy of the FIFO (tens of KB) every few thousand calls.
   */
  private finished = new Int32Array(1024);
  private finishedMask = 1023;
  private head = 0;
  private tail = 0;
  /** The FIFO's absolute position up to which finished records have their time; those after it wait for {@link stamp}. */
  private stampedTo = 0;
  private stampQueued = false;
  private readonly stampTask = (): void => {
    this.stampQueued = false;
    if (this.stampedTo < this.tail) this.stamp(this.clock.now());
  };

  constructor(
    private readonly clock: Clock,
    private readonly max_records: number,
    private readonly ttl_ms: number,
  ) {
    this.grow(Math.min(Math.max(max_records, 16), 1024));
  }

  /** The slot of a live record of a request id, or -1 (an expired one is dropped). */
  find(request_id: string): number {
    const h = this.hashOf(request_id);
    const slot = this.slotOf(request_id, h);
    if (slot < 0) {
      this.missedId = request_id;
      this.missedHash = h;
      return -1;
    }
    if (this.nums[slot * NW + N_ENDED]! + this.nums[slot * NW + N_KEEPS]! <= this.clock.now()) {
      this.remove(slot);
      return -1;
    }
    return slot;
  }

  /**
   * Creates the running record of a request id the caller found absent with {@link find}; returns
   * its slot. `created`: epoch ms (the text of `created_at` is made when the record is read). `args`: the payload whose key the id will be compared by, held by reference (keyed by
   * {@link sameArgs} when a duplicate comes), or {@link NO_ARGS}.
   */
  open(
    request_id: string,
    correlation_id: string,
    target: string,
    caller: string | undefined,
    args: unknown,
    created: number,
    keep_ms: number = this.ttl_ms,
    forgettable = false,
  ): number {
    if (this.free.length === 0) this.grow(this.cap * 2);
    const slot = this.free.pop()!;
    this.nums[slot * NW + N_STATE] = RUNNING;
    this.nums[slot * NW + N_FORGETTABLE] = forgettable ? 1 : 0;
    this.nums[slot * NW + N_ENDED] = Number.POSITIVE_INFINITY;
    this.nums[slot * NW + N_KEEPS] = keep_ms;
    this.keepId(slot, request_id);
    this.refs[slot * RW + R_CORRELATION] = correlation_id === request_id ? undefined : correlation_id;
    this.refs[slot * RW + R_TARGET] = target;
    this.refs[slot * RW + R_CALLER] = caller;
    this.nums[slot * NW + N_BORN] = created;
    this.refs[slot * RW + R_ARGS] = args;
    const h = request_id === this.missedId ? this.missedHash : this.hashOf(request_id);
    this.missedId = undefined;
    this.nums[slot * NW + N_HASH] = h;
    this.insert(slot, h);
    this.count++;
    if (this.count > this.max_records) this.evict();
    return slot;
  }

  /** Names the promise the caller of a running record holds (what duplicates join); false when the slot is not that record any more. */
  attach(slot: number, done: Promise<unknown>): boolean {
    if (
      this.nums[slot * NW + N_STATE] !== RUNNING ||
      (this.refs[slot * RW + R_DONE] as Promise<unknown> | undefined) !== undefined
    )
      return false;
    this.refs[slot * RW + R_DONE] = done;
    return true;
  }

  /** The promise duplicates of a running record join (undefined once finished, or not attached). */
  doneOf(slot: number): Promise<unknown> | undefined {
    return this.refs[slot * RW + R_DONE] as Promise<unknown> | undefined;
  }

  /** What a duplicate learns of the record in `slot`. */
  view(slot: number): MemoryRequestView {
    return {
      caller: this.refs[slot * RW + R_CALLER] as string | undefined,
      target: this.refs[slot * RW + R_TARGET] as string,
      status: STATUS[this.nums[slot * NW + N_STATE]!]!,
      done: this.refs[slot * RW + R_DONE] as Promise<unknown> | undefined,
      result: this.nums[slot * NW + N_STATE] === SUCCEEDED ? this.refs[slot * RW + R_VALUE] : undefined,
      error: this.nums[slot * NW + N_STATE] === FAILED ? (this.refs[slot * RW + R_VALUE] as ErrorInfo) : undefined,
    };
  }

  /**
   * Whether a duplicate's payload has the arguments of the record in `slot`: the record's are
   * keyed now if they were not yet (then the payload is let go, so the key stays what it was
   * then). True when the record tracks no arguments. Arguments with no JSON form (a BigInt, a
   * cycle) match nothing.
   */
  sameArgs(slot: number, payload: unknown): boolean {
    try {
      const key = this.keyOf(slot);
      return key === undefined || key === argsKey(payload);
    } catch {
      return false;
    }
  }

  /**
   * Records the outcome of the running record `slot` whose caller holds `done` (the result by
   * reference), kept for `keep_ms` (default the record's) from the time its batch is stamped (no
   * clock read here: see the class comment).
   */
  settle(slot: number, done: Promise<unknown>, ok: boolean, value: unknown, keep_ms?: number): void {
    if (
      this.nums[slot * NW + N_STATE] !== RUNNING ||
      (this.refs[slot * RW + R_DONE] as Promise<unknown> | undefined) !== done
    )
      return; // written already, or forgotten meanwhile
    this.write(slot, ok, value, keep_ms);
  }

  /** Whether a refusal of the running record `slot` forgets its id (a blocking call: its caller may retry). */
  isForgettable(slot: number): boolean {
    return this.nums[slot * NW + N_FORGETTABLE] === 1;
  }

  /** Drops the running record `slot` whose caller holds `done` (a call refused before it reached its module may be retried). */
  drop(slot: number, done: Promise<unknown>): void {
    if (this.nums[slot * NW + N_STATE] === RUNNING && this.refs[slot * RW + R_DONE] === done) this.remove(slot);
  }

  async begin(record: RequestRecord): Promise<RequestRecord | undefined> {
    const existing = this.peek(record.request_id);
    if (existing !== undefined) return existing;
    const slot = this.open(record.request_id, record.correlation_id, record.target, record.caller, NO_ARGS, Number.NaN);
    this.createdText.set(slot, record.created_at);
    this.refs[slot * RW + R_KEY] = record.args_digest;
    if (record.status !== 'running') {
      // a record written finished (not what the hub does): kept as given, never expiring
      this.nums[slot * NW + N_STATE] = record.status === 'succeeded' ? SUCCEEDED : FAILED;
      this.refs[slot * RW + R_VALUE] = record.status === 'succeeded' ? record.result : record.error;
      if (record.finished_at !== undefined) this.finishedText.set(slot, record.finished_at);
    }
    return undefined;
  }

  async finish(
    request_id: string,
    outcome: RequestOutcome,
    finished_at: string,
    keep_ms: number = this.ttl_ms,
  ): Promise<void> {
    const slot = this.slotOf(request_id, this.hashOf(request_id));
    if (slot < 0 || this.nums[slot * NW + N_STATE] !== RUNNING) return;
    this.write(slot, outcome.ok, outcome.ok ? outcome.result : outcome.error, keep_ms);
    this.finishedText.set(slot, finished_at); // the time as the caller wrote it
  }

  async get(request_id: string): Promise<RequestRecord | undefined> {
    return this.peek(request_id);
  }

  async forget(request_id: string): Promise<void> {
    const slot = this.slotOf(request_id, this.hashOf(request_id));
    if (slot >= 0) this.remove(slot);
  }

  /**
   * The record of a request id (the result by reference, the times formatted). `withDigest`
   * false leaves `args_digest` out (the hub's `getRequest` never shows it): the held arguments are
   * then not keyed for the read.
   */
  peek(request_id: string, withDigest = true): RequestRecord | undefined {
    const slot = this.find(request_id);
    if (slot < 0) return undefined;
    const state = this.nums[slot * NW + N_STATE]!;
    if (Number.isNaN(this.nums[slot * NW + N_ENDED]!)) this.stamp(this.clock.now());
    const r: RequestRecord = {
      request_id,
      correlation_id: (this.refs[slot * RW + R_CORRELATION] as string | undefined) ?? request_id,
      target: this.refs[slot * RW + R_TARGET] as string,
      status: STATUS[state]!,
      created_at: this.createdText.get(slot) ?? rfc3339(this.nums[slot * NW + N_BORN]!),
    };
    if (withDigest) {
      let digest: string | undefined;
      try {
        digest = this.keyOf(slot);
      } catch {
        digest = undefined; // arguments with no JSON form have no key (a duplicate of them is refused)
      }
      if (digest !== undefined) r.args_digest = digest;
    }
    const caller = this.refs[slot * RW + R_CALLER] as string | undefined;
    if (caller !== undefined) r.caller = caller;
    if (state !== RUNNING) {
      const text = this.finishedText.get(slot);
      const ended = this.nums[slot * NW + N_ENDED]!;
      if (text !== undefined) r.finished_at = text;
      else if (ended !== Number.POSITIVE_INFINITY) r.finished_at = rfc3339(ended);
    }
    if (state === SUCCEEDED) r.result = this.refs[slot * RW + R_VALUE];
    else if (state === FAILED && this.refs[slot * RW + R_VALUE] !== undefined)
      r.error = this.refs[slot * RW + R_VALUE] as ErrorInfo;
    return r;
  }

  /** Drops expired records; called periodically by the hub. */
  prune(): void {
    const now = this.clock.now();
    this.stamp(now); // outcomes written since the last stamp (none when called from a timer: their microtask ran)
    for (let slot = 0; slot < this.cap; slot++) {
      const s = this.nums[slot * NW + N_STATE]!;
      if (s !== FREE && s !== RUNNING && this.nums[slot * NW + N_ENDED]! + this.nums[slot * NW + N_KEEPS]! <= now)
        this.remove(slot);
    }
    // records that left by age (or were forgotten) still have their slots in the FIFO, and under
    // max_records evict() never runs to pass them: drop them, or the FIFO grows by one per call
    if (this.tail - this.head > this.count) {
      const slots: number[] = [];
      for (let at = this.head; at < this.tail; at++) {
        const slot = this.finished[at & this.finishedMask]!;
        if (this.nums[slot * NW + N_QUEUED] === at) slots.push(slot);
      }
      // numbered on from the tail: a position once given never names another record
      this.head = this.tail;
      for (const slot of slots) this.enqueue(slot);
      this.stampedTo = this.tail;
    }
  }

  get size(): number {
    return this.count;
  }

  async close(): Promise<void> {
    this.count = 0;
    this.missedId = undefined;
    this.staged = undefined;
    this.stagedSlot = -1;
    this.createdText.clear();
    this.finishedText.clear();
    this.cap = 0;
    this.free = [];
    this.head = 0;
    this.tail = 0;
    this.stampedTo = 0;
    this.grow(16);
  }

  private keyOf(slot: number): string | undefined {
    const args = this.refs[slot * RW + R_ARGS];
    if (args !== NO_ARGS) {
      this.refs[slot * RW + R_KEY] = argsKey(args); // a throw leaves the payload held: never compared as "no arguments"
      this.refs[slot * RW + R_ARGS] = NO_ARGS;
    }
    return this.refs[slot * RW + R_KEY] as string | undefined;
  }

  private write(slot: number, ok: boolean, value: unknown, keep_ms?: number): void {
    this.nums[slot * NW + N_STATE] = ok ? SUCCEEDED : FAILED;
    this.refs[slot * RW + R_VALUE] = value;
    this.refs[slot * RW + R_DONE] = undefined;
    if (keep_ms !== undefined) this.nums[slot * NW + N_KEEPS] = keep_ms;
    this.nums[slot * NW + N_ENDED] = Number.NaN;
    this.enqueue(slot);
    if (!this.stampQueued) {
      this.stampQueued = true;
      void SETTLED.then(this.stampTask);
    }
  }

  /** Puts the finished record of `slot` at the FIFO's tail. */
  private enqueue(slot: number): void {
    if (this.tail - this.head > this.finishedMask) {
      // full: twice as wide, every position where it was
      const wider = new Int32Array(this.finished.length * 2);
      const mask = wider.length - 1;
      for (let at = this.head; at < this.tail; at++) wider[at & mask] = this.finished[at & this.finishedMask]!;
      this.finished = wider;
      this.finishedMask = mask;
    }
    const at = this.tail++;
    this.finished[at & this.finishedMask] = slot;
    this.nums[slot * NW + N_QUEUED] = at;
  }

  /** Gives every outcome written since the last stamp the time `now` (a clock read made after them). */
  private stamp(now: number): void {
    const finished = this.finished;
    const mask = this.finishedMask;
    const end = this.tail;
    for (let at = Math.max(this.stampedTo, this.head); at < end; at++) {
      const slot = finished[at & mask]!;
      if (this.nums[slot * NW + N_QUEUED] === at) this.nums[slot * NW + N_ENDED] = now; // still that record (not evicted or forgotten)
    }
    this.stampedTo = end;
  }

  /** Keeps the id of `slot`: its code units in the slot's row when they fit, else its string. */
  private keepId(slot: number, id: string): void {
    const n = id.length;
    const from = this.stagedSlot;
    if (id === this.staged) {
      if (slot !== from) {
        const chars = this.idChars;
        const at = slot * ID_WIDTH;
        if (from < 0) {
          const stage = this.stage;
          for (let k = 0; k < n; k++) chars[at + k] = stage[k]!;
        } else chars.copyWithin(at, from * ID_WIDTH, from * ID_WIDTH + n);
      }
      this.nums[slot * NW + N_ID_LENGTH] = n;
      this.refs[slot * RW + R_ID] = undefined;
      return;
    }
    if (slot === from) this.staged = undefined; // its row is this id's now, not the staged one's
    if (n <= ID_WIDTH) {
      const chars = this.idChars;
      const at = slot * ID_WIDTH;
      let k = 0;
      for (; k < n; k++) {
        const c = id.charCodeAt(k);
        if (c > 0xff) break;
        chars[at + k] = c;
      }
      if (k === n) {
        this.nums[slot * NW + N_ID_LENGTH] = n;
        this.refs[slot * RW + R_ID] = undefined;
        return;
      }
    }
    this.refs[slot * RW + R_ID] = id;
  }

  /** Whether `slot` (a live record) is the record of `id`. */
  private idIs(slot: number, id: string): boolean {
    const kept = this.refs[slot * RW + R_ID] as string | undefined;
    if (kept !== undefined) return kept === id;
    const n = id.length;
    if (this.nums[slot * NW + N_ID_LENGTH] !== n) return false;
    const chars = this.idChars;
    const at = slot * ID_WIDTH;
    for (let k = 0; k < n; k++) if (chars[at + k] !== id.charCodeAt(k)) return false;
    return true;
  }

  /** The id of `slot` (a live record) as a string (made again from its code units: for a reseed only). */
  private idOf(slot: number): string {
    const kept = this.refs[slot * RW + R_ID] as string | undefined;
    if (kept !== undefined) return kept;
    const at = slot * ID_WIDTH;
    return String.fromCharCode(...this.idChars.subarray(at, at + this.nums[slot * NW + N_ID_LENGTH]!));
  }

  /** Seeded FNV-1a over the UTF-16 code units, then murmur3's finaliser (the index reads the low bits). */
  private hashOf(s: string): number {
    let h = this.seed ^ 0x811c9dc5;
    const n = s.length;
    if (n <= ID_WIDTH) {
      // the code units are copied as they are read, into the row of the slot the next open takes
      // (free: nothing lives there) or, with none free, into the stage
      const free = this.free;
      const next = free.length > 0 ? free[free.length - 1]! : -1;
      let all = 0;
      if (next >= 0) {
        // four units a store: the row is out of cache, and each store to it waits for the line
        const words = this.idWords;
        let w = (next * ID_WIDTH) >> 2;
        let word = 0;
        let i = 0;
        for (; i < n; i++) {
          const c = s.charCodeAt(i);
          h = Math.imul(h ^ c, 0x01000193);
          all |= c;
          word |= (c & 0xff) << (LITTLE_ENDIAN ? (i & 3) << 3 : (3 - (i & 3)) << 3);
          if ((i & 3) === 3) {
            words[w++] = word;
            word = 0;
          }
        }
        if ((i & 3) !== 0) words[w] = word;
      } else {
        const stage = this.stage;
        for (let i = 0; i < n; i++) {
          const c = s.charCodeAt(i);
          h = Math.imul(h ^ c, 0x01000193);
          stage[i] = c;
          all |= c;
        }
      }
      this.staged = all <= 0xff ? s : undefined;
      this.stagedSlot = next;
    } else {
      for (let i = 0; i < n; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    }
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h | 0;
  }

  /** The slot of a live record of `id` (whose hash is `h`), or -1. */
  private slotOf(id: string, h: number): number {
    const t = this.table;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = t[i << 1]!;
      if (v === 0) return -1;
      if (t[(i << 1) | 1] === h && this.idIs(v - 1, id)) return v - 1;
    }
  }

  /** Places `slot` in the index at its hash `h`; an insert that probes too far rebuilds the index with a new seed. */
  private insert(slot: number, h: number): void {
    const t = this.table;
    const mask = this.mask;
    let i = h & mask;
    let probes = 0;
    while (t[i << 1] !== 0) {
      i = (i + 1) & mask;
      probes++;
    }
    t[i << 1] = slot + 1;
    t[(i << 1) | 1] = h;
    // a reseed hashes every live id again: at most once per count/2 inserts, so O(1) per insert
    if (++this.sinceReseed * 2 >= this.count && probes > MAX_PROBE) this.reseed();
  }

  /** A new seed: every live record's id hashed again and the index rebuilt. */
  private reseed(): void {
    this.seed = randomSeed();
    this.sinceReseed = 0;
    this.missedId = undefined;
    for (let slot = 0; slot < this.cap; slot++)
      if (this.nums[slot * NW + N_STATE] !== FREE) this.nums[slot * NW + N_HASH] = this.hashOf(this.idOf(slot));
    this.reindex();
  }

  private reindex(): void {
    this.table.fill(0);
    const t = this.table;
    const mask = this.mask;
    for (let slot = 0; slot < this.cap; slot++) {
      if (this.nums[slot * NW + N_STATE] === FREE) continue;
      const h = this.nums[slot * NW + N_HASH]!;
      let i = h & mask;
      while (t[i << 1] !== 0) i = (i + 1) & mask;
      t[i << 1] = slot + 1;
      t[(i << 1) | 1] = h;
    }
  }

  /** Takes `slot` out of the index (backward-shift deletion: no tombstones, probes stay short). */
  private unindex(slot: number): void {
    const t = this.table;
    const mask = this.mask;
    let i = this.nums[slot * NW + N_HASH]! & mask;
    while (t[i << 1] !== slot + 1) i = (i + 1) & mask;
    // move back every later entry of the run whose home is not between the hole and it
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const v = t[j << 1]!;
      if (v === 0) break;
      const h = t[(j << 1) | 1]!;
      const k = h & mask;
      if (i <= j ? k <= i || k > j : k <= i && k > j) {
        t[i << 1] = v;
        t[(i << 1) | 1] = h;
        i = j;
      }
    }
    t[i << 1] = 0;
    this.count--;
  }

  private remove(slot: number): void {
    this.unindex(slot);
    this.nums[slot * NW + N_STATE] = FREE;
    this.nums[slot * NW + N_QUEUED] = -1;
    this.refs[slot * RW + R_ID] = undefined;
    this.refs[slot * RW + R_CORRELATION] = undefined;
    this.refs[slot * RW + R_TARGET] = undefined;
    this.refs[slot * RW + R_CALLER] = undefined;
    this.refs[slot * RW + R_ARGS] = NO_ARGS;
    this.refs[slot * RW + R_KEY] = undefined;
    this.refs[slot * RW + R_VALUE] = undefined;
    this.refs[slot * RW + R_DONE] = undefined;
    if (this.createdText.size > 0) this.createdText.delete(slot);
    if (this.finishedText.size > 0) this.finishedText.delete(slot);
    this.free.push(slot);
  }

  /** Evicts finished records, oldest first, down to 90% of the bound (so it runs rarely). */
  private evict(): void {
    const target = Math.floor(this.max_records * 0.9);
    while (this.count > target && this.head < this.tail) {
      const at = this.head++;
      const slot = this.finished[at & this.finishedMask]!;
      // the record that finished there still (a slot freed since is -1 until its next record finishes)
      if (this.nums[slot * NW + N_QUEUED] === at) this.remove(slot);
    }
  }

  /** Room for `cap` (rounded up to a power of 2) records; the columns never shrink (a burst of running calls leaves them wide). */
  private grow(cap: number): void {
    cap = 2 ** Math.ceil(Math.log2(cap));
    const old = this.cap;
    const nums = new Float64Array(cap * NW);
    nums.set(this.nums.subarray(0, old * NW));
    for (let slot = old; slot < cap; slot++) nums[slot * NW + N_QUEUED] = -1;
    this.nums = nums;
    const chars = new Uint8Array(cap * ID_WIDTH);
    chars.set(this.idChars.subarray(0, old * ID_WIDTH));
    this.idChars = chars;
    this.idWords = new Uint32Array(chars.buffer);
    if (old === 0) this.refs = [];
    for (let slot = old; slot < cap; slot++) {
      for (let f = 0; f < RW; f++) this.refs.push(f === R_ARGS ? NO_ARGS : undefined);
    }
    // the lowest slots are taken first
    for (let slot = cap - 1; slot >= old; slot--) this.free.push(slot);
    this.cap = cap;
    this.table = new Int32Array(cap * 4);
    this.mask = cap * 2 - 1;
    this.reindex();
  }
}

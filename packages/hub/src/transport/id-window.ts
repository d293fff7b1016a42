/** Longest id kept as bytes in an {@link IdWindow} slot (ULIDs are 26). */
const ID_BYTES = 32;

/**
 * The last `size` distinct ids seen, for deduplication: `add` remembers an id unless it is
 * already in the window, and past `size` ids the oldest is forgotten (the same semantics as a
 * Set plus a ring of its ids). Everything lives in arrays sized once: ids of at most 32
 * Latin-1 characters (ULIDs) are copied as bytes into their slot, longer or other ids are kept
 * as strings, and an open-addressing table (linear probing, backward-shift deletion) of slot
 * numbers finds them. Nothing is allocated per id and the window keeps no string alive, so a
 * window of recent ids does not promote one string per event and no hash table is rebuilt as
 * ids come and go (a Set that deletes and adds 20,000 ids does both).
 */
export class IdWindow {
  readonly size: number;
  private readonly bytes: Uint8Array;
  /** Length of the id in each slot when held as bytes; -1 when held in `strs`. */
  private readonly lens: Int16Array;
  private readonly strs: (string | undefined)[];
  private readonly hashes: Uint32Array;
  /** Per table position: slot + 1 (0 = empty), then that id's hash (one cache line for a probe). */
  private readonly table: Int32Array;
  private readonly mask: number;
  private head = 0;
  private count = 0;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`dedup window must be a positive integer, got ${size}`);
    this.size = size;
    this.bytes = new Uint8Array(size * ID_BYTES);
    this.lens = new Int16Array(size);
    this.strs = new Array<string | undefined>(size).fill(undefined);
    this.hashes = new Uint32Array(size);
    let cap = 8;
    while (cap < size * 2) cap *= 2;
    this.table = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  /** Ids currently remembered. */
  get length(): number {
    return this.count;
  }

  /** Whether `id` is in the window. */
  has(id: string): boolean {
    return this.find(id, hashId(id)) >= 0;
  }

  /** Remembers `id` and returns true, or returns false when it is already in the window. */
  add(id: string): boolean {
    const h = hashId(id);
    if (this.find(id, h) >= 0) return false;
    let slot: number;
    if (this.count < this.size) slot = (this.head + this.count++) % this.size;
    else {
      slot = this.head;
      this.remove(slot);
      this.head = (this.head + 1) % this.size;
    }
    this.store(slot, id, h);
    const table = this.table;
    let pos = h & this.mask;
    while (table[pos * 2] !== 0) pos = (pos + 1) & this.mask;
    table[pos * 2] = slot + 1;
    table[pos * 2 + 1] = h | 0;
    return true;
  }

  /** Table position of `id`, or -1. */
  private find(id: string, h: number): number {
    const table = this.table;
    const mask = this.mask;
    const hi = h | 0;
    for (let pos = h & mask; ; pos = (pos + 1) & mask) {
      const v = table[pos * 2]!;
      if (v === 0) return -1;
      if (table[pos * 2 + 1] === hi && this.holds(v - 1, id)) return pos;
    }
  }

  private holds(slot: number, id: string): boolean {
    const len = this.lens[slot]!;
    if (len < 0) return this.strs[slot] === id;
    if (len !== id.length) return false;
    const bytes = this.bytes;
    const base = slot * ID_BYTES;
    for (let i = 0; i < len; i++) if (bytes[base + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private store(slot: number, id: string, h: number): void {
    this.hashes[slot] = h;
    const len = id.length;
    if (len <= ID_BYTES) {
      const bytes = this.bytes;
      const base = slot * ID_BYTES;
      let i = 0;
      for (; i < len; i++) {
        const c = id.charCodeAt(i);
        if (c > 255) break;
        bytes[base + i] = c;
      }
      if (i === len) {
        this.lens[slot] = len;
        return;
      }
    }
    this.lens[slot] = -1;
    this.strs[slot] = id;
  }

  /** Takes a slot's id out of the table (backward-shift deletion: no tombstones). */
  private remove(slot: number): void {
    const table = this.table;
    const mask = this.mask;
    let pos = this.hashes[slot]! & mask;
    while (table[pos * 2] !== slot + 1) pos = (pos + 1) & mask;
    let next = (pos + 1) & mask;
    while (table[next * 2] !== 0) {
      const home = table[next * 2 + 1]! & mask;
      // move the entry at `next` into the hole unless its home lies cyclically in (pos, next]
      if (((next - home) & mask) >= ((next - pos) & mask)) {
        table[pos * 2] = table[next * 2]!;
        table[pos * 2 + 1] = table[next * 2 + 1]!;
        pos = next;
      }
      next = (next + 1) & mask;
    }
    table[pos * 2] = 0;
    this.strs[slot] = undefined;
  }
}

/**
 * A hash of every UTF-16 code unit of `s`: two FNV-1a lanes (even and odd positions, so the
 * multiplications of one do not wait for the other), then mixed (ids often share long prefixes).
 */
function hashId(s: string): number {
  const n = s.length;
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ s.charCodeAt(i + 1), 0x01000193);
  }
  if (i < n) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  let h = a ^ Math.imul(b ^ n, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
}

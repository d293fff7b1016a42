import { describe, expect, it } from 'vitest';

import { IdWindow } from '../../src/transport/id-window.js';

/** The semantics IdWindow must keep: a Set of ids plus a ring that forgets the oldest. */
class ModelWindow {
  private readonly seen = new Set<string>();
  private readonly ring: string[] = [];
  private head = 0;
  constructor(private readonly size: number) {}
  add(id: string): boolean {
    if (this.seen.has(id)) return false;
    if (this.ring.length < this.size) this.ring.push(id);
    else {
      this.seen.delete(this.ring[this.head]!);
      this.ring[this.head] = id;
      this.head = (this.head + 1) % this.size;
    }
    this.seen.add(id);
    return true;
  }
  has(id: string): boolean {
    return this.seen.has(id);
  }
}

/** A deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('IdWindow', () => {
  it('answers like a Set plus a ring of its ids, for short, long and non-Latin-1 ids', () => {
    for (const size of [1, 2, 7, 64, 1000]) {
      const next = rng(size);
      const pool: string[] = [];
      for (let i = 0; i < size * 3; i++) {
        const kind = i % 5;
        if (kind === 3) pool.push(`long-id-${'x'.repeat(30)}-${i}`);
        else if (kind === 4) pool.push(`ünï-€-${i}`);
        else if (kind === 2) pool.push(`${i}`);
        else pool.push(`01J${String(i).padStart(23, '0')}`);
      }
      pool.push('');
      const w = new IdWindow(size);
      const m = new ModelWindow(size);
      for (let k = 0; k < size * 40; k++) {
        const id = pool[Math.floor(next() * pool.length)]!;
        expect(w.add(id)).toBe(m.add(id));
        const probe = pool[Math.floor(next() * pool.length)]!;
        expect(w.has(probe)).toBe(m.has(probe));
      }
      expect(w.length).toBe(Math.min(size, new Set(pool).size));
    }
  });

  it('forgets the oldest id once full', () => {
    const w = new IdWindow(2);
    expect(w.add('a')).toBe(true);
    expect(w.add('b')).toBe(true);
    expect(w.add('a')).toBe(false);
    expect(w.add('c')).toBe(true);
    expect(w.has('a')).toBe(false);
    expect(w.has('b')).toBe(true);
    expect(w.add('a')).toBe(true);
    expect(w.has('b')).toBe(false);
  });

  it('rejects a size that is not a positive integer', () => {
    expect(() => new IdWindow(0)).toThrow(RangeError);
    expect(() => new IdWindow(1.5)).toThrow(RangeError);
  });
});

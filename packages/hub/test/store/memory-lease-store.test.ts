import { describe, expect, it } from 'vitest';

import { MemoryLeaseStore } from '../../src/store/memory-lease-store.js';
import { clockAt } from './clock-at.js';

describe('MemoryLeaseStore', () => {
  it('grants a key to one holder, extends and releases only for that holder, expires by the clock', async () => {
    const t = { now: 1000 };
    const s = new MemoryLeaseStore(clockAt(t));
    expect(await s.acquire('k', 'a', 100)).toBe(true);
    expect(await s.acquire('k', 'b', 100)).toBe(false);
    expect(await s.acquire('k', 'a', 100)).toBe(false);
    expect(await s.extend('k', 'b', 500)).toBe(false);
    expect(await s.release('k', 'b')).toBe(false);
    expect(await s.holder('k')).toBe('a');
    t.now = 1090;
    expect(await s.extend('k', 'a', 100)).toBe(true);
    t.now = 1150; // past the first ttl, within the extension
    expect(await s.holder('k')).toBe('a');
    t.now = 1190;
    expect(await s.holder('k')).toBeUndefined();
    expect(await s.extend('k', 'a', 100)).toBe(false);
    expect(await s.acquire('k', 'b', 100)).toBe(true);
    expect(await s.release('k', 'b')).toBe(true);
    expect(await s.holder('k')).toBeUndefined();
  });

  it('refuses new leases when full of live ones, and prunes expired ones to make room', async () => {
    const t = { now: 0 };
    const s = new MemoryLeaseStore(clockAt(t), 2);
    expect(await s.acquire('a', 'x', 10)).toBe(true);
    expect(await s.acquire('b', 'x', 100)).toBe(true);
    expect(await s.acquire('c', 'x', 100)).toBe(false);
    t.now = 50;
    expect(await s.acquire('c', 'x', 100)).toBe(true);
  });
});

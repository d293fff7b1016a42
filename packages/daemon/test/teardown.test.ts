import { describe, expect, it } from 'vitest';

import { Teardown } from '../src/teardown.js';

describe('Teardown', () => {
  it('runs phase by phase (front, drain, answer, state), the last registered first within a phase', async () => {
    const ran: string[] = [];
    const t = new Teardown(() => undefined);
    const step = (name: string) => () => void ran.push(name);
    t.add('state', 'tokens', step('tokens'));
    t.add('drain', 'hub', step('hub'));
    t.add('state', 'audit', step('audit'));
    t.add('front', 'firewall', step('firewall'));
    t.add('answer', 'gateway', step('gateway'));
    t.add('front', 'sockets', step('sockets'));
    t.add('drain', 'http', step('http'));
    expect(t.order()).toEqual([
      'front: sockets',
      'front: firewall',
      'drain: http',
      'drain: hub',
      'answer: gateway',
      'state: audit',
      'state: tokens',
    ]);
    await t.run();
    expect(ran).toEqual(['sockets', 'firewall', 'http', 'hub', 'gateway', 'audit', 'tokens']);
  });

  it('awaits each step before the next, reports a failing step by name and goes on', async () => {
    const ran: string[] = [];
    const failed: string[] = [];
    const t = new Teardown((name, err) => failed.push(`${name}: ${(err as Error).message}`));
    t.add('state', 'last', () => void ran.push('last'));
    t.add('state', 'slow', async () => {
      await new Promise((r) => setImmediate(r));
      ran.push('slow');
    });
    t.add('front', 'broken', () => {
      throw new Error('disk full');
    });
    t.add('front', 'rejecting', () => Promise.reject(new Error('gone')));
    await t.run();
    expect(ran).toEqual(['slow', 'last']);
    expect(failed).toEqual(['rejecting: gone', 'broken: disk full']);
  });

  it('runs once: a second run (close after a failed start, or close twice) waits for the first', async () => {
    let n = 0;
    const t = new Teardown(() => undefined);
    t.add('state', 'count', () => void n++);
    await Promise.all([t.run(), t.run()]);
    await t.run();
    expect(n).toBe(1);
    expect(() => t.add('state', 'late', () => undefined)).toThrow(/teardown already ran: cannot add late/);
  });
});

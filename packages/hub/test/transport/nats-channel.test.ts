import { describe, expect, it } from 'vitest';

import { InflightCalls, NatsServerChannel } from '../../src/transport/nats-channel.js';

const sender = { publishControl: () => undefined };

describe('NatsServerChannel', () => {
  it('passes a cancel to its receiver until the call is finished', () => {
    const seen: string[] = [];
    const ch = new NatsServerChannel(sender, '_INBOX.x.', '1', false);
    ch.onCancel({ onCancelled: (r) => seen.push(r) });
    ch.cancel('E_TIMEOUT');
    ch.cancel('again');
    expect(seen).toEqual(['E_TIMEOUT']);
    expect(ch.cancelled).toBe('E_TIMEOUT');
  });

  it('lets its receiver go once finished: a later cancel or receiver is ignored', () => {
    const seen: string[] = [];
    const ch = new NatsServerChannel(sender, '_INBOX.x.', '2', false);
    ch.onCancel({ onCancelled: (r) => seen.push(r) });
    ch.finish();
    ch.cancel('E_TIMEOUT');
    ch.onCancel({ onCancelled: (r) => seen.push(`late ${r}`) });
    expect(seen).toEqual([]);
    expect(ch.cancelled).toBeUndefined();
  });
});

describe('InflightCalls', () => {
  it('finds calls by request id, lets go of removed ones and reuses their slots', () => {
    const calls = new InflightCalls();
    const a = new NatsServerChannel(sender, '_INBOX.x.', '1', false, 'A');
    const b = new NatsServerChannel(sender, '_INBOX.x.', '2', false, 'B');
    expect(calls.get('A')).toBeUndefined();
    calls.add(a);
    calls.add(b);
    expect(calls.size).toBe(2);
    expect(calls.get('A')).toBe(a);
    expect(calls.get('B')).toBe(b);
    expect(calls.get('C')).toBeUndefined();
    calls.remove(a);
    calls.remove(a); // twice: no-op
    expect(calls.size).toBe(1);
    expect(calls.get('A')).toBeUndefined();
    const c = new NatsServerChannel(sender, '_INBOX.x.', '3', false, 'C');
    calls.add(c);
    expect(c.slot).toBe(0); // a's slot, given back
    expect(calls.get('C')).toBe(c);
    calls.remove(b);
    calls.remove(c);
    expect(calls.size).toBe(0);
    expect(calls.get('B')).toBeUndefined();
  });
});

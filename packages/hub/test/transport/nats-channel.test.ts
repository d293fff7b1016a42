import { describe, expect, it } from 'vitest';

import { NatsServerChannel } from '../../src/transport/nats-channel.js';

const sender = { publishControl: () => undefined };

describe('NatsServerChannel', () => {
  it('passes a cancel to its receiver until the call is finished', () => {
    const seen: string[] = [];
    const ch = new NatsServerChannel(sender, '_INBOX.x.1', false);
    ch.onCancel({ onCancelled: (r) => seen.push(r) });
    ch.cancel('E_TIMEOUT');
    ch.cancel('again');
    expect(seen).toEqual(['E_TIMEOUT']);
    expect(ch.cancelled).toBe('E_TIMEOUT');
  });

  it('lets its receiver go once finished: a later cancel or receiver is ignored', () => {
    const seen: string[] = [];
    const ch = new NatsServerChannel(sender, '_INBOX.x.2', false);
    ch.onCancel({ onCancelled: (r) => seen.push(r) });
    ch.finish();
    ch.cancel('E_TIMEOUT');
    ch.onCancel({ onCancelled: (r) => seen.push(`late ${r}`) });
    expect(seen).toEqual([]);
    expect(ch.cancelled).toBeUndefined();
  });
});

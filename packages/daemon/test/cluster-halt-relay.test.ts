import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { MemorySafetyStore, SafetyMonitor } from '@finger/firewall';
import type { FingerEvent } from '@finger/protocol';

import { haltRelay } from '../src/cluster-halt-relay.js';

const ADMIN = { kind: 'human', id: 'root', roles: ['admin'] };

function unlocked(ts: string): FingerEvent {
  return {
    id: `u-${ts}`,
    type: 'UNLOCKED',
    ts,
    request_id: '',
    correlation_id: '',
    session_id: '',
    workflow_id: '',
    target: '',
    data: { by: 'human:bob' },
  };
}

describe('haltRelay: an unlock relayed from another daemon', () => {
  it('is ignored when older than this daemon’s halt (a replayed message), taken when newer', async () => {
    const monitor = await SafetyMonitor.open({ store: new MemorySafetyStore(), config: { halt_grace_ms: 1 } });
    const relay = haltRelay(monitor, pino({ level: 'silent' }));
    await monitor.halt({ actor: ADMIN, reason: 'incident' });
    const at = Date.parse(monitor.lockoutOf()!.at);
    relay.handler(unlocked(new Date(at - 60_000).toISOString()), 'daemon-b');
    await new Promise((r) => setTimeout(r, 50));
    expect(monitor.isLocked()).toBe(true);
    relay.handler(unlocked(new Date(at + 1).toISOString()), 'daemon-b');
    for (let i = 0; i < 100 && monitor.isLocked(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(monitor.isLocked()).toBe(false);
  });
});

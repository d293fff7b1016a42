import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { MemorySafetyStore, SafetyMonitor } from '@finger/firewall';
import type { FingerEvent } from '@finger/protocol';
import { waitUntil } from '@finger/testkit/core';

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
    const said: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => said.push(JSON.parse(line).msg) });
    const relay = haltRelay(monitor, log);
    await monitor.halt({ actor: ADMIN, reason: 'incident' });
    const at = Date.parse(monitor.lockoutOf()!.at);
    relay.handler(unlocked(new Date(at - 60_000).toISOString()), 'daemon-b');
    // the relay decided at once (it says so): no unlock was started that could land later
    expect(said).toEqual(['ignored an unlock older than this daemon’s halt']);
    expect(monitor.isLocked()).toBe(true);
    relay.handler(unlocked(new Date(at + 1).toISOString()), 'daemon-b');
    await waitUntil('the relayed unlock', () => !monitor.isLocked(), 10_000, 20);
    expect(monitor.isLocked()).toBe(false);
  });
});

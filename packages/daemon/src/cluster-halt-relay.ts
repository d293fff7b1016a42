// The kill switch across a cluster without shared state (NATS, no Redis): each daemon keeps its
// own lockout, so a halt or an unlock made on one daemon is relayed to the others through the
// cluster's event stream, where it arrives signed with the cluster key.

import type { Logger as PinoLogger } from 'pino';

import type { SafetyMonitor } from '@finger/firewall';
import type { EventType, FingerEvent } from '@finger/protocol';
import { isFingerError } from '@finger/protocol';

/** How often, and how many times, an unlock is tried again while this daemon's own halt still runs. */
const UNLOCK_RETRY_MS = 250;
const UNLOCK_TRIES = 40;

/**
 * What the cluster node is told of other daemons' HALTED and UNLOCKED events (only daemons sign
 * with the cluster key; a serve host's events of these types are dropped before). A HALTED event
 * halts this daemon too (gracefully) unless it is already halting or locked — so the halt it
 * emits in turn, coming back, changes nothing; an UNLOCKED of the system unlocks it once its own
 * halt is done. Both are audited here with the other daemon as the actor. Best effort, as the
 * event stream is: a daemon cut off from NATS at that moment misses it (with Redis, every daemon
 * reads the one shared lockout instead).
 */
export function haltRelay(
  monitor: SafetyMonitor,
  log: PinoLogger,
): { types: readonly EventType[]; handler: (event: FingerEvent, node: string) => void } {
  const warn = (what: string, node: string) => (e: unknown) =>
    log.warn({ err: e, node }, `the ${what} relayed from another daemon failed`);
  const unlock = (node: string, tries: number): void => {
    if (!monitor.isLocked()) return;
    monitor.unlock({ actor: { kind: 'daemon', id: node, roles: ['admin'] } }).then(
      () => log.warn({ node }, 'unlocked: another daemon of the cluster was unlocked'),
      (e: unknown) => {
        // this daemon's own halt is still running (E_HALTED): the unlock comes once it is done
        if (isFingerError(e) && e.code === 'E_HALTED' && tries > 1)
          setTimeout(() => unlock(node, tries - 1), UNLOCK_RETRY_MS).unref();
        else warn('unlock', node)(e);
      },
    );
  };
  return {
    types: ['HALTED', 'UNLOCKED'],
    handler: (event, node) => {
      if (event.type === 'HALTED') {
        if (monitor.isLocked()) return;
        const by = typeof event.data.by === 'string' ? event.data.by : 'someone';
        const why =
          typeof event.data.reason === 'string' && event.data.reason !== 'halt' ? `: ${event.data.reason}` : '';
        log.warn({ node, by }, 'halting: another daemon of the cluster was halted');
        void monitor
          .halt({ actor: { kind: 'daemon', id: node }, reason: `halted on ${node} by ${by}${why}` })
          .catch(warn('halt', node));
      } else if (event.type === 'UNLOCKED' && event.data.agent_id === undefined) {
        // an unlock older than the halt it would clear (a message captured and published again)
        const since = monitor.lockoutOf()?.at;
        if (since !== undefined && Date.parse(event.ts) < Date.parse(since)) {
          log.warn(
            { node, unlocked_at: event.ts, locked_at: since },
            'ignored an unlock older than this daemon’s halt',
          );
          return;
        }
        unlock(node, UNLOCK_TRIES);
      }
    },
  };
}

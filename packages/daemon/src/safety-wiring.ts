import { join } from 'node:path';

import {
  type AuditLog,
  createSafetyInterceptor,
  FileSafetyStore,
  type SafetyConfig,
  SafetyMonitor,
  type SafetyStateStore,
} from '@finger/firewall';
import type { Clock, Interceptor, Logger, MessageHub } from '@finger/hub';

/** Options of {@link wireSafety}. */
export interface SafetyWiringOptions {
  hub: MessageHub;
  audit: AuditLog;
  home: string;
  /** Config `safety`. */
  config: SafetyConfig;
  logger: Logger;
  clock: Clock;
  /** A shared store (distributed mode); default `FINGER_HOME/state/safety.json`. */
  store?: SafetyStateStore;
  /** Denials that are not the agent's fault (the HumanGate's `agent_fault: false` rejections): not counted by the denial breaker. */
  excused?: (error: unknown) => boolean;
}

/** The safety layer of one daemon. */
export interface SafetyWiring {
  monitor: SafetyMonitor;
  store: SafetyStateStore;
  /** Goes first in the hub chain (before the grant interceptor). */
  interceptor: Interceptor;
  /**
   * The failure of the last write of `state/safety.json` while what is in memory (a halt's lockout)
   * is not yet in the file; the file store retries it every second. Undefined for a shared store.
   */
  writeFailure(): { code: string; message: string; at: number } | undefined;
  /** Unsubscribes the monitor; closes the store when this wiring opened it. */
  close(): Promise<void>;
}

/**
 * Opens the safety state (a persisted SAFETY_LOCKOUT refuses work from the first request; a
 * damaged `state/safety.json` refuses the start with E_STORE_UNAVAILABLE) and builds the
 * SafetyMonitor, whose halt cancels every hub call (`hub.abortAll`: graceful within
 * `safety.halt_grace_ms`, a second halt at once), and its interceptor.
 */
export async function wireSafety(o: SafetyWiringOptions): Promise<SafetyWiring> {
  const owned = o.store === undefined;
  const file = owned ? await FileSafetyStore.open(join(o.home, 'state', 'safety.json')) : undefined;
  const store = o.store ?? (file as FileSafetyStore);
  try {
    const monitor = await SafetyMonitor.open({
      store,
      config: o.config,
      clock: o.clock,
      events: o.hub.events,
      audit: o.audit,
      logger: o.logger,
      onHalt: async (mode, error, grace_ms) => {
        const r = await o.hub.abortAll(error, mode === 'graceful' ? grace_ms : 0);
        o.logger.warn({ mode, ...r }, 'halt: hub calls stopped');
      },
    });
    const interceptor = createSafetyInterceptor(monitor, o.excused ? { excused: o.excused } : {}) as Interceptor;
    return {
      monitor,
      store,
      interceptor,
      writeFailure: () => file?.writeFailure(),
      async close() {
        monitor.close();
        if (owned) await store.close();
      },
    };
  } catch (e) {
    if (owned) await store.close();
    throw e;
  }
}

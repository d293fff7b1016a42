// The firewall as one part: `createFirewall` builds the engine, the human gate and the
// interceptor, and owns everything that decides whether a call is held and what happens after —
// the refusal of holds for read-only callers, the one binding check (in the interceptor), the
// standing approvals (`always` grants) and their expiry sweep, the adaptation loop and the
// kill switch's refusal of pending approvals. The daemon plugs the interceptor into the hub
// after the grant interceptor; nothing else there knows when a call is held.

import { type EventType, isFingerError, type Principal } from '@finger/protocol';

import type { AuditRecord } from './audit/audit-entry.js';
import type { FirewallCall, FirewallTools } from './engine/call-facts.js';
import { FirewallEngine, type FirewallEngineOptions } from './engine/firewall-engine.js';
import {
  createFirewallInterceptor,
  type FirewallInterceptor,
  type SandboxProfileChannel,
} from './engine/firewall-interceptor.js';
import type { HumanGateOptions } from './gate/gate-types.js';
import { HumanGate } from './gate/human-gate.js';
import { refuseHoldsOfReadOnlyCallers } from './gate/read-only-callers.js';
import { StandingApprovals } from './gate/standing-approvals.js';
import type { VerdictEvents } from './grants/grant-interceptor.js';
import { type AdaptationLogger, createAdaptationLoop } from './perception/adaptation-loop.js';
import { PerceptionBus } from './perception/perception-bus.js';
import type { PolicyStore } from './policy/policy-store.js';

/** The event bus as the firewall uses it (the hub's EventBus satisfies it). */
export interface FirewallEvents extends VerdictEvents {
  /** The firewall listens for APPROVAL_RESOLVED (adaptation) and HALTED (pending approvals refused). */
  subscribeJson(filter: { types: readonly EventType[] }, listener: () => void): () => void;
}

/** How {@link createFirewall} is built. */
export interface FirewallOptions {
  /** The policy in force; the adaptation loop changes its user layer. */
  policy: PolicyStore;
  /** The engine's parts besides the policy (risk assessor, path sandbox, clock, behaviour, sandbox profiles…). */
  engine: Omit<FirewallEngineOptions, 'policy'>;
  events: FirewallEvents;
  /** Every verdict, approval and standing-approval use is appended here before the call runs. */
  audit?: { append(record: AuditRecord): Promise<unknown>; commit?(record: AuditRecord): Promise<unknown> };
  /** Tool metadata with the registry's defaults (see FirewallInterceptorOptions.tools). */
  tools?: FirewallTools;
  /** The model's confidence for the principal's current step, if known. */
  confidenceOf?: (principal: Principal) => number | undefined;
  /** Hands a verdict's sandbox profile to the module that runs the call (FirewallInterceptorOptions.sandboxProfiles). */
  sandboxProfiles?: SandboxProfileChannel;
  /** The HumanGate's options besides what the firewall wires itself (events, audit, perception, standing, re-evaluation). */
  approvals?: Omit<HumanGateOptions, 'events' | 'audit' | 'perception' | 'standing' | 'reevaluate' | 'logger'>;
  /** A gate to use instead of the HumanGate built from `approvals` (tests). */
  gate?: HumanGate;
  /** Made here when absent. */
  perception?: PerceptionBus;
  /** The standing approvals `always` leaves behind; made here when absent (pass one to persist it). */
  standing?: StandingApprovals;
  /** Principals acting for a read-only caller: a call of theirs that would be held is refused (E_FORBIDDEN). */
  readOnly?: (principal: Principal) => boolean;
  logger: AdaptationLogger;
}

/** The built firewall. */
export interface Firewall {
  /** The hub interceptor (after the grant interceptor). */
  interceptor: FirewallInterceptor;
  gate: HumanGate;
  engine: FirewallEngine;
  perception: PerceptionBus;
  standing: StandingApprovals;
  /** Waits for pending adaptation changes (tests, shutdown). */
  settled(): Promise<void>;
  /** True for a refusal the person said was not the agent's fault (it does not feed the denial breaker). */
  excused(error: unknown): boolean;
  /** Stops the adaptation and the sweep and closes the gate (pending approvals are rejected). Idempotent. */
  close(): Promise<void>;
}

/** How often expired standing approvals are dropped. */
const SWEEP_MS = 60_000;

/**
 * Builds the firewall: the engine over `policy`, a HumanGate (or `gate`) that re-evaluates edited
 * arguments with that engine, and the interceptor that holds through it — refusing holds of
 * `readOnly` callers with E_FORBIDDEN. Subscribes the adaptation loop to APPROVAL_RESOLVED and
 * the refusal of pending approvals to HALTED. Nothing listens or runs before the first call.
 */
export function createFirewall(o: FirewallOptions): Firewall {
  const { policy, events, logger } = o;
  const clock = o.engine.clock;
  const engine = new FirewallEngine({ ...o.engine, policy });
  const perception = o.perception ?? new PerceptionBus(clock ? { clock } : {});
  const standing = o.standing ?? new StandingApprovals();
  const gate =
    o.gate ??
    new HumanGate({
      ...o.approvals,
      events,
      standing,
      reevaluate: (f) => engine.evaluate(f, { record: false }),
      ...(o.audit ? { audit: o.audit } : {}),
      perception,
      logger,
    });
  const { readOnly, confidenceOf } = o;
  const interceptor = createFirewallInterceptor({
    engine,
    ...(o.tools ? { tools: o.tools } : {}),
    events,
    ...(o.audit ? { audit: o.audit } : {}),
    gate: readOnly ? refuseHoldsOfReadOnlyCallers(gate, readOnly) : gate,
    ...(confidenceOf ? { confidenceOf: (call: FirewallCall) => confidenceOf(call.envelope.source) } : {}),
    ...(o.sandboxProfiles ? { sandboxProfiles: o.sandboxProfiles } : {}),
  });

  const now = () => (clock ? clock.now() : Date.now());
  const sweep = setInterval(() => standing.sweep(now()), SWEEP_MS);
  sweep.unref();

  const adaptation = createAdaptationLoop({ policy, perception, logger });
  const unsubscribe = events.subscribeJson({ types: ['APPROVAL_RESOLVED'] }, () => adaptation.trigger());
  // the kill switch: held calls' callers got E_HALTED; their approvals must not stay answerable
  const unsubscribeHalt = events.subscribeJson({ types: ['HALTED'] }, () => {
    gate.refusePendingForHalt().then(
      (n) => {
        if (n > 0) logger.warn({ refused: n }, 'halt: pending approvals refused');
      },
      (e: unknown) => logger.warn({ err: e }, 'halt: refusing pending approvals failed'),
    );
  });

  let closing: Promise<void> | undefined;
  return {
    interceptor,
    gate,
    engine,
    perception,
    standing,
    settled: () => adaptation.settled(),
    excused(error) {
      const id = isFingerError(error)
        ? (error.details as { approval_id?: unknown } | undefined)?.approval_id
        : undefined;
      return typeof id === 'string' && gate.isExcused(id);
    },
    close() {
      closing ??= (async () => {
        const stopped = adaptation.stop();
        clearInterval(sweep);
        unsubscribe();
        unsubscribeHalt();
        await gate.close().catch((e: unknown) => logger.warn({ err: e }, 'gate close failed'));
        await stopped;
      })();
      return closing;
    },
  };
}

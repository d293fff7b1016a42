// The adaptation loop (docs/policy.md, "Adaptation"): after each resolved approval, what the
// PerceptionBus saw is turned into policy changes — 3 consecutive human rejections of a tool (or
// of a call shape) escalate it in the UserPolicy, consecutive approvals revert that. One run at a
// time; every change is audited by the PolicyStore.

import type { PolicyStore } from '../policy/policy-store.js';
import { ADAPTATION_RULE_PREFIX } from '../policy/policy-store.js';
import { adapt, type AdaptationAction } from './adaptation.js';
import type { PerceptionBus } from './perception-bus.js';

/** The logging surface the loop needs (pino satisfies it). */
export interface AdaptationLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** How the loop is built. */
export interface AdaptationLoopOptions {
  policy: PolicyStore;
  perception: PerceptionBus;
  logger: AdaptationLogger;
}

/** A running adaptation loop. */
export interface AdaptationLoop {
  /** Queues one run (after an APPROVAL_RESOLVED); a failing run is logged, the next still runs. */
  trigger(): void;
  /** Waits for the queued runs (tests, shutdown). */
  settled(): Promise<void>;
  /** No run starts after this; resolves when the current one is done. */
  stop(): Promise<void>;
}

const ACTOR = { kind: 'system', id: 'adaptation' };

/** Starts the loop: nothing runs until {@link AdaptationLoop.trigger}. */
export function createAdaptationLoop(o: AdaptationLoopOptions): AdaptationLoop {
  const { policy, perception, logger } = o;
  let afterSeq = 0;
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  /** A shape class escalates as a rule `adaptation:<tool>@<hash>` with its match; a whole tool as before. */
  const escalate = async (a: Extract<AdaptationAction, { kind: 'tighten' }>): Promise<void> => {
    const reason = `${a.rejections} consecutive rejections: ${a.hint}`;
    if (a.shape?.match !== undefined) {
      await policy.addRule(
        { id: `${ADAPTATION_RULE_PREFIX}${a.tool}`, tool: a.shape.tool, match: a.shape.match, level: a.level, reason },
        { actor: ACTOR, reason },
      );
      logger.info({ shape: a.shape.label, level: a.level }, 'adaptation escalated a call shape');
      return;
    }
    await policy.escalate(a.tool, a.level, { actor: ACTOR, reason });
    logger.info({ tool: a.tool, level: a.level }, 'adaptation escalated a tool');
  };

  const run = async (): Promise<void> => {
    if (stopped) return;
    const snapshot = perception.snapshot();
    const actions = adapt(snapshot, { escalated: policy.escalatedTools(), after_seq: afterSeq });
    afterSeq = snapshot.seq; // hesitations: PerceptionBus already queued the explain hints
    for (const a of actions) {
      if (a.kind === 'tighten') {
        await escalate(a);
      } else if (a.kind === 'revert') {
        await policy.revertEscalation(a.tool, { actor: ACTOR, reason: `${a.approvals} consecutive approvals` });
        logger.info({ tool: a.tool }, 'adaptation reverted an escalation');
      }
    }
  };

  return {
    trigger() {
      chain = chain.then(run).catch((e: unknown) => logger.warn({ err: e }, 'adaptation failed'));
    },
    settled: () => chain,
    async stop() {
      stopped = true;
      await chain;
    },
  };
}

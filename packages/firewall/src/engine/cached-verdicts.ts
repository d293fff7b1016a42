// The verdict cache as a decorator around a VerdictSource: a call whose memoryless layers (1, 3
// and 4) the engine's VerdictCache knows is answered by FirewallEngine.evaluateCached — which
// still runs the stateful layers and the same `decide` — and any other call goes to the source it
// wraps. The property test (test/engine/cached-verdicts.property.test.ts) holds both paths equal.

import type { FirewallCall } from './call-facts.js';
import { factsOf, toolOf } from './call-facts.js';
import type { CallReading, CallVerdict, VerdictSource } from './call-verdicts.js';
import { CACHED_ALLOW } from './engine-evaluation.js';
import type { Evaluation } from './evaluation.js';
import type { FirewallEvaluator } from './firewall-evaluator.js';

/**
 * `inner` with the verdict cache in front. Its `pass` answers true for a call the cache lets
 * through as it is (the hub then skips the interceptor); a call `pass` counted but that the
 * behaviour layer raised is kept, and its verdict taken up by the next `verdict` of the same call
 * instead of counting the call a second time.
 */
export function cachedVerdicts(
  engine: Required<Pick<FirewallEvaluator, 'evaluateCached'>>,
  inner: VerdictSource,
  reading: CallReading,
): VerdictSource {
  const { tools, confidenceOf } = reading;
  // verdicts pass() reached but did not let through
  const early = new WeakMap<FirewallCall, Evaluation>();
  let earlyCount = 0;
  const takeEarly = (call: FirewallCall): Evaluation | undefined => {
    const ev = early.get(call);
    if (ev !== undefined) {
      early.delete(call);
      earlyCount--;
    }
    return ev;
  };
  return {
    verdict(call, tool, confidence): CallVerdict | Promise<CallVerdict> {
      const ev = (earlyCount > 0 ? takeEarly(call) : undefined) ?? engine.evaluateCached(call, tool, confidence);
      if (ev === undefined) return inner.verdict(call, tool, confidence);
      if (ev === CACHED_ALLOW) return CACHED_ALLOW;
      return { facts: factsOf(call, tool, confidence), ev };
    },
    pass(call) {
      const ev = engine.evaluateCached(call, toolOf(call, tools), confidenceOf?.(call));
      if (ev === CACHED_ALLOW) return true;
      if (ev !== undefined) {
        early.set(call, ev);
        earlyCount++;
      }
      return false;
    },
  };
}

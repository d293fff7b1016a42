// Where the firewall interceptor gets a call's verdict from: a VerdictSource. The plain source
// asks the engine for every call (host names of URL arguments resolved first); the verdict cache
// is a decorator around it (cached-verdicts.ts), so the interceptor has one path whichever answers.

import type { FirewallCall, FirewallTools } from './call-facts.js';
import { factsOf } from './call-facts.js';
import { AutoEvaluation, CACHED_ALLOW, type CachedAllow } from './engine-evaluation.js';
import type { Evaluation, ToolCallFacts } from './evaluation.js';
import type { FirewallEvaluator } from './firewall-evaluator.js';

/**
 * A call's verdict as the interceptor acts on it: {@link CACHED_ALLOW} — a plain AUTO allow that
 * runs with the call's own arguments and writes nothing — or the facts judged and the Evaluation.
 */
export type CallVerdict = CachedAllow | { readonly facts: ToolCallFacts; readonly ev: Evaluation };

/** Gives the verdict of a call whose tool metadata and confidence the interceptor read once. */
export interface VerdictSource {
  verdict(
    call: FirewallCall,
    tool: ToolCallFacts['tool'],
    confidence: number | undefined,
  ): CallVerdict | Promise<CallVerdict>;
  /**
   * True for a call the source lets through as it is without the interceptor running (the hub's
   * Interceptor.pass); absent when the source cannot tell without evaluating.
   */
  pass?: (call: FirewallCall) => boolean;
}

/** How the interceptor reads a call's tool metadata and confidence (for {@link VerdictSource.pass}). */
export interface CallReading {
  tools?: FirewallTools | undefined;
  confidenceOf?: ((call: FirewallCall) => number | undefined) | undefined;
}

/**
 * Every call evaluated by the engine. `lean`: nothing will keep a plain AUTO allow's Evaluation
 * (no event, no audit entry), so the engine may answer one without building it — it comes back
 * as {@link CACHED_ALLOW}, the same answer the cache decorator gives.
 */
export function evaluatedVerdicts(engine: FirewallEvaluator, lean: boolean): VerdictSource {
  const options = { lean };
  const judged = (facts: ToolCallFacts): CallVerdict => {
    const ev = engine.evaluate(facts, options);
    // a lean plain AUTO allow: nothing was stripped, the call runs with its own arguments
    return ev instanceof AutoEvaluation ? CACHED_ALLOW : { facts, ev };
  };
  return {
    verdict(call, tool, confidence) {
      const facts = factsOf(call, tool, confidence);
      // the host names of URL arguments are resolved first: the engine judges the addresses
      const resolving = engine.withResolvedHosts?.(facts);
      return resolving === undefined ? judged(facts) : resolving.then(judged);
    },
  };
}

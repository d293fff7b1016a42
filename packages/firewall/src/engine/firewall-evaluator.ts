// The engine as the interceptor and its verdict sources use it (FirewallEngine satisfies it; the
// interceptor's tests script one).

import type { FirewallCall } from './call-facts.js';
import type { CachedAllow } from './engine-evaluation.js';
import type { Evaluation, ToolCallFacts } from './evaluation.js';
import type { EvaluateOptions } from './firewall-engine.js';

/** The engine as the interceptor uses it (FirewallEngine satisfies it). */
export interface FirewallEvaluator {
  evaluate(facts: ToolCallFacts, options?: EvaluateOptions): Evaluation;
  /** The verdict-cache path (see FirewallEngine.evaluateCached); optional. */
  evaluateCached?(
    call: FirewallCall,
    tool: ToolCallFacts['tool'],
    confidence: number | undefined,
  ): Evaluation | CachedAllow | undefined;
  fileSha256(path: string): string | null;
  /**
   * The facts with the host names of URL arguments resolved (see FirewallEngine.withResolvedHosts);
   * undefined when there is nothing to resolve. Optional: without it such hosts are judged unresolved.
   */
  withResolvedHosts?(facts: ToolCallFacts): Promise<ToolCallFacts> | undefined;
}

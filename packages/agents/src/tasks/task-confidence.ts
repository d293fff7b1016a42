import type { Principal } from '@finger/protocol';

/**
 * The confidence a supervised task's model reported for its current step, by the task's principal
 * OBJECT (the one TaskWorkspaces.bind made and the hub carries as `source`). The firewall reads it
 * for every tool call of that step (`confidenceOf`): low confidence tightens the behaviour layer
 * and feeds the metacognitive breaker (§3.8 layer 5). Self-reported confidence only ever makes a
 * call stricter, never looser. Anything else — another principal, a copy of the task's — has none.
 */
export class TaskConfidence {
  readonly #byPrincipal = new WeakMap<Principal, number>();

  /** Records the confidence of the step now running (`null`/non-finite: forgets it). */
  set(principal: Principal, confidence: number | null | undefined): void {
    if (typeof confidence === 'number' && Number.isFinite(confidence))
      this.#byPrincipal.set(principal, Math.min(1, Math.max(0, confidence)));
    else this.#byPrincipal.delete(principal);
  }

  /** The confidence recorded for exactly this principal object, if any. */
  readonly of = (principal: Principal | undefined): number | undefined =>
    principal === undefined || principal === null || typeof principal !== 'object'
      ? undefined
      : this.#byPrincipal.get(principal);
}

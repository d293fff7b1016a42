// The two shapes of Evaluation the FirewallEngine returns. Both keep the arguments to dispatch
// behind a getter, so JSON — the audit log, the wire — never carries raw arguments.

import { ulid } from '@finger/protocol';

import type { PermissionVerdict } from '../policy/evaluate-policy.js';
import type { Evaluation, Layer, Level, MatchedRule, Preview, VerdictAction } from './evaluation.js';

/**
 * The general Evaluation: a plain-data object whose `args` (the arguments after the argument
 * filter: what must be dispatched) is a private field behind a getter.
 */
export class EngineEvaluation implements Evaluation {
  declare preview?: Preview;
  declare warnings?: string[];
  declare human_only?: boolean;
  declare error?: Evaluation['error'];
  declare waived?: Level;
  declare sandbox_profile?: 'workspace-write';
  declare undo_snapshot?: readonly string[];
  declare sandbox_network?: 'registries';
  #args: unknown;

  constructor(
    public decision_id: string,
    public level: Level,
    public action: Evaluation['action'],
    public layer: Layer,
    public matched_rules: MatchedRule[],
    public reasons: string[],
    args: unknown,
  ) {
    this.#args = args;
  }

  get args(): unknown {
    return this.#args;
  }

  set args(v: unknown) {
    this.#args = v;
  }
}

/**
 * A plain AUTO allow served from the verdict cache to a caller that asked for a lean answer (the
 * interceptor when no event and no audit entry is written for it): nothing is built until it is
 * read. `decision_id` is made on first read (a ULID, unique like any other); `matched_rules` and
 * `reasons` are copied from the cached permission verdict on first read. `toJSON()` gives the
 * same JSON as an {@link EngineEvaluation} with the same content; `args` are the call's own
 * arguments (nothing was stripped, or the verdict would not have been cached).
 */
export class AutoEvaluation implements Evaluation {
  readonly #perm: PermissionVerdict;
  readonly #args: unknown;
  #id: string | undefined;
  #matched: MatchedRule[] | undefined;
  #reasons: string[] | undefined;

  constructor(perm: PermissionVerdict, args: unknown) {
    this.#perm = perm;
    this.#args = args;
  }

  get decision_id(): string {
    return (this.#id ??= ulid());
  }

  get level(): Level {
    return 'AUTO';
  }

  get action(): VerdictAction {
    return 'allow';
  }

  get layer(): Layer {
    return this.#perm.layer;
  }

  get matched_rules(): MatchedRule[] {
    return (this.#matched ??= [...this.#perm.matched_rules]);
  }

  get reasons(): string[] {
    return (this.#reasons ??= [...this.#perm.reasons]);
  }

  get human_only(): true | undefined {
    return this.#perm.human_only ? true : undefined;
  }

  get args(): unknown {
    return this.#args;
  }

  get waived(): undefined {
    return undefined;
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      decision_id: this.decision_id,
      level: this.level,
      action: this.action,
      layer: this.layer,
      matched_rules: this.matched_rules,
      reasons: this.reasons,
    };
    if (this.#perm.human_only) out.human_only = true;
    return out;
  }
}

/**
 * What {@link FirewallEngine.evaluateCached} answers for a plain AUTO allow from the verdict
 * cache: the call runs with its own arguments, and nothing about the verdict is kept.
 */
export const CACHED_ALLOW: unique symbol = Symbol('finger.firewall.cached-allow');
export type CachedAllow = typeof CACHED_ALLOW;

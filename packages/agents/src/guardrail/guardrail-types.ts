/**
 * Contracts of the JSON guardrail (§3.6 of the design): what the router's model must answer, what
 * the guardrail needs to know about the registry, and what it returns. The guardrail itself
 * (json-guardrail.ts) is pure: text in, outcome out, no I/O.
 */

/** The five router decisions. */
export type RouterDecisionKind = 'direct_reply' | 'dispatch_agent' | 'dispatch_module' | 'ask_human' | 'reject';

/** A validated router decision: exactly the six whitelisted keys. */
export interface RouterDecision {
  decision: RouterDecisionKind;
  /** Registered id (canonical casing) for dispatches; null otherwise. */
  target: string | null;
  confidence: number;
  reason: string;
  payload: Record<string, unknown>;
  requires_human: boolean;
}

/** What the guardrail knows of the registry. Ids are compared case-insensitively, no Unicode folding. */
export interface GuardrailRegistry {
  agents: readonly string[];
  /** Module ids and tool ids (`<module>.<tool>`) the requesting principal may reach. */
  modules: readonly string[];
  /** Targets whose tools are high risk: a dispatch to one always has `requires_human: true`. */
  high_risk: readonly string[];
}

/** One repair the guardrail made, for JSON_REPAIRED events and the audit log. */
export interface GuardrailRepair {
  /**
   * Stable name: `bom`, `think_block`, `fence`, `xml_tag`, `syntax` (`detail` names what it did beyond
   * quoting and punctuation), `nested_json_string`, `escaped_json`, `unwrap_array`,
   * `unwrap_key`, `template_echo`, `truncation`, `mask`, `coerce_decision`, `coerce_confidence`,
   * `coerce_requires_human`, `default_requires_human`, `default_reason`, `default_payload`, `target_case`,
   * `policy_target_null`, `policy_requires_human`; executor decisions also `wrap_array`, `rename_key`,
   * `coerce_human_required`, `coerce_done` (docs/contracts.md §14).
   */
  kind: string;
  detail?: string;
  before?: string;
  after?: string;
}

/** Stable reason codes of non-ok outcomes. */
export type GuardrailReasonCode =
  | 'no_json'
  | 'unparseable'
  | 'no_decision'
  | 'ambiguous_candidates'
  | 'duplicate_keys'
  | 'truncated'
  | 'invalid_schema'
  | 'unknown_target'
  | 'kind_mismatch'
  | 'low_confidence'
  | 'model_asked_human'
  | 'model_rejected'
  /** The answer is longer than the guardrail reads (`max_chars`, default 256 KiB). */
  | 'too_large'
  /** Set by the RouterEngine, not the guardrail: the model refused to answer (its stop reason or refusal message). */
  | 'model_refused'
  /** Set by the RouterEngine, not the guardrail: the provider's content filter withheld the answer. */
  | 'content_filtered';

/** The result of running the guardrail over one model answer. */
export type GuardrailOutcome =
  | { outcome: 'ok'; decision: RouterDecision; repairs: GuardrailRepair[] }
  | {
      outcome: 'ask_human' | 'reject';
      /** The decision as far as it could be recovered (always `requires_human: true` for ask_human). */
      decision?: RouterDecision;
      reason_code: GuardrailReasonCode;
      /** True when re-asking the model with `errors` may help (schema errors, unknown target). */
      retryable: boolean;
      /** Human-readable validation errors, fed back to the model on a re-ask. */
      errors: string[];
      repairs: GuardrailRepair[];
    };

/** One tool call of an executor decision (§3.7). */
export interface LlmToolCall {
  /** Tool id (`<module>.<tool>`), as the model wrote it (trimmed); the hub resolves it. */
  tool: string;
  args: Record<string, unknown>;
  intent: string;
}

/** The executor's per-step decision (§3.7), after the guardrail: exactly these six keys. */
export interface LlmDecision {
  thought: string;
  tool_calls: LlmToolCall[];
  confidence: number;
  human_required: boolean;
  done: boolean;
  summary: string;
}

/**
 * The result of parsing one executor answer. A failure always carries a safe decision: no tool
 * calls, `human_required: true`, `done: false`.
 */
export type LlmDecisionOutcome =
  | { outcome: 'ok'; decision: LlmDecision; repairs: GuardrailRepair[] }
  | {
      outcome: 'ask_human';
      decision: LlmDecision;
      reason_code: GuardrailReasonCode;
      retryable: boolean;
      errors: string[];
      repairs: GuardrailRepair[];
    };

// Adaptation (§3.8): pure functions from PerceptionBus counts to suggested UserPolicy changes.
// They decide nothing on their own: the daemon applies the actions to the UserPolicy (one-way
// tightening, every change audited) and feeds the hints to the agent's context.

import type { Level } from '../engine/evaluation.js';
import type { PerceptionCounts } from './perception-bus.js';

/** Thresholds of {@link adapt}. */
export interface AdaptationConfig {
  /** Consecutive human rejections of a tool that escalate it. Default 3. */
  rejections: number;
  /** Consecutive human approvals of an escalated tool that revert it. Default 5. */
  approvals_to_revert: number;
  /** An approval slower than this (ms) is a hesitation. Default 20 s. */
  hesitation_ms: number;
}

/** The defaults of §3.8. */
export const DEFAULT_ADAPTATION: AdaptationConfig = { rejections: 3, approvals_to_revert: 5, hesitation_ms: 20_000 };

/** Per-call inputs of {@link adapt}: what the UserPolicy already did and what was already seen. */
export interface AdaptationInput extends Partial<AdaptationConfig> {
  /** Keys (tools, or shape classes `<tool>@<hash>`) the adaptation escalated and has not reverted (from the UserPolicy). */
  escalated?: Iterable<string>;
  /** Approvals with `seq` ≤ this were looked at already (no second hesitation for them). */
  after_seq?: number;
}

/**
 * A suggested change. `tighten`: make the tool APPROVE in the UserPolicy and give agents the
 * hint; `revert`: remove that escalation; `hesitation`: tell the agent of `session_id` to
 * explain its intent before using the tool again.
 */
export type AdaptationAction =
  | {
      kind: 'tighten';
      /** The escalation key: a tool id, or a shape class `<tool>@<hash>` (the rule id is `adaptation:<key>`). */
      tool: string;
      level: Extract<Level, 'APPROVE'>;
      rejections: number;
      hint: string;
      /** A shape class: the tool it belongs to, what a person reads and the rule's `match`. */
      shape?: { tool: string; label: string; match?: Record<string, string | string[]> };
    }
  | { kind: 'revert'; tool: string; approvals: number }
  | { kind: 'hesitation'; tool: string; session_id: string; latency_ms: number; seq: number; hint: string };

/** The avoidance hint for an agent after `n` rejections of `tool`. */
export function avoidanceHint(tool: string, n: number): string {
  return (
    `avoid ${tool}: the user rejected it ${n} times in a row. Choose another way to reach the goal, ` +
    'or ask the user before trying it again.'
  );
}

/** The hint after a hesitant approval of `tool`. */
export function explainHint(tool: string, latency_ms: number): string {
  return (
    `explain your intent before calling ${tool} again: the user took ${Math.round(latency_ms / 1000)} s to ` +
    'approve it last time. Say what the call does and why it is needed.'
  );
}

/** The config with defaults filled in. */
export function adaptationConfig(input: Partial<AdaptationConfig> = {}): AdaptationConfig {
  return {
    rejections: input.rejections ?? DEFAULT_ADAPTATION.rejections,
    approvals_to_revert: input.approvals_to_revert ?? DEFAULT_ADAPTATION.approvals_to_revert,
    hesitation_ms: input.hesitation_ms ?? DEFAULT_ADAPTATION.hesitation_ms,
  };
}

/**
 * The actions the counts call for (pure, deterministic: tools in id order, then shape classes in
 * key order, then hesitations in seq order). A key already `escalated` is not tightened again;
 * only an escalated key is reverted. Only human answers count (PerceptionBus keeps streaks of
 * those only). A rejected call with a shape counts for its shape classes — `git push`, one
 * directory, one host — never for every call of its tool.
 */
export function adapt(counts: PerceptionCounts, input: AdaptationInput = {}): AdaptationAction[] {
  const cfg = adaptationConfig(input);
  const escalated = new Set(input.escalated ?? []);
  const after = input.after_seq ?? 0;
  const out: AdaptationAction[] = [];
  for (const tool of Object.keys(counts.tools).sort()) {
    const t = counts.tools[tool]!;
    if (!escalated.has(tool) && t.consecutive_rejections >= cfg.rejections) {
      out.push({
        kind: 'tighten',
        tool,
        level: 'APPROVE',
        rejections: t.consecutive_rejections,
        hint: avoidanceHint(tool, t.consecutive_rejections),
      });
    } else if (escalated.has(tool) && t.consecutive_approvals >= cfg.approvals_to_revert) {
      out.push({ kind: 'revert', tool, approvals: t.consecutive_approvals });
    }
  }
  for (const key of Object.keys(counts.classes ?? {}).sort()) {
    const c = counts.classes[key]!;
    if (out.some((a) => a.tool === key)) continue;
    if (!escalated.has(key) && c.consecutive_rejections >= cfg.rejections) {
      out.push({
        kind: 'tighten',
        tool: key,
        level: 'APPROVE',
        rejections: c.consecutive_rejections,
        hint: avoidanceHint(c.label, c.consecutive_rejections),
        shape: { tool: c.tool, label: c.label, ...(c.match !== undefined ? { match: structuredClone(c.match) } : {}) },
      });
    } else if (escalated.has(key) && c.consecutive_approvals >= cfg.approvals_to_revert) {
      out.push({ kind: 'revert', tool: key, approvals: c.consecutive_approvals });
    }
  }
  for (const a of counts.recent_approvals) {
    if (a.seq <= after || a.source !== 'human' || a.latency_ms <= cfg.hesitation_ms) continue;
    out.push({
      kind: 'hesitation',
      tool: a.tool_id,
      session_id: a.session_id,
      latency_ms: a.latency_ms,
      seq: a.seq,
      hint: explainHint(a.tool_id, a.latency_ms),
    });
  }
  return out;
}

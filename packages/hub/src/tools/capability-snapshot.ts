import type { ToolInfo } from './tool-info.js';

/** A tool as an agent first sees it: short enough that dozens fit a small token budget. */
export interface ToolSummary {
  id: string;
  /** First sentence of the description, at most 160 characters. */
  purpose: string;
  /** e.g. `requires path, content`, `L1 writes files`, `side effects`, `idempotent`. */
  constraints: string[];
  risk: ToolInfo['risk_level'];
  /** Estimated tokens of this summary: the tool's declared context_cost, else ceil(JSON length / 4). */
  context_cost: number;
}

/** What to put in a snapshot. */
export interface SnapshotParams {
  /** Tools to summarise (ids, or short names resolved like `get`). */
  tool_ids: readonly string[];
  /** Token budget for all summaries together. */
  budget_tokens: number;
  /**
   * Higher keeps a tool longer when over budget. Ties (and the default) follow the default
   * order: lower risk first, then lower capability level (L0 before L2), then id.
   */
  priority?: (id: string) => number;
}

/** A capability snapshot: the summaries that fit, and every tool left out, by name. */
export interface CapabilitySnapshot {
  tools: ToolSummary[];
  /** Tools dropped to stay within the budget, lowest priority last. */
  dropped: string[];
  /** Requested ids that name no registered tool. */
  unknown: string[];
  used_tokens: number;
  budget_tokens: number;
}

/** One tool going into a snapshot: its info and whether its manifest declared context_cost. */
export interface SnapshotEntry {
  info: ToolInfo;
  cost_declared: boolean;
}

const PURPOSE_MAX = 160;
const RISK_RANK = { low: 0, medium: 1, high: 2, critical: 3 } as const;
const CAPABILITY_RANK = { L0: 0, L1: 1, L2: 2 } as const;
const CAPABILITY_TEXT = { L0: 'L0 read-only', L1: 'L1 writes files', L2: 'L2 exec/network' } as const;

/**
 * The first sentence of `text`, whitespace collapsed, at most 160 characters (cut with `…`).
 * A sentence ends at `.`, `!` or `?` followed by a space and an upper-case letter, or at the end,
 * so `e.g. {"a":1}` does not end one.
 */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^(.*?[.!?])(?= [A-Z]|$)/.exec(flat);
  const s = m?.[1] ?? flat;
  return s.length <= PURPOSE_MAX ? s : `${s.slice(0, PURPOSE_MAX - 1).trimEnd()}…`;
}

/** Names of the required top-level arguments of an input schema. */
function requiredArgs(schema: Record<string, unknown> | undefined): string[] {
  const req = schema?.required;
  return Array.isArray(req) ? req.filter((r): r is string => typeof r === 'string') : [];
}

/** Summarises one tool for a snapshot. */
export function summarizeTool(entry: SnapshotEntry): ToolSummary {
  const t = entry.info;
  const constraints: string[] = [];
  const req = requiredArgs(t.input_schema);
  if (req.length > 0) constraints.push(`requires ${req.join(', ')}`);
  constraints.push(CAPABILITY_TEXT[t.capability_level]);
  constraints.push(t.side_effects ? 'side effects' : 'no side effects');
  if (t.idempotent) constraints.push('idempotent');
  if (t.quarantined) constraints.push(`quarantined: ${t.quarantined.reason}`);
  const summary: ToolSummary = {
    id: t.id,
    purpose: firstSentence(t.description),
    constraints,
    risk: t.risk_level,
    context_cost: 0,
  };
  // the estimate is of the summary without its own context_cost field
  const { context_cost: _cost, ...body } = summary;
  summary.context_cost = entry.cost_declared ? t.context_cost : Math.ceil(JSON.stringify(body).length / 4);
  return summary;
}

/** Default order of importance: lower risk first, then lower capability level, then id. */
export function compareToolsByDefaultPriority(a: ToolInfo, b: ToolInfo): number {
  return (
    RISK_RANK[a.risk_level] - RISK_RANK[b.risk_level] ||
    CAPABILITY_RANK[a.capability_level] - CAPABILITY_RANK[b.capability_level] ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Builds a snapshot (pure). Tools are ordered by priority (highest first; ties and the default:
 * {@link compareToolsByDefaultPriority}); when the total is over budget, tools are dropped from
 * the lowest priority up until the rest fits — so what is kept is always the longest
 * highest-priority run that fits, and every dropped tool is named.
 */
export function buildSnapshot(
  entries: readonly SnapshotEntry[],
  budget_tokens: number,
  priority?: (id: string) => number,
  unknown: string[] = [],
): CapabilitySnapshot {
  const rank = (id: string): number => {
    const p = priority ? priority(id) : 0;
    return Number.isFinite(p) ? p : 0;
  };
  const scored = entries.map((e) => ({ e, p: rank(e.info.id), s: summarizeTool(e) }));
  scored.sort((a, b) => b.p - a.p || compareToolsByDefaultPriority(a.e.info, b.e.info));
  const tools: ToolSummary[] = [];
  const dropped: string[] = [];
  let used = 0;
  for (const { s } of scored) {
    if (dropped.length === 0 && used + s.context_cost <= budget_tokens) {
      tools.push(s);
      used += s.context_cost;
    } else {
      dropped.push(s.id);
    }
  }
  return { tools, dropped, unknown, used_tokens: used, budget_tokens };
}

// The permission layer as a pure function (Codex execpolicy: the rule engine apart from the
// stateful manager): tool metadata, the RiskAssessor's level and the matching admin and user
// rules each contribute a level, and the strictest wins. Only an exact-shape command rule
// (AUTO/NOTIFY with `match.command`) may set aside the RiskAssessor's level; nothing sets aside
// an admin rule or a tool's own declared risk. A forbidden finding (finger's own home or API,
// shell-risk/src/knowledge/finger/forbidden.ts) of an AI-initiated call is DENY, a contribution nothing sets aside.

import path from 'node:path';

import type { CommandRiskLevel, RiskAssessment } from '@finger/shell-risk';
import { FORBIDDEN_REASON } from '@finger/shell-risk';

import type { Level, MatchedRule, ToolCallFacts } from '../engine/evaluation.js';
import { LEVEL_ORDER } from '../engine/evaluation.js';
import type { UrlFinding } from '../net/url-args.js';
import { commandCandidates, type CompiledPolicy, type ToolRules } from './compiled-policy.js';
import { expandHome } from './policy-globs.js';
import { type CompiledRule, type RuleInput, ruleMatches } from './rule-match.js';

/** Both layers; effective level = the stricter. */
export interface EffectivePolicy {
  readonly admin: CompiledPolicy;
  readonly user: CompiledPolicy;
}

/** What the permission layer judges. */
export interface PolicyFacts {
  tool_id: string;
  args: unknown;
  tool: ToolCallFacts['tool'];
  /** Resolved real paths per path argument (from the PathSandbox); lexical forms are used when absent. */
  paths?: ReadonlyMap<string, readonly string[]>;
  /** Directory relative path arguments are taken from (the first workspace root). */
  base?: string;
  /**
   * The caller is a person (principal kind `human`): forbidden findings keep the RiskAssessor's
   * level (`dangerous`) instead of DENY. Absent or false: an AI-initiated call.
   */
  human?: boolean;
  /** Forbidden findings of arguments that are no command (`web.fetch` of finger's own URL): DENY as the assessment's are. */
  forbidden?: readonly string[];
  /**
   * What the URL arguments reach (net/url-args.ts): APPROVE for a loopback, link-local, private,
   * unspecified or metadata address, CONFIRM for a host that did not resolve. Builtin contributions
   * like the tool's own risk: no rule sets them aside.
   */
  urls?: readonly UrlFinding[];
  /**
   * The workspace-write sandbox, for a `moderate` shell call where it can run (the engine decides,
   * FirewallEngine): `eligible` — the assessment contributes NOTIFY instead of CONFIRM and the
   * verdict names the profile; otherwise `holds` says why the call may not run there ("needs
   * network: npm install"), each a CONFIRM contribution.
   */
  workspace_sandbox?: WorkspaceSandboxFacts;
}

/** Whether a shell call may run in the workspace-write sandbox, and if not why (see {@link PolicyFacts}). */
export type WorkspaceSandboxFacts =
  | { eligible: true; undo_snapshot?: readonly string[]; network?: 'registries' }
  | { eligible: false; holds: readonly { id: string; reason: string }[] };

/** The sandbox profile a lowered shell call must run in (the shell module runs it; an agent cannot choose it). */
export type SandboxProfileName = 'workspace-write';

/** The permission layer's verdict. */
export interface PermissionVerdict {
  level: Level;
  /** `default` when the tool's own metadata decided, else `permission`. */
  layer: 'permission' | 'default';
  matched_rules: MatchedRule[];
  reasons: string[];
  /** A matched rule or a `human_only` glob says only a person may decide. */
  human_only: boolean;
  /** Set when the RiskAssessor's `moderate` was lowered to NOTIFY because the call runs in this profile. */
  sandbox_profile?: SandboxProfileName;
  /** With `sandbox_profile`: the paths to hard-link before the run, so its deletes are undoable. */
  undo_snapshot?: readonly string[];
  /** With `sandbox_profile`: the package registries are reachable there through the filtering proxy. */
  sandbox_network?: 'registries';
}

/** Tool default from a declared `risk_level` (no `permission` declared). */
export const RISK_LEVEL_DEFAULTS: Readonly<Record<ToolCallFacts['tool']['risk_level'], Level>> = Object.freeze({
  low: 'AUTO',
  medium: 'NOTIFY',
  high: 'CONFIRM',
  critical: 'APPROVE',
});

/** The default policy for shell commands: safe → AUTO, moderate → CONFIRM, dangerous → APPROVE. */
export const COMMAND_RISK_DEFAULTS: Readonly<Record<CommandRiskLevel, Level>> = Object.freeze({
  safe: 'AUTO',
  moderate: 'CONFIRM',
  dangerous: 'APPROVE',
});

const RANK: Readonly<Record<Level, number>> = Object.freeze(
  Object.fromEntries(LEVEL_ORDER.map((l, i) => [l, i])) as Record<Level, number>,
);

/** One contribution: its matched-rule entry and its reason line, built once and shared (frozen). */
interface Contribution {
  readonly entry: MatchedRule;
  readonly layer: 'permission' | 'default';
  readonly line: string;
}

function contribution(entry: MatchedRule, layer: 'permission' | 'default'): Contribution {
  const line =
    entry.source === 'builtin'
      ? `${entry.level}: ${entry.reason}`
      : `${entry.level}: ${entry.source} rule "${entry.id}": ${entry.reason}`;
  return Object.freeze({ entry: Object.freeze(entry), layer, line });
}

const byRule = new WeakMap<CompiledRule, Contribution>();
function ruleContribution(r: CompiledRule): Contribution {
  let c = byRule.get(r);
  if (c === undefined) {
    c = contribution(
      { source: r.layer, id: r.id, level: r.level, reason: r.reason ?? `${r.layer} policy ${r.origin} matched` },
      'permission',
    );
    byRule.set(r, c);
  }
  return c;
}

const byAssessment = new WeakMap<RiskAssessment, Contribution>();
function riskContribution(a: RiskAssessment): Contribution {
  let c = byAssessment.get(a);
  if (c === undefined) {
    let l = COMMAND_RISK_DEFAULTS[a.level];
    if (a.unparseable === true && RANK[l] < RANK.CONFIRM) l = 'CONFIRM';
    const why = a.reasons.length > 0 ? a.reasons.join('; ') : a.level;
    c = contribution(
      { source: 'builtin', id: 'risk', level: l, reason: `RiskAssessor: ${a.level}: ${why}` },
      'permission',
    );
    byAssessment.set(a, c);
  }
  return c;
}

const bySandboxed = new WeakMap<RiskAssessment, Contribution>();
/** A `moderate` assessment of a call that runs in the workspace-write sandbox: NOTIFY, saying so. */
function sandboxedRiskContribution(a: RiskAssessment): Contribution {
  let c = bySandboxed.get(a);
  if (c === undefined) {
    const why = a.reasons.length > 0 ? a.reasons.join('; ') : a.level;
    c = contribution(
      {
        source: 'builtin',
        id: 'risk',
        level: 'NOTIFY',
        reason: `RiskAssessor: ${a.level}: ${why}; runs in the workspace-write sandbox (writes only in the workspace, no network)`,
      },
      'permission',
    );
    bySandboxed.set(a, c);
  }
  return c;
}

/** A forbidden finding of an AI-initiated call: DENY, with the reason that names what it reaches. */
function forbiddenContribution(finding: string): Contribution {
  return contribution(
    { source: 'builtin', id: 'finger.self', level: 'DENY', reason: `${FORBIDDEN_REASON}: ${finding}` },
    'permission',
  );
}

const PERMISSION = new Map<Level, Contribution>(
  LEVEL_ORDER.map((l) => [
    l,
    contribution(
      { source: 'builtin', id: 'tool.permission', level: l, reason: `the tool declares permission ${l}` },
      'default',
    ),
  ]),
);
const RISK_LEVEL = new Map<string, Contribution>(
  Object.entries(RISK_LEVEL_DEFAULTS).map(([risk, l]) => [
    risk,
    contribution(
      { source: 'builtin', id: 'tool.risk_level', level: l, reason: `tool default for risk_level ${risk}` },
      'default',
    ),
  ]),
);

function collect(rules: ToolRules, input: RuleInput, out: CompiledRule[]): void {
  for (const r of rules.plain) if (ruleMatches(r, input)) out.push(r);
  const cmd = input.model !== undefined ? commandCandidates(rules, input.model) : rules.command;
  for (const r of cmd) if (ruleMatches(r, input)) out.push(r);
}

/**
 * Evaluates the permission layer for one call (pure; the command model comes in `assessment`).
 * Contributions: the tool's declared `permission`; its `risk_level` (low → AUTO, medium →
 * NOTIFY, high → CONFIRM, critical → APPROVE) unless it is a shell tool with a command, whose
 * default is then the RiskAssessor's; a quarantined tool → CONFIRM; the RiskAssessor's level
 * (safe → AUTO, moderate → CONFIRM, dangerous → APPROVE, unparseable → at least CONFIRM); a
 * shell tool's `env` argument → CONFIRM; every matching admin and user rule. The strictest wins.
 * A matching AUTO/NOTIFY command-pattern rule (an exact shape) sets the RiskAssessor's level
 * aside — a user one only when the admin policy allows it and the command is not `dangerous`.
 * Each forbidden finding of the assessment contributes DENY unless `facts.human` (it is no part
 * of the RiskAssessor's level, so no rule sets it aside).
 */
export function evaluatePolicy(
  policy: EffectivePolicy,
  facts: PolicyFacts,
  assessment?: RiskAssessment,
): PermissionVerdict {
  const { tool_id, tool } = facts;
  const homeDir = policy.admin.homeDir;
  const base = facts.base;
  // one lexical form per argument value per call (every path rule asks for it)
  let lastIn: string | undefined;
  let lastOut = '';
  const input: RuleInput = {
    tool_id,
    args: facts.args,
    schema: tool.input_schema,
    model: assessment?.model,
    paths: facts.paths,
    lexical: (p) => {
      if (p === lastIn) return lastOut;
      const e = expandHome(p, homeDir);
      lastIn = p;
      lastOut = path.posix.isAbsolute(e)
        ? path.posix.normalize(e)
        : base !== undefined
          ? path.posix.resolve(base, e)
          : path.posix.normalize(e);
      return lastOut;
    },
  };
  const matched: CompiledRule[] = [];
  collect(policy.admin.rulesFor(tool_id), input, matched);
  collect(policy.user.rulesFor(tool_id), input, matched);

  const contributions: Contribution[] = [];
  const shell = assessment !== undefined && policy.admin.shellTools(tool_id);
  if (tool.permission !== undefined) {
    const c = PERMISSION.get(tool.permission);
    if (c !== undefined) contributions.push(c);
  }
  if (!shell) {
    contributions.push(
      RISK_LEVEL.get(tool.risk_level) ??
        contribution(
          {
            source: 'builtin',
            id: 'tool.risk_level',
            level: 'CONFIRM',
            reason: `unknown risk_level ${String(tool.risk_level)}`,
          },
          'default',
        ),
    );
  }
  if (tool.quarantined !== undefined)
    contributions.push(
      contribution(
        {
          source: 'builtin',
          id: 'tool.quarantined',
          level: 'CONFIRM',
          reason: `the tool is quarantined: ${tool.quarantined.reason}`,
        },
        'permission',
      ),
    );
  if (shell) {
    // `env` of a shell tool changes what the command runs (PATH, LD_PRELOAD, BASH_ENV…) outside the command text
    const env = (facts.args as { env?: unknown } | null)?.env;
    if (typeof env === 'object' && env !== null && Object.keys(env).length > 0)
      contributions.push(
        contribution(
          {
            source: 'builtin',
            id: 'shell.env',
            level: 'CONFIRM',
            reason: `the command runs with environment variables set: ${Object.keys(env).sort().join(', ')}`,
          },
          'permission',
        ),
      );
  }
  let waivedBy: CompiledRule | undefined;
  let profile: SandboxProfileName | undefined;
  let snapshot: readonly string[] | undefined;
  let network: 'registries' | undefined;
  const ws = assessment?.level === 'moderate' ? facts.workspace_sandbox : undefined;
  if (ws !== undefined && !ws.eligible)
    for (const h of ws.holds)
      contributions.push(
        contribution({ source: 'builtin', id: h.id, level: 'CONFIRM', reason: h.reason }, 'permission'),
      );
  if (assessment !== undefined) {
    const lowered = ws?.eligible === true && assessment.unparseable !== true;
    const risk = lowered ? sandboxedRiskContribution(assessment) : riskContribution(assessment);
    const userMay = policy.admin.defaults.user_may_allow && assessment.level !== 'dangerous';
    for (const r of matched)
      if (r.loosening && r.command !== null && (r.layer === 'admin' || userMay)) {
        waivedBy = r;
        break;
      }
    if (waivedBy === undefined || RANK[risk.entry.level] <= RANK[waivedBy.level]) {
      waivedBy = undefined;
      contributions.push(risk);
      if (lowered) profile = 'workspace-write';
      if (lowered && ws?.eligible === true && ws.undo_snapshot !== undefined) snapshot = ws.undo_snapshot;
      if (lowered && ws?.eligible === true && ws.network !== undefined) network = ws.network;
    }
  }
  for (const r of matched) contributions.push(ruleContribution(r));
  for (const u of facts.urls ?? [])
    contributions.push(contribution({ source: 'builtin', id: u.id, level: u.level, reason: u.reason }, 'permission'));
  if (facts.human !== true) {
    for (const f of assessment?.forbidden ?? []) contributions.push(forbiddenContribution(f));
    for (const f of facts.forbidden ?? []) contributions.push(forbiddenContribution(f));
  }

  let level: Level = 'AUTO';
  let layer: 'permission' | 'default' = 'default';
  let best = -1;
  for (const c of contributions) {
    const rank = RANK[c.entry.level];
    if (rank > best || (rank === best && layer === 'default' && c.layer === 'permission')) {
      best = rank;
      level = c.entry.level;
      layer = c.layer;
    }
  }
  const reasons = contributions.map((c) => c.line);
  if (waivedBy !== undefined)
    reasons.push(
      `the RiskAssessor's ${assessment!.level} was set aside by the exact-shape ${waivedBy.layer} rule "${waivedBy.id}"`,
    );
  let human_only = policy.admin.isHumanOnly(tool_id) || policy.user.isHumanOnly(tool_id);
  for (const r of matched) if (r.human_only) human_only = true;
  const verdict: PermissionVerdict = {
    level,
    layer,
    matched_rules: contributions.map((c) => c.entry),
    reasons,
    human_only,
  };
  if (profile !== undefined) verdict.sandbox_profile = profile;
  if (profile !== undefined && snapshot !== undefined) verdict.undo_snapshot = snapshot;
  if (profile !== undefined && network !== undefined) verdict.sandbox_network = network;
  return verdict;
}

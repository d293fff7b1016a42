/**
 * The verdict vocabulary shared by every layer of the firewall (§3.8). An `Evaluation` is what
 * the FirewallEngine returns and what goes to the audit log as-is.
 */

import type { ResolvedHosts } from '../net/url-args.js';

/** Permission levels, loosest first. `DENY` is stricter than all of them. */
export type Level = 'AUTO' | 'NOTIFY' | 'CONFIRM' | 'APPROVE' | 'DENY';

export const LEVEL_ORDER: readonly Level[] = ['AUTO', 'NOTIFY', 'CONFIRM', 'APPROVE', 'DENY'];

/** The stricter of two levels. */
export function stricter(a: Level, b: Level): Level {
  return LEVEL_ORDER.indexOf(a) >= LEVEL_ORDER.indexOf(b) ? a : b;
}

/** What the hub does with the call. */
export type VerdictAction = 'allow' | 'notify' | 'hold' | 'deny';

/** The action a level implies. */
export function actionOf(level: Level): VerdictAction {
  switch (level) {
    case 'AUTO':
      return 'allow';
    case 'NOTIFY':
      return 'notify';
    case 'CONFIRM':
    case 'APPROVE':
      return 'hold';
    case 'DENY':
      return 'deny';
  }
}

/** The pipeline layer that decided (the strictest contribution). */
export type Layer = 'argument_filter' | 'behaviour' | 'permission' | 'path_sandbox' | 'metacognitive' | 'default';

/** A rule that matched, named so `policy check` can show it. */
export interface MatchedRule {
  /** `admin` or `user` policy, or `builtin` (defaults, RiskAssessor, tool metadata). */
  source: 'admin' | 'user' | 'builtin';
  /** Rule id (`admin#3` or the rule's own `id`). */
  id: string;
  level: Level;
  /** Human-readable: why it matched. */
  reason: string;
}

/** What a person sees before deciding (APPROVE shows all of it). */
export interface Preview {
  kind: 'diff' | 'command' | 'args';
  /** Unified diff for writes; the parsed command with cwd for exec; pretty args otherwise. */
  text: string;
  /** For writes: sha256 of the file content the diff was made against (approval binds to it). */
  file_sha256?: string | null;
  path?: string;
  cwd?: string;
}

/** The firewall's verdict on one tool call. */
export interface Evaluation {
  decision_id: string;
  level: Level;
  action: VerdictAction;
  layer: Layer;
  matched_rules: MatchedRule[];
  reasons: string[];
  preview?: Preview;
  /** Args after the argument filter (unknown keys stripped). */
  args?: unknown;
  /** Warnings that did not change the level (e.g. stripped args). */
  warnings?: string[];
  /** Only a person may decide this hold (a `human_only` rule or tool glob): no external reviewer. */
  human_only?: boolean;
  /** Set when the argument filter refused the call: the error the caller gets (E_INVALID_ARGS). */
  error?: { code: string; message: string; details?: unknown };
  /** A human's direct dispatch: the level the pipeline reached before CONFIRM/APPROVE was waived. */
  waived?: Level;
  /**
   * With `sandbox_profile`: the real paths a deleting command (rm -r, find -delete, git clean) may
   * remove, hard-linked into the undo store before it runs (@finger/workspace's link-snapshot.ts), so its deletes
   * are undoable. Handed to the module with the profile, out of band.
   */
  undo_snapshot?: readonly string[];
  /**
   * The sandbox profile the call must run in: `workspace-write` when the RiskAssessor's `moderate`
   * was lowered to NOTIFY because the command stays in the workspace and needs no network. The
   * interceptor hands it to the module out of band (never through the payload).
   */
  sandbox_profile?: 'workspace-write';
  /**
   * With `sandbox_profile`: the package registries are reachable in the profile through the
   * daemon's filtering proxy (config `sandbox.network.allow`) — a `npm ci`, `pip install -r …` or
   * `cargo build` that fetches what the project's lock file or manifest names. Handed to the
   * module with the profile; absent, the profile has no network.
   */
  sandbox_network?: 'registries';
}

/** The facts the firewall judges: one AI-initiated (or human direct) tool call. */
export interface ToolCallFacts {
  tool_id: string;
  args: unknown;
  principal: { kind: 'human' | 'agent' | 'module' | 'system'; id: string; roles: string[] };
  session_id: string;
  request_id: string;
  correlation_id: string;
  /** A human's explicit `/hub` dispatch: skips CONFIRM/APPROVE, never DENY, grants or audit. */
  direct: boolean;
  /** Model self-report, only ever raises the level. */
  confidence?: number;
  /**
   * What the host names of the call's URL arguments resolved to, looked up before the engine runs
   * (the interceptor, `POST /v1/policy/check`: {@link FirewallEngine.withResolvedHosts}). A host
   * name missing here is judged unresolved (CONFIRM); IP literals need no entry.
   */
  hosts?: ResolvedHosts;
  /** Tool metadata from the ToolRegistry. */
  tool: {
    risk_level: 'low' | 'medium' | 'high' | 'critical';
    capability_level: 'L0' | 'L1' | 'L2';
    permission?: 'AUTO' | 'NOTIFY' | 'CONFIRM' | 'APPROVE';
    side_effects: boolean;
    input_schema?: Record<string, unknown>;
    /** Set while the tool is quarantined (a changed MCP definition): at least CONFIRM. */
    quarantined?: { reason: string };
  };
}

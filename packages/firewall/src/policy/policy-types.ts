// The policy file format (§3.8, docs/policy.md): what an admin writes in
// `FINGER_HOME/config/admin-policy.json` and what `myfinger policy set` stores in
// `FINGER_HOME/state/user-policy.json`. Both layers share this shape; a few keys are admin-only.

import type { Level } from '../engine/evaluation.js';

/** A tool call used as a rule's self-test (`examples.match` / `examples.not_match`). */
export interface ExampleCall {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * One rule. `tool` is a glob over tool ids (dots separate segments: `fs.*`, `mcp.**`; `*` or
 * `**` alone is every tool). Every key of `match` must match the call's argument of that name:
 * `command`/`argv` of a shell tool take a command pattern (`rm -rf *`), path arguments a glob on
 * the resolved path (`/etc/**`, `~/.ssh/**`, `**\/.env`), anything else a glob on the value. A
 * value may list alternatives (any one matching is enough).
 */
export interface PolicyRule {
  id?: string;
  tool: string;
  match?: Record<string, string | string[]>;
  level: Level;
  /** Decisions on calls this rule matches are for a person only (no external reviewer). */
  human_only?: boolean;
  /** Shown to the person and in `policy check`. */
  reason?: string;
  examples?: { match?: ExampleCall[]; not_match?: ExampleCall[] };
}

/** Layer-wide settings. `user_may_allow` is admin-only; a user layer may only make the others stricter. */
export interface PolicyDefaults {
  /** A read outside `readable_paths` (default CONFIRM). */
  outside_read?: 'CONFIRM' | 'APPROVE' | 'DENY';
  /** A write outside `writable_paths` (default APPROVE). */
  outside_write?: 'APPROVE' | 'DENY';
  /** A write to a file with more than one hard link (default CONFIRM). */
  hard_link_write?: 'CONFIRM' | 'APPROVE' | 'DENY';
  /** Admin only: may user AUTO/NOTIFY command rules lower the RiskAssessor's level (default true). */
  user_may_allow?: boolean;
}

/** The whole policy document of one layer. */
export interface PolicyDocument {
  $schema?: string;
  version: 1;
  description?: string;
  rules: PolicyRule[];
  /** Roots reads may touch (absolute or `~/…`); default: the workspace roots. */
  readable_paths?: string[];
  /** Roots writes may touch; default as `readable_paths`. Writable roots are readable too. */
  writable_paths?: string[];
  shell?: {
    /** Sugar for AUTO rules on the shell tools: exact command shapes that need no person. */
    allowed_patterns?: string[];
    /** Sugar for DENY rules on the shell tools: matches every spelling. */
    blocked_patterns?: string[];
    /** Admin only: the tools whose `command`/`argv` is a shell command (default `["shell.exec"]`). */
    tools?: string[];
  };
  /** Tool globs whose held calls only a person may decide (never an external reviewer). */
  human_only?: string[];
  defaults?: PolicyDefaults;
}

/** Which layer a policy belongs to. */
export type PolicyLayer = 'admin' | 'user';

/** A loader warning: the policy loads, but part of it can never have an effect. */
export interface PolicyWarning {
  layer: PolicyLayer;
  /** Rule id, or the key (`shell.allowed_patterns[2]`) the warning is about. */
  rule: string;
  message: string;
}

/** What the loader may know about the tools (from the ToolRegistry) to warn about dead rules. */
export interface KnownTool {
  id: string;
  input_schema?: Record<string, unknown>;
}

/** An empty policy: no rules, every default. */
export function emptyPolicyDocument(): PolicyDocument {
  return { version: 1, rules: [] };
}

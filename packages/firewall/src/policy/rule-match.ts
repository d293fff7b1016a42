// Does one compiled rule match one call? Pure: the command model and the resolved paths come in
// with the input. Tightening rules (CONFIRM, APPROVE, DENY) match when ANY value or path matches
// and treat what they cannot see (no command model) as a match; loosening rules (AUTO, NOTIFY)
// need EVERY value to match and never match what they cannot see.

import { canonicalJson } from '@finger/protocol';
import type { CommandModel } from '@finger/shell-risk';

import type { Level } from '../engine/evaluation.js';
import { isPathArg } from '../sandbox/path-args.js';
import type { CommandPattern } from './command-pattern.js';
import type { Matcher } from './policy-globs.js';
import type { PolicyLayer } from './policy-types.js';

/** One `match` key other than the command: value globs and, for path arguments, path globs. */
export interface ArgMatch {
  readonly key: string;
  readonly values: readonly Matcher[];
  readonly paths: readonly Matcher[];
}

/** The command part of a rule: `match.command` (or `match.argv`) as command patterns. */
export interface CommandMatch {
  readonly key: 'command' | 'argv';
  readonly patterns: readonly CommandPattern[];
  /** Program basenames the patterns name, or null when one of them is a glob (`*`, `py*`). */
  readonly programs: readonly string[] | null;
}

/** A rule compiled once at load. */
export interface CompiledRule {
  readonly id: string;
  readonly layer: PolicyLayer;
  /** Position among the layer's compiled rules (rules first, then shell patterns). */
  readonly index: number;
  /** Where it comes from in the file: `rules[3]`, `shell.blocked_patterns[0]`. */
  readonly origin: string;
  readonly tool: string;
  readonly level: Level;
  /** AUTO or NOTIFY: compiled with allow-mode command patterns, never matches what it cannot see. */
  readonly loosening: boolean;
  readonly human_only: boolean;
  readonly reason: string | undefined;
  readonly matchesTool: Matcher;
  /** The rule's `match` as written. */
  readonly match: Readonly<Record<string, string | readonly string[]>>;
  readonly command: CommandMatch | null;
  readonly args: readonly ArgMatch[];
}

/** What a rule is matched against. */
export interface RuleInput {
  readonly tool_id: string;
  readonly args: unknown;
  /** The tool's input schema (for `format: "path"` arguments). */
  readonly schema: Record<string, unknown> | undefined;
  /** The canonical model of the call's `command`/`argv`, when it has one. */
  readonly model: CommandModel | undefined;
  /** Resolved absolute paths per path argument; when absent the lexical form is used. */
  readonly paths: ReadonlyMap<string, readonly string[]> | undefined;
  /** Lexical fallback for a path argument without resolved paths. */
  readonly lexical: (p: string) => string;
}

function scalarText(v: unknown): string | null {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'boolean':
      return String(v);
    case 'object':
      return v === null ? 'null' : canonicalJson(v);
    default:
      return null;
  }
}

function anyMatch(ms: readonly Matcher[], s: string): boolean {
  for (const m of ms) if (m(s)) return true;
  return false;
}

function valueMatches(m: ArgMatch, value: unknown, loosening: boolean): boolean {
  if (Array.isArray(value)) {
    if (value.length === 0) return false;
    return loosening
      ? value.every((v) => {
          const t = scalarText(v);
          return t !== null && anyMatch(m.values, t);
        })
      : value.some((v) => {
          const t = scalarText(v);
          return t !== null && anyMatch(m.values, t);
        });
  }
  const t = scalarText(value);
  return t !== null && anyMatch(m.values, t);
}

function onePathMatches(
  m: ArgMatch,
  input: RuleInput,
  p: string,
  real: string | undefined,
  loosening: boolean,
): boolean {
  const lex = input.lexical(p);
  if (loosening)
    return anyMatch(m.paths, real ?? lex) && (real === undefined || real === lex || anyMatch(m.paths, lex));
  return anyMatch(m.paths, lex) || (real !== undefined && real !== lex && anyMatch(m.paths, real));
}

/** Path arguments match on their lexical absolute form or their real path (a symlink cannot hide a path from a deny rule). */
function pathMatches(m: ArgMatch, input: RuleInput, value: unknown, loosening: boolean): boolean {
  const resolved = input.paths?.get(m.key);
  if (typeof value === 'string') return onePathMatches(m, input, value, resolved?.[0], loosening);
  if (!Array.isArray(value)) return valueMatches(m, value, loosening);
  let seen = 0;
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    if (typeof v !== 'string') continue;
    const ok = onePathMatches(m, input, v, resolved?.[seen], loosening);
    seen++;
    if (ok && !loosening) return true;
    if (!ok && loosening) return false;
  }
  return loosening && seen > 0;
}

function commandMatches(c: CommandMatch, input: RuleInput, loosening: boolean): boolean {
  const model = input.model;
  if (model === undefined) {
    const a = input.args as Record<string, unknown> | undefined;
    const present = a !== undefined && (a.command !== undefined || a.argv !== undefined);
    return present && !loosening;
  }
  for (const p of c.patterns) if (p.test(model)) return true;
  return false;
}

/** True when `rule` matches the call (the tool glob is checked by the caller). */
export function ruleMatches(rule: CompiledRule, input: RuleInput): boolean {
  if (rule.command !== null && !commandMatches(rule.command, input, rule.loosening)) return false;
  if (rule.args.length === 0) return true;
  const args = input.args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return false;
  const record = args as Record<string, unknown>;
  for (const m of rule.args) {
    const v = record[m.key];
    if (v === undefined) return false;
    const ok = isPathArg(m.key, input.schema)
      ? pathMatches(m, input, v, rule.loosening)
      : valueMatches(m, v, rule.loosening);
    if (!ok) return false;
  }
  return true;
}

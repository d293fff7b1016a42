// Loader warnings: parts of a valid policy that can never have an effect. They do not refuse the
// policy (a tool may simply not be installed yet), but `policy show` and the daemon log print them.

import { canonicalJson } from '@finger/protocol';

import type { CompileContext } from './compile-policy.js';
import type { CompiledPolicy } from './compiled-policy.js';
import type { KnownTool, PolicyWarning } from './policy-types.js';
import type { CompiledRule } from './rule-match.js';

function schemaProps(tool: KnownTool): Set<string> | null {
  const props = tool.input_schema?.properties;
  if (typeof props !== 'object' || props === null) return null;
  return new Set(Object.keys(props));
}

/** Every warning of a compiled layer (see docs/policy.md, "Loader warnings"). */
export function policyWarnings(policy: CompiledPolicy, ctx: CompileContext): PolicyWarning[] {
  const out: PolicyWarning[] = [];
  const warn = (rule: CompiledRule, message: string): void => {
    out.push({ layer: policy.layer, rule: rule.id, message });
  };
  const tools = ctx.tools;
  const denies: CompiledRule[] = [];
  for (const rule of policy.rules) {
    if (rule.level === 'AUTO' && rule.command === null)
      warn(
        rule,
        "an AUTO rule without a command pattern never changes a verdict: rules only raise the level, and only a command-pattern rule can lower the RiskAssessor's",
      );
    if (
      policy.layer === 'user' &&
      rule.loosening &&
      rule.command !== null &&
      ctx.admin?.defaults.user_may_allow === false
    )
      warn(rule, 'the admin policy sets defaults.user_may_allow to false: this user allow rule cannot lower any level');
    for (const earlier of denies) {
      const sameTool = earlier.tool === rule.tool || earlier.tool === '*' || earlier.tool === '**';
      const covers =
        Object.keys(earlier.match).length === 0 || canonicalJson(earlier.match) === canonicalJson(rule.match);
      if (sameTool && covers) {
        warn(
          rule,
          `shadowed by the earlier DENY rule "${earlier.id}" of the same scope: it can never change a verdict`,
        );
        break;
      }
    }
    if (rule.level === 'DENY') denies.push(rule);
    if (tools === undefined) continue;
    const matched = tools.filter((t) => rule.matchesTool(t.id));
    if (matched.length === 0) {
      warn(rule, `tool glob "${rule.tool}" matches no known tool`);
      continue;
    }
    if (rule.command !== null) {
      const canRun = matched.some((t) => {
        if (policy.shellTools(t.id)) return true;
        const p = schemaProps(t);
        return p === null || p.has('command') || p.has('argv');
      });
      if (!canRun)
        warn(rule, `match.${rule.command.key}: none of the tools "${rule.tool}" matches takes a shell command`);
    }
    for (const a of rule.args) {
      const has = matched.some((t) => {
        const p = schemaProps(t);
        return p === null || p.has(a.key);
      });
      if (!has)
        warn(rule, `match.${a.key}: no tool "${rule.tool}" matches has an argument "${a.key}" in its input_schema`);
    }
  }
  return out;
}

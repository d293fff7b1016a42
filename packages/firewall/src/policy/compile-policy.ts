// Compiles a policy document once: schema check (every error listed), every glob and command
// pattern compiled, every rule's examples run, and warnings for parts that can never have an
// effect. A policy with any error is refused as a whole (E_INVALID_ARGS listing each problem).

import path from 'node:path';

import { FingerError, type ValidationIssue } from '@finger/protocol';
import type { RiskAssessment } from '@finger/shell-risk';
import { splitPatternWords } from '@finger/shell-risk';

import { digestOf } from '../audit/canonical-json.js';
import { compileCommandPattern } from './command-pattern.js';
import { CompiledPolicy } from './compiled-policy.js';
import {
  compilePathGlob,
  compileToolGlob,
  compileValueGlob,
  expandHome,
  type Matcher,
  policyRoot,
} from './policy-globs.js';
import { policySchemaIssues } from './policy-schema.js';
import type { ExampleCall, KnownTool, PolicyDocument, PolicyLayer, PolicyRule, PolicyWarning } from './policy-types.js';
import { policyWarnings } from './policy-warnings.js';
import { type ArgMatch, type CommandMatch, type CompiledRule, ruleMatches } from './rule-match.js';

/** The default shell tools: their `command`/`argv` is assessed and matched as a shell command. */
export const DEFAULT_SHELL_TOOLS: readonly string[] = Object.freeze(['shell.exec']);

/** What compiling needs besides the document. */
export interface CompileContext {
  layer: PolicyLayer;
  /** The user's home directory, for `~` in paths. */
  homeDir: string;
  /** Parses example commands (a RiskAssessor). */
  assessor: { assess(command: string | readonly string[]): RiskAssessment };
  /** Known tools, for warnings about rules that can never match. */
  tools?: readonly KnownTool[];
  /** The admin layer, when compiling the user layer (shell tools, `user_may_allow`). */
  admin?: CompiledPolicy;
  /** The file it was read from (named in errors). */
  source?: string;
}

const GLOB_WORD = /[*?[]/;

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

function list(v: string | string[]): string[] {
  return Array.isArray(v) ? v : [v];
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class RuleCompiler {
  readonly issues: ValidationIssue[] = [];
  readonly rules: CompiledRule[] = [];
  readonly #ids = new Set<string>();

  constructor(
    private readonly ctx: CompileContext,
    private readonly shellTools: Matcher,
  ) {}

  add(rule: PolicyRule, origin: string, where: string, defaultId: string, toolMatcher?: Matcher): CompiledRule | null {
    const before = this.issues.length;
    const id = rule.id ?? defaultId;
    if (this.#ids.has(id)) this.issues.push({ path: `${where}.id`, message: `duplicate rule id "${id}"` });
    this.#ids.add(id);
    let matchesTool: Matcher = () => false;
    if (toolMatcher !== undefined) matchesTool = toolMatcher;
    else {
      try {
        matchesTool = compileToolGlob(rule.tool);
      } catch (e) {
        this.issues.push({ path: `${where}.tool`, message: errorText(e) });
      }
    }
    const loosening = rule.level === 'AUTO' || rule.level === 'NOTIFY';
    let command: CommandMatch | null = null;
    const args: ArgMatch[] = [];
    const match = rule.match ?? {};
    if (match.command !== undefined && match.argv !== undefined)
      this.issues.push({ path: `${where}.match`, message: 'use either "command" or "argv", not both' });
    for (const [key, raw] of Object.entries(match)) {
      const values = list(raw);
      if (key === 'command' || key === 'argv') {
        // shell.*_patterns sugar (toolMatcher given) names the pattern itself
        const at = (i: number): string => (toolMatcher !== undefined ? where : `${where}.match.${key}[${i}]`);
        command = this.#command(key, values, loosening, at);
        continue;
      }
      const valueMatchers: Matcher[] = [];
      const pathMatchers: Matcher[] = [];
      values.forEach((v, i) => {
        try {
          valueMatchers.push(compileValueGlob(v));
          pathMatchers.push(compilePathGlob(v, this.ctx.homeDir));
        } catch (e) {
          this.issues.push({ path: `${where}.match.${key}[${i}]`, message: errorText(e) });
        }
      });
      args.push({ key, values: valueMatchers, paths: pathMatchers });
    }
    if (this.issues.length > before) return null;
    const compiled: CompiledRule = Object.freeze({
      id,
      layer: this.ctx.layer,
      index: this.rules.length,
      origin,
      tool: rule.tool,
      level: rule.level,
      loosening,
      human_only: rule.human_only === true,
      reason: rule.reason,
      matchesTool,
      match: deepFreeze(structuredClone(match)),
      command,
      args: Object.freeze(args),
    });
    this.rules.push(compiled);
    return compiled;
  }

  #command(
    key: 'command' | 'argv',
    values: string[],
    loosening: boolean,
    at: (i: number) => string,
  ): CommandMatch | null {
    const patterns = [];
    let programs: string[] | null = [];
    for (const [i, v] of values.entries()) {
      try {
        patterns.push(compileCommandPattern(v, loosening ? 'allow' : 'deny'));
        const first = splitPatternWords(v)?.[0] ?? '';
        const prog = basename(first);
        if (GLOB_WORD.test(prog) || prog === '') programs = null;
        else programs?.push(prog);
      } catch (e) {
        this.issues.push({ path: at(i), message: errorText(e) });
      }
    }
    if (patterns.length !== values.length) return null;
    return Object.freeze({
      key,
      patterns: Object.freeze(patterns),
      programs: programs === null ? null : Object.freeze(programs),
    });
  }

  /** Runs a rule's examples; every failing one is an issue naming the rule and the example. */
  examples(rule: PolicyRule, compiled: CompiledRule, where: string): void {
    const run = (kind: 'match' | 'not_match', ex: ExampleCall, i: number): void => {
      const expected = kind === 'match';
      let got: boolean;
      try {
        got = this.#exampleMatches(compiled, ex);
      } catch (e) {
        this.issues.push({
          path: `${where}.examples.${kind}[${i}]`,
          message: `rule "${compiled.id}": example cannot be checked: ${errorText(e)}`,
        });
        return;
      }
      if (got !== expected)
        this.issues.push({
          path: `${where}.examples.${kind}[${i}]`,
          message: `rule "${compiled.id}": example ${JSON.stringify(ex)} ${expected ? 'does not match' : 'matches'} the rule`,
        });
    };
    rule.examples?.match?.forEach((ex, i) => run('match', ex, i));
    rule.examples?.not_match?.forEach((ex, i) => run('not_match', ex, i));
  }

  #exampleMatches(rule: CompiledRule, ex: ExampleCall): boolean {
    if (!rule.matchesTool(ex.tool)) return false;
    const a = ex.args;
    let model;
    if (this.shellTools(ex.tool) || rule.command !== null) {
      if (typeof a.command === 'string') model = this.ctx.assessor.assess(a.command).model;
      else if (Array.isArray(a.argv) && a.argv.every((x) => typeof x === 'string'))
        model = this.ctx.assessor.assess(a.argv as string[]).model;
    }
    const homeDir = this.ctx.homeDir;
    return ruleMatches(rule, {
      tool_id: ex.tool,
      args: a,
      schema: this.ctx.tools?.find((t) => t.id === ex.tool)?.input_schema,
      model,
      paths: undefined,
      lexical: (p) => {
        const e = expandHome(p, homeDir);
        return path.posix.isAbsolute(e) ? path.posix.normalize(e) : e;
      },
    });
  }
}

function roots(
  doc: PolicyDocument,
  key: 'readable_paths' | 'writable_paths',
  homeDir: string,
  issues: ValidationIssue[],
): readonly string[] | null {
  const raw = doc[key];
  if (raw === undefined) return null;
  const out: string[] = [];
  raw.forEach((p, i) => {
    const r = policyRoot(p, homeDir);
    if (r === null) issues.push({ path: `$.${key}[${i}]`, message: `"${p}" must be absolute or start with ~/` });
    else out.push(r);
  });
  return Object.freeze(out);
}

/**
 * Compiles one layer's policy. Returns the compiled policy and its warnings; throws
 * E_INVALID_ARGS (details `{layer, source, issues: [{path, message}]}`) listing every schema
 * error, bad glob or command pattern, admin-only key in a user policy, and failing rule example.
 */
export function compilePolicy(
  doc: unknown,
  ctx: CompileContext,
): { policy: CompiledPolicy; warnings: PolicyWarning[] } {
  const issues = policySchemaIssues(doc);
  if (issues.length > 0) throw invalidPolicy(ctx, issues);
  const d = structuredClone(doc) as PolicyDocument;
  if (ctx.layer === 'user') {
    if (d.defaults?.user_may_allow !== undefined)
      issues.push({ path: '$.defaults.user_may_allow', message: 'is admin-only' });
    if (d.shell?.tools !== undefined) issues.push({ path: '$.shell.tools', message: 'is admin-only' });
  }
  let shellTools: Matcher;
  const shellGlobs = ctx.layer === 'admin' ? (d.shell?.tools ?? DEFAULT_SHELL_TOOLS) : null;
  if (shellGlobs !== null) {
    const ms: Matcher[] = [];
    shellGlobs.forEach((g, i) => {
      try {
        ms.push(compileToolGlob(g));
      } catch (e) {
        issues.push({ path: `$.shell.tools[${i}]`, message: errorText(e) });
      }
    });
    shellTools = (id) => ms.some((m) => m(id));
  } else shellTools = ctx.admin?.shellTools ?? ((id) => DEFAULT_SHELL_TOOLS.includes(id));

  const rc = new RuleCompiler(ctx, shellTools);
  d.rules.forEach((rule, i) => {
    const where = `$.rules[${i}]`;
    const compiled = rc.add(rule, `rules[${i}]`, where, `${ctx.layer}#${i}`);
    if (compiled !== null) rc.examples(rule, compiled, where);
  });
  for (const [key, level] of [
    ['blocked_patterns', 'DENY'],
    ['allowed_patterns', 'AUTO'],
  ] as const) {
    d.shell?.[key]?.forEach((pattern, i) => {
      const origin = `shell.${key}[${i}]`;
      const rule: PolicyRule = { tool: '(shell tools)', match: { command: pattern }, level };
      rc.add(rule, origin, `$.${origin}`, `${ctx.layer}:${origin}`, shellTools);
    });
  }
  const humanOnly: Matcher[] = [];
  d.human_only?.forEach((g, i) => {
    try {
      humanOnly.push(compileToolGlob(g));
    } catch (e) {
      issues.push({ path: `$.human_only[${i}]`, message: errorText(e) });
    }
  });
  const readable = roots(d, 'readable_paths', ctx.homeDir, issues);
  const writable = roots(d, 'writable_paths', ctx.homeDir, issues);
  issues.push(...rc.issues);
  if (issues.length > 0) throw invalidPolicy(ctx, issues);

  const defaults = d.defaults ?? {};
  const policy = new CompiledPolicy({
    layer: ctx.layer,
    source: ctx.source,
    document: deepFreeze(d),
    digest: digestOf(d),
    rules: Object.freeze(rc.rules),
    readable,
    writable,
    humanOnly: Object.freeze(humanOnly),
    shellTools,
    defaults: Object.freeze({
      outside_read: defaults.outside_read ?? null,
      outside_write: defaults.outside_write ?? null,
      hard_link_write: defaults.hard_link_write ?? null,
      user_may_allow: defaults.user_may_allow ?? true,
    }),
    homeDir: ctx.homeDir,
  });
  return { policy, warnings: policyWarnings(policy, ctx) };
}

function invalidPolicy(ctx: CompileContext, issues: ValidationIssue[]): FingerError {
  const where = ctx.source !== undefined ? ` (${ctx.source})` : '';
  return new FingerError(
    'E_INVALID_ARGS',
    `invalid ${ctx.layer} policy${where}: ${issues.length} problem(s): ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    { layer: ctx.layer, ...(ctx.source !== undefined ? { source: ctx.source } : {}), issues },
  );
}

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

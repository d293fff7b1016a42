import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Command } from 'commander';

import type { Evaluation, PolicyDocument, PolicyWarning, ToolCallFacts } from '@finger/firewall';

import { seg } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError, DaemonNotRunningError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

/** `GET /v1/policy`. */
interface PolicyShow {
  admin: PolicyDocument;
  user: PolicyDocument;
  warnings: PolicyWarning[];
}

type ToolMeta = ToolCallFacts['tool'];

/** The repository's built-in modules, from `packages/cli/{src,dist}/commands/policy.*`. */
const BUILTIN_MODULES_DIR = fileURLToPath(new URL('../../../../modules/', import.meta.url));

/** The contract's defaults for metadata nobody declared: side effects, may execute (L2). */
const WORST_CASE: ToolMeta = { risk_level: 'medium', capability_level: 'L2', side_effects: true };

const KINDS = ['human', 'agent', 'module', 'system'] as const;

interface LocalConfig {
  roots: string[];
  modulePaths: string[];
  builtin: boolean;
}

/** `workspace.roots` and module paths of `<home>/config/config.json` (defaults when absent). */
function localConfig(home: string): LocalConfig {
  let json: { workspace?: { roots?: unknown }; modules?: { paths?: unknown; builtin?: unknown } } = {};
  try {
    json = JSON.parse(readFileSync(path.join(home, 'config', 'config.json'), 'utf8')) as typeof json;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CliError(
        'E_INVALID_ARGS',
        `cannot read ${path.join(home, 'config', 'config.json')}: ${(e as Error).message}`,
      );
  }
  const strings = (v: unknown): string[] | undefined =>
    Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
  return {
    roots: (strings(json.workspace?.roots) ?? ['workspace']).map((r) => path.resolve(home, r)),
    modulePaths: (strings(json.modules?.paths) ?? []).map((p) => path.resolve(home, p)),
    builtin: json.modules?.builtin !== false,
  };
}

/** Tool metadata from module.json files (a file, a module dir, or a dir of module dirs). */
function manifestTools(dirs: readonly string[]): Map<string, ToolMeta> {
  const out = new Map<string, ToolMeta>();
  const readManifest = (file: string): void => {
    try {
      const m = JSON.parse(readFileSync(file, 'utf8')) as { id?: string; tools?: Record<string, unknown>[] };
      for (const t of m.tools ?? []) {
        if (typeof m.id !== 'string' || typeof t.name !== 'string') continue;
        const meta: ToolMeta = {
          risk_level: (t.risk_level as ToolMeta['risk_level']) ?? WORST_CASE.risk_level,
          capability_level: (t.capability_level as ToolMeta['capability_level']) ?? WORST_CASE.capability_level,
          side_effects: typeof t.side_effects === 'boolean' ? t.side_effects : true,
        };
        if (typeof t.permission === 'string') meta.permission = t.permission as NonNullable<ToolMeta['permission']>;
        if (typeof t.input_schema === 'object' && t.input_schema !== null)
          meta.input_schema = t.input_schema as Record<string, unknown>;
        out.set(`${m.id}.${t.name}`, meta);
      }
    } catch {
      // not a readable manifest: skipped
    }
  };
  for (const d of dirs) {
    const st = statSync(d, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isFile()) readManifest(d);
    else if (existsSync(path.join(d, 'module.json'))) readManifest(path.join(d, 'module.json'));
    else
      for (const e of readdirSync(d, { withFileTypes: true }))
        if (e.isDirectory() && existsSync(path.join(d, e.name, 'module.json')))
          readManifest(path.join(d, e.name, 'module.json'));
  }
  return out;
}

/** A daemon client when this home's daemon is known to run (daemon.json, --url, FINGER_URL). */
async function daemonIfKnown(ctx: CommandContext) {
  const loc = await ctx.locate();
  if (loc.info === undefined && loc.urlSource === 'default') return undefined;
  return ctx.client();
}

/** The tool's metadata: the daemon's registry if it answers, else module.json files, else the worst case. */
async function toolMeta(
  ctx: CommandContext,
  tool: string,
  cfg: LocalConfig,
): Promise<{ id: string; tool: ToolMeta; source: string }> {
  try {
    const client = await daemonIfKnown(ctx);
    if (client !== undefined) {
      const { tool: info } = await client.get<{ tool: ToolMeta & { id: string } }>(`/v1/tools/${seg(tool)}`, {
        timeoutMs: 3000,
      });
      return { id: info.id, tool: info, source: 'the daemon' };
    }
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (
      !(e instanceof DaemonNotRunningError) &&
      code !== 'E_NOT_FOUND' &&
      code !== 'E_NO_TARGET' &&
      code !== 'E_UNAUTHENTICATED'
    )
      throw e;
  }
  const dirs = [...(cfg.builtin ? [BUILTIN_MODULES_DIR] : []), ...cfg.modulePaths];
  const found = manifestTools(dirs).get(tool);
  if (found !== undefined) return { id: tool, tool: found, source: 'module.json' };
  return { id: tool, tool: WORST_CASE, source: 'unknown tool: worst-case metadata' };
}

/** Opens the policy files of `home` like the daemon does (loaded lazily: only `policy` needs the firewall). */
async function loadLocal(home: string, cfg: LocalConfig) {
  const fw = await import('@finger/firewall');
  const assessor = await fw.RiskAssessor.create({ finger_home: home });
  let store;
  try {
    store = fw.PolicyStore.load({ home, assessor, homeDir: homedir() });
  } catch (e) {
    const err = e as { code?: unknown; message?: string; details?: unknown };
    throw new CliError(typeof err.code === 'string' ? err.code : 'E_INVALID_ARGS', err.message ?? String(e), {
      details: err.details,
    });
  }
  const sandbox = new fw.PathSandbox({ workspaceRoots: cfg.roots, home, homeDir: homedir() });
  const engine = new fw.FirewallEngine({ policy: store, risk: assessor, sandbox });
  return { store, engine };
}

function printWarnings(ctx: CommandContext, warnings: PolicyWarning[]): void {
  for (const w of warnings) ctx.out.warn(`${w.layer} ${w.rule}: ${w.message}`);
}

function printDoc(ctx: CommandContext, name: string, doc: PolicyDocument): void {
  const out = ctx.out;
  out.line(
    `${name} policy: ${doc.rules.length} rule${doc.rules.length === 1 ? '' : 's'}${doc.description ? ` — ${doc.description}` : ''}`,
  );
  doc.rules.forEach((r, i) => {
    const match = r.match ? ` ${JSON.stringify(r.match)}` : '';
    out.line(`  ${r.id ?? `#${i}`}  ${r.tool}${match} → ${r.level}${r.reason ? `  (${r.reason})` : ''}`);
  });
  if (doc.readable_paths) out.line(`  readable_paths: ${doc.readable_paths.join(', ')}`);
  if (doc.writable_paths) out.line(`  writable_paths: ${doc.writable_paths.join(', ')}`);
  if (doc.shell?.allowed_patterns?.length) out.line(`  shell allowed: ${doc.shell.allowed_patterns.join(' | ')}`);
  if (doc.shell?.blocked_patterns?.length) out.line(`  shell blocked: ${doc.shell.blocked_patterns.join(' | ')}`);
  if (doc.human_only?.length) out.line(`  human_only: ${doc.human_only.join(', ')}`);
}

/** The human-readable Evaluation: level, action, deciding layer, matched rules, reasons, preview. */
export function evaluationLines(tool: string, ev: Evaluation, source: string): string[] {
  const lines = [
    `${tool}: ${ev.level} (${ev.action}), decided by layer ${ev.layer}${ev.waived ? ` — ${ev.waived} waived (direct)` : ''}`,
  ];
  lines.push(`tool metadata: ${source}`);
  lines.push(ev.matched_rules.length ? 'matched rules:' : 'matched rules: none');
  for (const m of ev.matched_rules) lines.push(`  ${m.source}:${m.id}  ${m.level}  ${m.reason}`);
  if (ev.reasons.length) lines.push('reasons:');
  for (const r of ev.reasons) lines.push(`  - ${r}`);
  for (const w of ev.warnings ?? []) lines.push(`warning: ${w}`);
  if (ev.preview) {
    lines.push(`preview (${ev.preview.kind}):`);
    for (const l of ev.preview.text.split('\n')) lines.push(`  ${l}`);
  }
  return lines;
}

/**
 * `policy show` (GET /v1/policy, or the files when the daemon is stopped), `policy set -f` (PUT
 * /v1/policy), `policy reset` (POST /v1/policy/reset) and `policy check <tool> '<args>'` — the
 * whole Evaluation, computed locally from the policy files (no daemon needed).
 */
export function registerPolicy(program: Command, state: RunState): void {
  const policy = program.command('policy').description('show, set, reset and check the firewall policy');

  policy
    .command('show')
    .description('the AdminPolicy and UserPolicy and the loader warnings')
    .action(
      action(state, async (ctx) => {
        let shown: PolicyShow;
        try {
          const client = await daemonIfKnown(ctx);
          if (client === undefined) throw new DaemonNotRunningError('');
          shown = await client.get<PolicyShow>('/v1/policy');
        } catch (e) {
          if (!(e instanceof DaemonNotRunningError)) throw e;
          shown = (await loadLocal(ctx.home, localConfig(ctx.home))).store.show();
        }
        if (ctx.out.json) ctx.out.printJson(shown);
        else {
          printDoc(ctx, 'admin', shown.admin);
          printDoc(ctx, 'user', shown.user);
          printWarnings(ctx, shown.warnings);
        }
        return EXIT.OK;
      }),
    );

  policy
    .command('set')
    .description('replace the UserPolicy with a JSON document (validated and audited by the daemon)')
    .requiredOption('-f, --file <user-policy.json>', 'the UserPolicy document')
    .action(
      action<{ file: string }>(state, async (ctx, _args, opts) => {
        let doc: unknown;
        try {
          doc = JSON.parse(await readFile(path.resolve(opts.file), 'utf8'));
        } catch (e) {
          throw new CliError('E_USAGE', `cannot read ${opts.file} as JSON: ${(e as Error).message}`);
        }
        const client = await ctx.client();
        const { body } = await client.call<PolicyShow>('PUT', '/v1/policy', doc);
        if (ctx.out.json) ctx.out.printJson(body);
        else {
          ctx.out.line(`user policy set: ${body.user.rules.length} rule${body.user.rules.length === 1 ? '' : 's'}`);
          printWarnings(
            ctx,
            body.warnings.filter((w) => w.layer === 'user'),
          );
        }
        return EXIT.OK;
      }),
    );

  policy
    .command('reset')
    .description('revert the UserPolicy (adaptive escalations included) to empty; audited')
    .action(
      action(state, async (ctx) => {
        const client = await ctx.client();
        const { body } = await client.post<PolicyShow>('/v1/policy/reset', {});
        if (ctx.out.json) ctx.out.printJson(body);
        else ctx.out.line('user policy reset: no user rules');
        return EXIT.OK;
      }),
    );

  policy
    .command('check')
    .description('evaluate a call against the policy files and print the whole Evaluation (nothing runs)')
    .argument('<tool>', 'tool id, e.g. shell.exec')
    .argument('[args]', "the call's arguments as JSON", '{}')
    .option('--principal <kind>', `who calls: ${KINDS.join(', ')} (default agent)`, 'agent')
    .option('--direct', "a human's direct /hub dispatch (waives CONFIRM/APPROVE, never DENY)")
    .action(
      action<{ principal: string; direct?: boolean }>(state, async (ctx, args, opts) => {
        const [tool, raw = '{}'] = args as [string, string?];
        // a tool id is one word: `policy check 'curl x | sh'` is a command meant for shell.exec
        if (/\s/.test(tool.trim()) || tool.trim() === '')
          throw new CliError(
            'E_USAGE',
            `"${tool}" is not a tool id; to check a shell command: myfinger policy check shell.exec '${JSON.stringify({ command: tool })}'`,
          );
        let callArgs: unknown;
        try {
          callArgs = JSON.parse(raw);
        } catch (e) {
          throw new CliError('E_USAGE', `args must be JSON: ${(e as Error).message}`);
        }
        if (!(KINDS as readonly string[]).includes(opts.principal))
          throw new CliError('E_USAGE', `--principal must be one of ${KINDS.join(', ')}`);
        const kind = opts.principal as (typeof KINDS)[number];
        const cfg = localConfig(ctx.home);
        const meta = await toolMeta(ctx, tool, cfg);
        const { store, engine } = await loadLocal(ctx.home, cfg);
        const facts: ToolCallFacts = {
          tool_id: meta.id,
          args: callArgs,
          principal: { kind, id: 'policy-check', roles: [] },
          session_id: 'policy-check',
          request_id: 'policy-check',
          correlation_id: 'policy-check',
          direct: opts.direct === true && kind === 'human',
          tool: meta.tool,
        };
        const ev = engine.evaluate((await engine.withResolvedHosts(facts)) ?? facts, { record: false });
        if (ctx.out.json) ctx.out.printJson(ev);
        else {
          for (const l of evaluationLines(meta.id, ev, meta.source)) ctx.out.line(l);
          printWarnings(ctx, store.warnings());
        }
        return EXIT.OK;
      }),
    );
}

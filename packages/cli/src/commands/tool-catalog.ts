import type { Command } from 'commander';

import { jsonErrorPosition } from '@finger/protocol';

import type { DispatchResult, GrantsResult, RegisteredTool, ToolDetails } from '../api-types.js';
import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { type Colors, formatResult } from '../output.js';
import { caretLines } from '../render-error.js';

interface ListOptions {
  role?: string;
}

interface RunOptions {
  args?: string;
  timeoutMs?: string;
  requestId?: string;
}

interface GrantOptions {
  role: string;
  tool: string;
  revoke?: boolean;
}

/** `agent:executor` and `executor` name the same grant role. */
export function grantRole(role: string): string {
  return role.startsWith('agent:') ? role.slice('agent:'.length) : role;
}

function riskCell(risk: string | undefined, c: Colors): string {
  const r = risk ?? '-';
  if (r === 'high' || r === 'critical') return c.red(r);
  if (r === 'medium') return c.yellow(r);
  return r;
}

const yesNo = (v: boolean | undefined): string => (v === undefined ? '-' : v ? 'yes' : 'no');

/** The rows of `tool list`: id, risk, capability level, side effects, provider. */
export function toolRows(tools: RegisteredTool[], c: Colors): string[][] {
  return tools.map((t) => [
    t.quarantined ? `${t.id} ${c.red('(quarantined)')}` : t.id,
    riskCell(t.risk_level, c),
    t.capability_level ?? '-',
    yesNo(t.side_effects),
    t.provider,
  ]);
}

/**
 * Parses `--args`: a JSON object. Bad JSON is a usage error (exit 2) naming the position, with a
 * caret under it; JSON that is not an object is a usage error too.
 */
export function parseArgsOption(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const pos = Math.max(0, jsonErrorPosition(text));
    throw new CliError('E_USAGE', `--args is not valid JSON at position ${pos}`, {
      notes: caretLines(text, pos, 'here'),
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('E_USAGE', `--args must be a JSON object, got ${Array.isArray(value) ? 'an array' : text}`);
  }
  return value as Record<string, unknown>;
}

function indent(text: string, by = '  '): string[] {
  return text.split('\n').map((l) => by + l);
}

/** The text of `tool show`: metadata, the provider choice line, then both schemas. */
export function showLines(d: ToolDetails, c: Colors): string[] {
  const t = d.tool;
  const lines = [`${c.bold(t.id)}${t.description ? ` — ${t.description}` : ''}`];
  if (t.quarantined)
    lines.push(c.red(`  QUARANTINED: ${t.quarantined.reason} (re-pin with: myfinger tool trust ${t.id})`));
  const field = (k: string, v: string): void => void lines.push(`  ${`${k}:`.padEnd(15)}${v}`);
  field('module', `${t.module}${t.runtime ? ` (${t.runtime})` : ''}`);
  field('risk', riskCell(t.risk_level, c));
  field('capability', t.capability_level ?? '-');
  if (t.permission) field('permission', t.permission);
  field('side effects', yesNo(t.side_effects));
  field('idempotent', yesNo(t.idempotent));
  if (t.timeout_ms !== undefined) field('timeout', `${t.timeout_ms} ms`);
  if (t.context_cost !== undefined) field('context cost', `${t.context_cost} tokens`);
  field('provider', t.provider);
  const pc = d.provider_choice;
  const others = pc.candidates.filter((x) => x !== pc.chosen);
  const name = pc.name ?? t.name;
  field(
    'short name',
    `${name} → ${pc.chosen} (${pc.rule}${others.length ? `; also offered as ${others.join(', ')}` : ''})`,
  );
  lines.push('input schema:');
  lines.push(
    ...(t.input_schema === undefined ? ['  (none: any arguments)'] : indent(JSON.stringify(t.input_schema, null, 2))),
  );
  lines.push('output schema:');
  lines.push(...(t.output_schema === undefined ? ['  (none)'] : indent(JSON.stringify(t.output_schema, null, 2))));
  return lines;
}

/**
 * `tool list [--role R] | show <id> | run <id> --args '{…}' | grant --role R --tool GLOB [--revoke]`
 * over /v1/tools and /v1/grants, added to the `tool` command.
 */
export function registerToolCatalog(tool: Command, state: RunState): void {
  tool
    .command('list')
    .description('list every registered tool with its risk, capability level and provider')
    .option('--role <role>', 'only the tools this agent role is granted (supervisor, executor, reviewer, delegated)')
    .action(
      action<ListOptions>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const q = opts.role !== undefined ? `?role=${seg(grantRole(opts.role))}` : '';
        const { tools } = await client.get<{ tools: RegisteredTool[] }>(`/v1/tools${q}`);
        if (ctx.out.json) ctx.out.printJson({ tools });
        else if (!tools.length) ctx.out.line(opts.role ? `no tools granted to ${opts.role}` : 'no tools registered');
        else ctx.out.table(['ID', 'RISK', 'CAPABILITY', 'SIDE_EFFECTS', 'PROVIDER'], toolRows(tools, ctx.out.c));
        return EXIT.OK;
      }),
    );

  tool
    .command('show')
    .description('show one tool: metadata, which provider answers for it, input and output schema')
    .argument('<id>', 'tool id, e.g. fs.write')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const details = await client.get<ToolDetails>(`/v1/tools/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(details);
        else for (const l of showLines(details, ctx.out.c)) ctx.out.line(l);
        return EXIT.OK;
      }),
    );

  tool
    .command('run')
    .description('run one tool now and print its result (arguments are checked against its input schema)')
    .argument('<id>', 'tool id, e.g. fs.write')
    .option('--args <json>', 'the arguments as a JSON object', undefined)
    .option('--timeout-ms <ms>', 'give up after this many milliseconds')
    .option('--request-id <id>', 'idempotency key: a repeat returns the first result')
    .action(
      action<RunOptions>(state, async (ctx, [id = ''], opts) => {
        const args = parseArgsOption(opts.args);
        const body: { args: Record<string, unknown>; timeout_ms?: number; request_id?: string } = { args };
        if (opts.timeoutMs !== undefined) {
          const ms = Number(opts.timeoutMs);
          if (!Number.isInteger(ms) || ms < 1)
            throw new CliError('E_USAGE', `--timeout-ms must be a positive integer, got ${opts.timeoutMs}`);
          body.timeout_ms = ms;
        }
        if (opts.requestId !== undefined) body.request_id = opts.requestId;
        const client = await ctx.client();
        const { body: res } = await client.post<DispatchResult>(`/v1/tools/${seg(id)}/run`, body);
        if (ctx.out.json) ctx.out.printJson(res);
        else ctx.out.block(formatResult(res.result));
        return EXIT.OK;
      }),
    );

  tool
    .command('grant')
    .description('grant an agent role a tool id or glob (admin); --revoke takes a stored grant back')
    .requiredOption('--role <role>', 'agent role: supervisor, executor, reviewer or delegated (hook tokens)')
    .requiredOption('--tool <glob>', 'tool id or glob over tool ids, e.g. fs.read or web.*')
    .option('--revoke', 'revoke instead of grant')
    .action(
      action<GrantOptions>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const body = { role: grantRole(opts.role), tool: opts.tool };
        const res = opts.revoke
          ? (await client.call<{ role: string; tool: string; grants: string[] }>('DELETE', '/v1/grants', body)).body
          : (await client.post<{ role: string; tool: string; grants: string[] }>('/v1/grants', body)).body;
        if (ctx.out.json) ctx.out.printJson(res);
        else {
          ctx.out.line(`${opts.revoke ? 'revoked' : 'granted'} ${res.tool} ${opts.revoke ? 'from' : 'to'} ${res.role}`);
          ctx.out.line(`${res.role} now has: ${res.grants.length ? res.grants.join(', ') : '(nothing)'}`);
        }
        return EXIT.OK;
      }),
    );

  tool
    .command('grants')
    .description('list the tool globs granted to each agent role')
    .action(
      action(state, async (ctx) => {
        const client = await ctx.client();
        const res = await client.get<GrantsResult>('/v1/grants');
        if (ctx.out.json) ctx.out.printJson(res);
        else
          ctx.out.table(
            ['ROLE', 'TOOLS'],
            Object.entries(res.grants).map(([role, globs]) => [role, globs.join(', ') || '-']),
          );
        return EXIT.OK;
      }),
    );
}

import { readFile } from 'node:fs/promises';

import type { Command } from 'commander';

import type { ModuleInfo } from '../api-types.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

interface ParseOptions {
  registry?: string;
  file?: string;
}

/** The registry file of `router parse --registry` (ids only; see docs/contracts.md). */
export interface RegistryFile {
  agents: string[];
  modules: string[];
  high_risk: string[];
}

/** Most bytes read from stdin or `--file`; the guardrail itself reads at most 256 KiB. */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** Validates a parsed `--registry` file: three arrays of strings (`high_risk` optional). */
export function registryFromJson(v: unknown, file: string): RegistryFile {
  const bad = (what: string): CliError =>
    new CliError('E_USAGE', `${file}: ${what}; expected {"agents": [ids], "modules": [ids], "high_risk": [ids]}`);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('not a JSON object');
  const o = v as Record<string, unknown>;
  const list = (key: string, required: boolean): string[] => {
    const x = o[key];
    if (x === undefined && !required) return [];
    if (!Array.isArray(x) || !x.every((s) => typeof s === 'string')) throw bad(`"${key}" must be an array of strings`);
    return x as string[];
  };
  return { agents: list('agents', false), modules: list('modules', true), high_risk: list('high_risk', false) };
}

async function readRegistryFile(file: string): Promise<RegistryFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new CliError('E_USAGE', `cannot read ${file}: ${(e as Error).message}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CliError('E_USAGE', `${file} is not valid JSON: ${(e as Error).message}`);
  }
  return registryFromJson(v, file);
}

interface DaemonTool {
  id: string;
  module: string;
  risk_level?: string;
}

/**
 * The running daemon's registry: agents are modules of kind `agent`; module ids and tool ids of
 * the others; a high or critical tool marks its id and its module's id high risk.
 */
async function daemonRegistry(ctx: CommandContext): Promise<RegistryFile> {
  const client = await ctx.client();
  const [{ modules }, { tools }] = await Promise.all([
    client.get<{ modules: ModuleInfo[] }>('/v1/modules'),
    client.get<{ tools: DaemonTool[] }>('/v1/tools'),
  ]);
  const agents = new Set(modules.filter((m) => m.kind === 'agent').map((m) => m.id));
  const ids = new Set<string>();
  const high = new Set<string>();
  for (const m of modules) if (!agents.has(m.id)) ids.add(m.id);
  for (const t of tools) {
    if (agents.has(t.module)) continue;
    ids.add(t.id);
    if (t.risk_level === 'high' || t.risk_level === 'critical') {
      high.add(t.id);
      high.add(t.module);
    }
  }
  return { agents: [...agents].sort(), modules: [...ids].sort(), high_risk: [...high].sort() };
}

async function readInput(ctx: CommandContext, file: string | undefined): Promise<string> {
  if (file !== undefined && file !== '-') {
    try {
      const buf = await readFile(file);
      if (buf.length > MAX_INPUT_BYTES)
        throw new CliError('E_USAGE', `${file} is larger than ${MAX_INPUT_BYTES} bytes`);
      return buf.toString('utf8');
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError('E_USAGE', `cannot read ${file}: ${(e as Error).message}`);
    }
  }
  if (process.stdin.isTTY === true) ctx.out.warn('reading the model answer from stdin (end with Ctrl-D)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_INPUT_BYTES) throw new CliError('E_USAGE', `stdin is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `router parse [--registry file.json] [--file path]` — runs the JSON guardrail over a raw model
 * answer (stdin, or `--file`) and prints the outcome as JSON. Without `--registry` the targets
 * come from the running daemon (GET /v1/modules and /v1/tools). Exit 0 for `ok`, 1 for
 * `ask_human`, 8 for `reject`; 2 for an unreadable registry or input file.
 */
export function registerRouter(program: Command, state: RunState): void {
  const router = program.command('router').description('inspect the ingress router');
  router
    .command('parse')
    .description("run the JSON guardrail over a model's raw answer (stdin) and print the outcome as JSON")
    .option(
      '--registry <file>',
      'targets as {"agents": [ids], "modules": [ids], "high_risk": [ids]} (default: the daemon)',
    )
    .option('-f, --file <path>', 'read the answer from a file instead of stdin')
    .addHelpText('after', '\nExit codes: 0 ok · 1 ask_human · 8 reject · 2 unreadable registry or answer file')
    .action(
      action<ParseOptions>(state, async (ctx, _args, opts) => {
        const registry =
          opts.registry !== undefined ? await readRegistryFile(opts.registry) : await daemonRegistry(ctx);
        const text = await readInput(ctx, opts.file);
        // Loaded here so that other commands never load the agents package.
        const { runGuardrail } = await import('@finger/agents');
        const out = runGuardrail(text, registry);
        ctx.out.printJson(out);
        return out.outcome === 'ok' ? EXIT.OK : out.outcome === 'reject' ? EXIT.DENIED : EXIT.GENERIC;
      }),
    );
}

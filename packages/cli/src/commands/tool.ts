import { readFile } from 'node:fs/promises';
import path from 'node:path';

import type { Command } from 'commander';

import type { ModuleInfo } from '../api-types.js';
import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { registerToolCatalog } from './tool-catalog.js';

interface RegisterOptions {
  file: string;
}

/**
 * Reads and parses a module.json. Rejects with E_USAGE when the file cannot be read and with
 * E_INVALID_MANIFEST when it is not JSON (the daemon validates the schema).
 */
export async function readManifestFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new CliError('E_USAGE', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError('E_INVALID_MANIFEST', `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * `tool register -f <module.json>`: reads the manifest locally and POSTs it with its folder as
 * `base_dir` (relative runtime paths resolve there). Manifest errors print one `path: message`
 * line per issue and exit 2.
 */
export function registerTool(program: Command, state: RunState): void {
  const tool = program.command('tool').description('list, inspect, run, grant and register tools');
  registerToolCatalog(tool, state);

  tool
    .command('register')
    .description('register the module described by a module.json')
    .requiredOption('-f, --file <module.json>', 'path of the module.json')
    .action(
      action<RegisterOptions>(state, async (ctx, _args, opts) => {
        const file = path.resolve(opts.file);
        const manifest = await readManifestFile(file);
        const client = await ctx.client();
        const { body } = await client.post<{ module: ModuleInfo }>('/v1/modules', {
          manifest,
          base_dir: path.dirname(file),
        });
        const m = body.module;
        if (ctx.out.json) {
          ctx.out.printJson(body);
        } else {
          const names = m.tools.map((t) => `${m.id}.${t.name}`).join(', ');
          ctx.out.line(
            `registered module ${ctx.out.c.bold(m.id)} ${m.version} (${m.runtime}) — ${m.tools.length} tool(s): ${names}`,
          );
        }
        return EXIT.OK;
      }),
    );

  tool
    .command('trust <id>')
    .description('re-pin the current definition of a (quarantined) MCP tool mcp.<server>.<tool> (admin)')
    .option('--hash <sha256>', 'pin only if the definition still has this hash (as shown in the quarantine)')
    .action(
      action<{ hash?: string }>(state, async (ctx, args, opts) => {
        const id = String(args[0]);
        const client = await ctx.client();
        const body = opts.hash !== undefined ? { expected_hash: opts.hash } : {};
        const res = (await client.post<{ id: string; pinned_hash: string }>(`/v1/tools/${seg(id)}/trust`, body)).body;
        if (ctx.out.json) ctx.out.printJson(res);
        else ctx.out.line(`trusted ${ctx.out.c.bold(res.id)}: pinned ${res.pinned_hash}`);
        return EXIT.OK;
      }),
    );
}

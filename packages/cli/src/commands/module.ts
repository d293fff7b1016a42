import type { Command } from 'commander';

import type { ModuleHealthInfo, ModuleInfo } from '../api-types.js';
import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { Colors } from '../output.js';
import { registerModuleServe } from './module-serve.js';

function statusCell(status: string, c: Colors): string {
  if (status === 'ready') return c.green(status);
  if (status === 'unhealthy') return c.red(status);
  return c.yellow(status);
}

/** Where a module runs: `local`, or its remote nodes (`?` marks a node whose heartbeats stopped). */
export function locationCell(m: ModuleInfo): string {
  if (m.location !== 'remote') return 'local';
  if (!m.nodes?.length) return 'remote:-';
  return m.nodes.map((n) => (n.healthy === false ? `${n.node}?` : n.node)).join(',');
}

/** The rows of `module list`: id, version, runtime, location, tool names, status, inflight/concurrency. */
export function moduleRows(modules: ModuleInfo[], c: Colors): string[][] {
  return modules.map((m) => [
    m.id,
    m.version,
    m.runtime,
    locationCell(m),
    m.tools.map((t) => t.name).join(',') || '-',
    statusCell(m.status, c),
    m.concurrency !== undefined ? `${m.inflight}/${m.concurrency}` : String(m.inflight),
  ]);
}

function healthRow(h: ModuleHealthInfo, c: Colors): string[] {
  return [h.id, h.healthy ? c.green('yes') : c.red('no'), String(h.consecutive_failures), h.checked_at, h.detail ?? ''];
}

/**
 * `module list | health [id] | unregister <id>` over /v1/modules. `health` exits 7 when any
 * module checked is unhealthy, so scripts can use it as a probe.
 */
export function registerModule(program: Command, state: RunState): void {
  const mod = program.command('module').description('list, check and unregister modules');
  registerModuleServe(mod, state);

  mod
    .command('list')
    .description('list registered modules')
    .action(
      action(state, async (ctx) => {
        const client = await ctx.client();
        const { modules } = await client.get<{ modules: ModuleInfo[] }>('/v1/modules');
        if (ctx.out.json) ctx.out.printJson({ modules });
        else if (!modules.length) ctx.out.line('no modules registered');
        else
          ctx.out.table(
            ['ID', 'VERSION', 'RUNTIME', 'LOCATION', 'TOOLS', 'STATUS', 'INFLIGHT'],
            moduleRows(modules, ctx.out.c),
          );
        return EXIT.OK;
      }),
    );

  mod
    .command('health')
    .description('run the health check of one module, or of every module')
    .argument('[id]', 'module id (default: all modules)')
    .action(
      action(state, async (ctx, [id]) => {
        const client = await ctx.client();
        const ids = id ? [id] : (await client.get<{ modules: ModuleInfo[] }>('/v1/modules')).modules.map((m) => m.id);
        const results: ModuleHealthInfo[] = [];
        for (const m of ids) results.push(await client.get<ModuleHealthInfo>(`/v1/modules/${seg(m)}/health`));
        if (ctx.out.json) ctx.out.printJson(id ? results[0] : { modules: results });
        else if (!results.length) ctx.out.line('no modules registered');
        else
          ctx.out.table(
            ['ID', 'HEALTHY', 'FAILURES', 'CHECKED_AT', 'DETAIL'],
            results.map((h) => healthRow(h, ctx.out.c)),
          );
        return results.every((h) => h.healthy) ? EXIT.OK : EXIT.MODULE;
      }),
    );

  mod
    .command('unregister')
    .description('unregister a module (in-flight calls drain first)')
    .argument('<id>', 'module id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const res = await client.delete<{ id: string; unregistered: boolean }>(`/v1/modules/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(res);
        else ctx.out.line(`module ${res.id} unregistered`);
        return EXIT.OK;
      }),
    );
}

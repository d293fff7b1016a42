import type { Command } from 'commander';

import type { Env } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { colorEnabled } from '../output.js';

/** True when Ink's is-in-ci check holds: `CI` or `CONTINUOUS_INTEGRATION` set, and not `0`/`false`. */
export function inkSeesCi(env: Env): boolean {
  return ['CI', 'CONTINUOUS_INTEGRATION'].some((k) => env[k] !== undefined && env[k] !== '0' && env[k] !== 'false');
}

/**
 * `myfinger console [--bell]`: the full-screen terminal console (Ink), over HTTP and the event
 * WebSocket with the CLI's token. Needs a terminal on stdin and stdout; refuses with E_USAGE when
 * `CI` is set, because Ink then draws nothing until exit. React and Ink load only for this
 * command.
 */
export function registerConsole(program: Command, state: RunState): void {
  program
    .command('console')
    .description('full-screen terminal console: approvals, risk dashboard, activity and audit, halt')
    .option('--bell', 'ring the terminal bell when a call is held')
    .action(
      action<{ bell?: boolean }>(state, async (ctx, _args, opts) => {
        if (ctx.out.json) throw new CliError('E_USAGE', 'myfinger console is interactive: --json does not apply');
        if (process.stdout.isTTY !== true || process.stdin.isTTY !== true)
          throw new CliError('E_USAGE', 'myfinger console needs a terminal on stdin and stdout');
        if (inkSeesCi(ctx.io.env))
          throw new CliError(
            'E_USAGE',
            'CI (or CONTINUOUS_INTEGRATION) is set: the console library (Ink) would draw nothing until exit; run it with CI unset (env -u CI myfinger console)',
          );
        const client = await ctx.client();
        const { runConsole } = await import('../console/run.js');
        await runConsole({
          client,
          env: ctx.io.env,
          bell: opts.bell === true,
          color: colorEnabled(process.stdout, ctx.io.env),
        });
        return EXIT.OK;
      }),
    );
}

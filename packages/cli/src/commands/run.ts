import type { Command } from 'commander';

import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { followTask, type TaskView } from './task-follow.js';

interface RunOpts {
  resume?: string;
  maxSteps?: string;
  detach?: boolean;
}

/**
 * `myfinger run "<task>"`: starts a supervised task whose workspace is the current directory
 * (its own read/write root for this task: not `/`, the home directory or FINGER_HOME) and follows it live; `--resume <id>`
 * continues a PAUSED, ERROR_PAUSED or INTERRUPTED task from its last checkpoint; `--detach`
 * prints the task and returns. Exit 0 when the task completes (or pauses at max_steps), 8 when
 * it was stopped, 1 when it failed.
 */
export function registerRun(program: Command, state: RunState): void {
  program
    .command('run')
    .description('run a supervised task in the current directory with live progress and inline approvals')
    .argument('[task...]', 'what to do, in plain words')
    .option('--resume <id>', 'continue a paused or interrupted task from its last completed step')
    .option('--max-steps <n>', 'step budget of this task (default: config safety.max_steps)')
    .option('--detach', 'start it and return at once (follow with `myfinger tasks show <id>`)')
    .action(
      action<RunOpts>(state, async (ctx, args, opts) => {
        const text = args.join(' ').trim();
        if (!opts.resume && !text) throw new CliError('E_USAGE', 'say what to do: myfinger run "<task>"');
        if (opts.resume && text) throw new CliError('E_USAGE', '--resume takes no task text');
        const client = await ctx.client();
        const max = opts.maxSteps !== undefined ? Number(opts.maxSteps) : undefined;
        if (max !== undefined && (!Number.isInteger(max) || max < 1))
          throw new CliError('E_USAGE', `--max-steps must be a positive integer, got ${opts.maxSteps}`);
        const start = async (): Promise<TaskView> => {
          if (opts.resume) return (await client.post<TaskView>(`/v1/tasks/${seg(opts.resume)}/resume`, {})).body;
          const body = { text, workspace: process.cwd(), ...(max !== undefined ? { max_steps: max } : {}) };
          return (await client.post<TaskView>('/v1/tasks', body)).body;
        };
        if (opts.detach) {
          const task = await start();
          if (ctx.out.json) ctx.out.printJson(task);
          else ctx.out.line(`task ${task.id} ${task.state} in ${task.workspace}`);
          return 0;
        }
        return followTask(ctx, client, start);
      }),
    );
}

import type { Command } from 'commander';

import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import type { TaskView } from './task-follow.js';

interface StepView {
  step: number;
  thought: string;
  final?: boolean;
  calls: { tool: string; args: unknown; class: string; error?: { code: string; message: string } }[];
  usage: TaskView['usage'];
}

const ANSWERS = ['confirm', 'continue', 'skip', 'stop'];

function row(t: TaskView): string[] {
  return [
    t.id,
    t.state,
    `${t.step}/${t.max_steps}`,
    t.updated_at,
    t.text.length > 60 ? `${t.text.slice(0, 57)}…` : t.text,
  ];
}

/**
 * `myfinger tasks [--all]` (unfinished tasks, or all), `tasks show <id>` (steps, calls, usage,
 * question), `tasks abort <id>` (two-phase: first after the current step, again at once),
 * `tasks answer <id> <confirm|continue|skip|stop> [--message]` (the task's question).
 */
export function registerTasks(program: Command, state: RunState): void {
  const tasks = program
    .command('tasks')
    .description('supervised tasks: list, show, abort, answer')
    .option('--all', 'include finished tasks')
    .action(
      action<{ all?: boolean }>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const { tasks: list } = await client.get<{ tasks: TaskView[] }>(`/v1/tasks${opts.all ? '?all=true' : ''}`);
        if (ctx.out.json) ctx.out.printJson({ tasks: list });
        else if (!list.length) ctx.out.line(opts.all ? 'no tasks' : 'no unfinished tasks (--all lists every task)');
        else for (const t of list) ctx.out.line(row(t).join('  '));
        return 0;
      }),
    );

  tasks
    .command('show')
    .description('one task: state, question, steps with their tool calls, tokens and cost')
    .argument('<id>')
    .action(
      action(state, async (ctx, [id]) => {
        const client = await ctx.client();
        const t = await client.get<TaskView & { steps: StepView[] }>(`/v1/tasks/${seg(id!)}`);
        if (ctx.out.json) {
          ctx.out.printJson(t);
          return 0;
        }
        const o = ctx.out;
        o.line(`${o.c.bold(t.id)} ${t.state} — step ${t.step}/${t.max_steps} — ${t.workspace}`);
        o.line(`task: ${t.text}`);
        o.line(
          `tokens: ${t.usage.input_tokens} in / ${t.usage.output_tokens} out${t.usage.cost > 0 ? `, ~$${t.usage.cost.toFixed(4)}` : ''}`,
        );
        if (t.question) o.line(o.c.yellow(`waiting: ${t.question.message}`));
        if (t.summary) o.line(`summary: ${t.summary}`);
        if (t.error) o.line(o.c.red(`${t.error.code}: ${t.error.message}`));
        for (const s of t.steps) {
          o.line(`step ${s.step}${s.final ? ' (final)' : ''}: ${s.thought || '(no readable thought)'}`);
          for (const c of s.calls)
            o.line(
              `  ${c.tool} ${JSON.stringify(c.args).slice(0, 120)} → ${c.class}${c.error ? ` ${c.error.code}` : ''}`,
            );
        }
        return 0;
      }),
    );

  tasks
    .command('abort')
    .description('stop a task: the first abort after the current step, a second one at once')
    .argument('<id>')
    .action(
      action(state, async (ctx, [id]) => {
        const client = await ctx.client();
        const r = (await client.post<{ phase: string; task: TaskView }>(`/v1/tasks/${seg(id!)}/abort`, {})).body;
        if (ctx.out.json) ctx.out.printJson(r);
        else if (r.phase === 'graceful')
          ctx.out.line(`task ${id} stops after the current step (abort again to stop at once)`);
        else ctx.out.line(`task ${id} stopped`);
        return 0;
      }),
    );

  tasks
    .command('answer')
    .description("answer a task's question: confirm, continue (with --message), skip, stop")
    .argument('<id>')
    .argument('<decision>', ANSWERS.join('|'))
    .option('-m, --message <text>', 'what the model should be told')
    .action(
      action<{ message?: string }>(state, async (ctx, [id, decision], opts) => {
        if (!ANSWERS.includes(decision!))
          throw new CliError('E_USAGE', `decision must be one of ${ANSWERS.join(', ')}`);
        const client = await ctx.client();
        const body = { decision, ...(opts.message !== undefined ? { message: opts.message } : {}) };
        const t = (await client.post<TaskView>(`/v1/tasks/${seg(id!)}/answer`, body)).body;
        if (ctx.out.json) ctx.out.printJson(t);
        else ctx.out.line(`answered task ${id}: ${decision}`);
        return 0;
      }),
    );
}

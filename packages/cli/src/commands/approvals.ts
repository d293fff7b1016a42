// `myfinger approvals [--watch]`, `approve`, `reject` and `approvals standing …`: the held calls and
// the standing answers, listed, followed and answered from the command line.

import type { Command } from 'commander';

import type { FingerEvent } from '@finger/protocol';

import {
  answeredBySuffix,
  type AnsweredByView,
  type AnswerResultView,
  approvalRows,
  type ApprovalView,
  describeAnswer,
  formatApproval,
  formatStanding,
  type StandingApprovalView,
  standingRows,
} from '../approval-views.js';
import { seg } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { type StreamControl, streamEvents } from '../event-stream.js';
import { EXIT } from '../exit-codes.js';
import { editArgs, reviewApproval, type ReviewDeps, terminalPrompter } from './approval-review.js';

/**
 * `approvals --watch`: lists what is pending, then follows APPROVAL_REQUESTED/RESOLVED on
 * `/v1/events`. Interactive (a TTY on both ends, no --json): asks about each approval in turn.
 * Otherwise prints each new approval (JSON lines with --json) and each resolution. A call held on
 * another daemon of the cluster (an event with `origin`) is only named, with that node: it is
 * answered there. Ends on interrupt (0) or when the daemon goes away (3).
 */
async function watch(ctx: CommandContext, interactive: boolean): Promise<number> {
  const client = await ctx.client();
  const out = ctx.out;
  const signal = ctx.interrupt();
  const prompter = terminalPrompter(signal);
  const seen = new Set<string>();
  const gone = new Set<string>();
  const queue: ApprovalView[] = [];
  let busy = false;
  let ctl: StreamControl | undefined;

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      while (queue.length && !ctl?.done) {
        const a = queue.shift()!;
        if (gone.has(a.id)) continue;
        const deps: ReviewDeps = {
          client,
          out,
          prompter,
          editArgs: (args) => editArgs(ctx.io.env, args, prompter, out),
        };
        await reviewApproval(deps, a);
        out.line();
      }
    } catch (e) {
      if (!signal.aborted) ctl?.fail(e);
    } finally {
      busy = false;
    }
  };
  const onApproval = (a: ApprovalView): void => {
    if (seen.has(a.id) || gone.has(a.id)) return;
    seen.add(a.id);
    if (interactive) {
      queue.push(a);
      void pump();
    } else if (out.json) out.printJsonLine({ event: 'APPROVAL_REQUESTED', approval: a });
    else {
      for (const l of formatApproval(a, out.c)) out.line(l);
      out.line();
    }
  };
  /**
   * A call held on another daemon of the cluster (its event names that node in `origin`): it can
   * be answered only there, so it is shown as such and never asked about here.
   */
  const onHeldElsewhere = (a: ApprovalView, node: string): void => {
    if (out.json) out.printJsonLine({ event: 'APPROVAL_REQUESTED', origin: node, approval: a });
    else out.line(`approval ${a.id} (${a.level} ${a.tool_id}) is held on ${node}: answer it on that daemon`);
  };
  const onResolved = (e: FingerEvent): void => {
    const d = e.data as {
      id?: string | null;
      decision?: string;
      approved?: boolean;
      reason?: string;
      answered_by?: AnsweredByView;
    };
    if (typeof d.id === 'string') gone.add(d.id);
    if (interactive) return;
    const on = e.origin !== undefined ? ` on ${e.origin}` : '';
    if (out.json)
      out.printJsonLine({ event: 'APPROVAL_RESOLVED', ...(e.origin !== undefined ? { origin: e.origin } : {}), ...d });
    else if (typeof d.id === 'string')
      out.line(
        `resolved ${d.id}${on}: ${d.decision}${answeredBySuffix(d.answered_by)}${d.reason ? ` (${d.reason})` : ''}`,
      );
  };

  return streamEvents(ctx, client, signal, {
    subscribe: { op: 'subscribe', types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'] },
    onMessage(msg, control) {
      ctl = control;
      switch (msg.type) {
        case 'subscribed':
          if (!out.json) out.errLine(out.ce.dim('watching for approvals — Ctrl-C to stop'));
          client
            .get<{ approvals: ApprovalView[] }>('/v1/approvals')
            .then(({ approvals }) => [...approvals].reverse().forEach(onApproval), control.fail);
          break;
        case 'event':
          if (msg.event.type === 'APPROVAL_REQUESTED') {
            const a = (msg.event.data as { approval?: ApprovalView }).approval;
            if (a && msg.event.origin !== undefined) onHeldElsewhere(a, msg.event.origin);
            else if (a) onApproval(a);
          } else if (msg.event.type === 'APPROVAL_RESOLVED') onResolved(msg.event);
          break;
        case 'dropped':
          out.warn(`${msg.count} event(s) dropped: run \`myfinger approvals\` to see what is pending`);
          break;
        default:
          break;
      }
    },
  });
}

function parseArgsOption(text: string): unknown {
  return parseJsonOption('--args', text);
}

function parseJsonOption(name: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError('E_USAGE', `${name} is not JSON: ${(e as Error).message}`);
  }
}

/** `approvals standing [list|show <id>|revoke <id>]`: what `always` left behind. */
function registerStanding(approvals: Command, state: RunState): void {
  const standing = approvals
    .command('standing')
    .description('standing approvals (what `always` left behind): list, show, revoke');
  const list = action(state, async (ctx) => {
    const client = await ctx.client();
    const res = await client.get<{ standing_approvals: StandingApprovalView[] }>('/v1/standing-approvals');
    if (ctx.out.json) ctx.out.printJson(res);
    else if (!res.standing_approvals.length) ctx.out.line('no standing approvals');
    else ctx.out.table(['ID', 'SCOPE', 'CALLER', 'SHAPE', 'EXPIRES'], standingRows(res.standing_approvals));
    return EXIT.OK;
  });
  standing.action(list);
  standing.command('list').description('list the standing approvals in force').action(list);
  standing
    .command('show')
    .description('show one standing approval')
    .argument('<id>', 'standing approval id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const body = await client.get<StandingApprovalView>(`/v1/standing-approvals/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(body);
        else for (const l of formatStanding(body)) ctx.out.line(l);
        return EXIT.OK;
      }),
    );
  standing
    .command('revoke')
    .description('revoke a standing approval: the next call of its shape is held again')
    .argument('<id>', 'standing approval id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const body = await client.delete<{ revoked: StandingApprovalView }>(`/v1/standing-approvals/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(body);
        else ctx.out.line(`revoked ${body.revoked.id}: ${body.revoked.description ?? body.revoked.tool_id}`);
        return EXIT.OK;
      }),
    );
}

/** Prints an answer; exit 8 when an approval did not go through (the edited args were denied). */
function printAnswer(ctx: CommandContext, r: AnswerResultView): number {
  if (ctx.out.json) ctx.out.printJson(r);
  else ctx.out.line(describeAnswer(r));
  return r.approved || (r.decision !== 'approve' && r.decision !== 'always') ? EXIT.OK : EXIT.DENIED;
}

/** `approvals [--watch] [--full]`, `approve <id> [--always] [--args '{…}']`, `reject <id> [--reason …]`. */
export function registerApprovals(program: Command, state: RunState): void {
  const approvals = program
    .command('approvals')
    .description('list calls held for a person; --watch answers them interactively as they come')
    .option('--watch', 'follow new approvals (interactive on a terminal: approve, reject, always, edit, skip)')
    .option('--full', 'print every approval with its full preview instead of a table')
    .action(
      action<{ watch?: boolean; full?: boolean }>(state, async (ctx, _args, opts) => {
        if (opts.watch) {
          const interactive = !ctx.out.json && ctx.io.stdout.isTTY === true && process.stdin.isTTY === true;
          return watch(ctx, interactive);
        }
        const client = await ctx.client();
        const res = await client.get<{ approvals: ApprovalView[] }>('/v1/approvals');
        if (ctx.out.json) ctx.out.printJson(res);
        else if (!res.approvals.length) ctx.out.line('no pending approvals');
        else if (opts.full) {
          for (const a of res.approvals) {
            for (const l of formatApproval(a, ctx.out.c)) ctx.out.line(l);
            ctx.out.line();
          }
        } else ctx.out.table(['ID', 'LEVEL', 'TOOL', 'PRINCIPAL', 'SESSION', 'EXPIRES'], approvalRows(res.approvals));
        return EXIT.OK;
      }),
    );
  registerStanding(approvals, state);

  program
    .command('approve')
    .description('approve a held call (see: myfinger approvals)')
    .argument('<id>', 'approval id')
    .option('--always', "also approve the call's shape from now on (the approval's proposed shape; see --shape)")
    .option('--scope <scope>', 'with --always: session (default), workspace or persistent')
    .option('--expires <time>', 'with --always: RFC 3339 end (persistent: default 30 days)')
    .option('--shape <json>', 'with --always: a narrower shape than the proposed one')
    .option('--args <json>', 'run with these edited arguments instead (re-checked by the firewall)')
    .action(
      action<{ always?: boolean; args?: string; scope?: string; expires?: string; shape?: string }>(
        state,
        async (ctx, [id = ''], opts) => {
          const body: Record<string, unknown> = { decision: opts.always ? 'always' : 'approve' };
          if ((opts.scope ?? opts.expires ?? opts.shape) !== undefined && !opts.always)
            throw new CliError('E_USAGE', '--scope, --expires and --shape go with --always');
          if (opts.scope !== undefined) body.scope = opts.scope;
          if (opts.expires !== undefined) body.expires_at = opts.expires;
          if (opts.shape !== undefined) body.shape = parseJsonOption('--shape', opts.shape);
          if (opts.args !== undefined) body.args = parseArgsOption(opts.args);
          const client = await ctx.client();
          const { body: r } = await client.post<AnswerResultView>(`/v1/approvals/${seg(id)}`, body);
          return printAnswer(ctx, r);
        },
      ),
    );

  program
    .command('reject')
    .description('reject a held call; the reason goes back to the agent')
    .argument('<id>', 'approval id')
    .option('--reason <text>', 'why (shown to the agent)')
    .option('--not-agent-fault', "not the agent's fault: does not count toward its denial breaker")
    .action(
      action<{ reason?: string; notAgentFault?: boolean }>(state, async (ctx, [id = ''], opts) => {
        const body: Record<string, unknown> = { decision: 'reject' };
        if (opts.reason !== undefined) body.reason = opts.reason;
        if (opts.notAgentFault) body.agent_fault = false;
        const client = await ctx.client();
        const { body: r } = await client.post<AnswerResultView>(`/v1/approvals/${seg(id)}`, body);
        return printAnswer(ctx, r);
      }),
    );
}

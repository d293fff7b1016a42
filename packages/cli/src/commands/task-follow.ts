// Follows one supervised task on `/v1/events` (TASK_STATE, FIREWALL_VERDICT, APPROVAL_*) and
// renders live progress: the step, the model's streamed prose (never the JSON decision block),
// tool calls with their verdicts, tokens and cost. On a terminal it asks inline for held calls
// and for the task's questions; otherwise it says which command answers them.

import { createInterface } from 'node:readline/promises';

import type { FingerEvent } from '@finger/protocol';

import type { ApprovalView } from '../approval-views.js';
import { type DaemonClient, seg } from '../client.js';
import type { CommandContext } from '../context.js';
import { type StreamControl, streamEvents } from '../event-stream.js';
import { EXIT } from '../exit-codes.js';
import { editArgs, type Prompter, reviewApproval } from './approval-review.js';

/** A task as `GET /v1/tasks/:id` sends it (the fields the CLI shows). */
export interface TaskView {
  id: string;
  text: string;
  workspace: string;
  state: string;
  step: number;
  max_steps: number;
  session_id: string;
  usage: { input_tokens: number; output_tokens: number; cost: number };
  question?: { kind: string; message: string };
  summary?: string;
  error?: { code: string; message: string };
  created_at: string;
  updated_at: string;
}

/** The fields of TASK_STATE, FIREWALL_VERDICT and APPROVAL_* events the CLI renders. */
interface EventData {
  kind?: string;
  step?: number;
  final?: boolean;
  delta?: string;
  call?: { tool: string; args: unknown; intent?: string };
  class?: string;
  request_id?: string;
  error?: { code: string; message: string };
  step_usage?: TaskView['usage'];
  total?: TaskView['usage'];
  conflicts?: unknown;
  approval?: ApprovalView;
  approved?: boolean;
  reason?: string;
  level?: string;
  action?: string;
  layer?: string;
}

/** An event as far as the CLI reads it. */
type TaskEvent = Pick<FingerEvent, 'type'> & Partial<Pick<FingerEvent, 'request_id'>> & { data: unknown };

/** States the CLI stops following at (the task needs `--resume` or is over). */
export const STOP_FOLLOWING = ['COMPLETED', 'STOPPED', 'FAILED', 'PAUSED', 'ERROR_PAUSED', 'INTERRUPTED'];

/** Exit code for a task's final state. */
export function exitForState(state: string): number {
  if (state === 'COMPLETED' || state === 'PAUSED') return EXIT.OK;
  if (state === 'STOPPED') return EXIT.DENIED;
  return EXIT.GENERIC;
}

function tally(u: TaskView['usage']): string {
  const t = `${u.input_tokens} in / ${u.output_tokens} out tokens`;
  return u.cost > 0 ? `${t}, ~$${u.cost.toFixed(4)}` : t;
}

function terminalPrompter(signal: AbortSignal): Prompter {
  return {
    async question(q) {
      const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
      try {
        return await rl.question(q, { signal });
      } finally {
        rl.close();
      }
    },
  };
}

const QUESTION_KEYS: Record<string, string> = {
  confirm_done: '[c]onfirm done  [n]ot done (tell the model why)  [s]top',
  human_required: '[c]ontinue (with a message)  [s]top',
  in_flight: '[c]onfirm re-run  [k] skip it  [s]top',
  conflict: '[c]onfirm go ahead  [k] skip  [s]top',
};

/**
 * Subscribes to the events first, then calls `start` (create or resume the task) so no step is
 * missed, and follows the task until it stops running; resolves with the exit code.
 */
export async function followTask(
  ctx: CommandContext,
  client: DaemonClient,
  start: () => Promise<TaskView>,
): Promise<number> {
  const out = ctx.out;
  const interrupt = ctx.interrupt();
  const ended = new AbortController();
  const signal = AbortSignal.any([interrupt, ended.signal]);
  const interactive = !out.json && ctx.io.stdout.isTTY === true && process.stdin.isTTY === true;
  const prompter = terminalPrompter(signal);
  let first: TaskView | undefined;
  let id = '';
  const early: FingerEvent[] = [];
  let busy = Promise.resolve();
  const shown = new Set<string>();
  /** Request ids the firewall emitted a verdict for (anything else it allowed AUTO). */
  const judged = new Set<string>();
  let asked = '';
  let midLine = false;
  const line = (s: string) => {
    if (midLine) out.line();
    midLine = false;
    out.line(s);
  };

  const ask = (t: TaskView) => {
    // --json prints JSON lines only: the question travels in the TASK_STATE events (and the task view)
    if (out.json || !t.question || t.state !== 'WAITING_HUMAN') return;
    const key = `${t.updated_at}:${t.question.kind}`;
    if (asked === key) return;
    asked = key;
    line(out.c.bold(`? ${t.question.message}`));
    if (!interactive) {
      line(`  answer: myfinger tasks answer ${id} confirm|continue|skip|stop [--message "…"]`);
      return;
    }
    busy = busy.then(async () => {
      const k = (await prompter.question(`${QUESTION_KEYS[t.question!.kind] ?? '[c]onfirm [s]top'} > `)).trim();
      let decision = k === 'c' ? 'confirm' : k === 'k' ? 'skip' : k === 's' ? 'stop' : 'continue';
      let message: string | undefined;
      if (t.question!.kind === 'human_required' && decision === 'confirm') decision = 'continue';
      if (decision === 'continue') message = await prompter.question('message for the model > ');
      await client.post(`/v1/tasks/${seg(id)}/answer`, { decision, ...(message ? { message } : {}) });
    });
  };

  const finishIfDone = (t: TaskView, control: StreamControl, done: (code: number) => void) => {
    if (!STOP_FOLLOWING.includes(t.state) || control.done) return;
    if (out.json) out.printJsonLine({ event: 'TASK_END', task: t });
    else {
      line(`${out.c.bold(t.state)} after ${t.step} step(s) — ${tally(t.usage)}`);
      if (t.summary) line(`summary: ${t.summary}`);
      if (t.error) line(out.c.red(`${t.error.code}: ${t.error.message}`));
      if (t.state !== 'COMPLETED' && t.state !== 'STOPPED' && t.state !== 'FAILED')
        line(`continue with: myfinger run --resume ${id}`);
    }
    done(exitForState(t.state));
  };

  let resolveExit: (code: number) => void = () => undefined;
  const exit = new Promise<number>((r) => (resolveExit = r));
  const onEvent = (e: TaskEvent, control: StreamControl) => {
    if (out.json) {
      out.printJsonLine({ event: e.type, ...(e.data as Record<string, unknown>) });
      if (e.type === 'TASK_STATE' && (e.data as { kind?: string }).kind === 'state')
        void client
          .get<TaskView>(`/v1/tasks/${seg(id)}`)
          .then((t) => finishIfDone(t, control, resolveExit), control.fail);
      return;
    }
    const d = e.data as EventData;
    if (e.type === 'APPROVAL_REQUESTED') {
      const a = d.approval as ApprovalView | undefined;
      if (!a || shown.has(a.id)) return;
      shown.add(a.id);
      if (interactive) {
        busy = busy.then(async () => {
          await reviewApproval(
            { client, out, prompter, editArgs: (args) => editArgs(ctx.io.env, args, prompter, out) },
            a,
          );
        });
      } else {
        line(`  ${out.c.yellow('held')} ${a.tool_id} (${a.level}) — approve with: myfinger approve ${a.id}`);
        if (a.evaluation.preview?.text) for (const l of a.evaluation.preview.text.split('\n')) line(`    ${l}`);
      }
      return;
    }
    if (e.type === 'APPROVAL_RESOLVED') {
      line(`  ${d.approved ? out.c.green('approved') : out.c.red('rejected')}${d.reason ? `: ${d.reason}` : ''}`);
      return;
    }
    if (e.type === 'FIREWALL_VERDICT') {
      if (e.request_id) judged.add(e.request_id);
      line(`  verdict ${d.level} → ${d.action} (${d.layer})`);
      return;
    }
    switch (d.kind) {
      case 'step':
        line(out.c.bold(`── step ${d.step}${d.final ? ' (final)' : ''} ──`));
        break;
      case 'text':
        out.text(String(d.delta));
        midLine = !String(d.delta).endsWith('\n');
        break;
      case 'tool_call':
        if (d.call)
          line(
            `→ ${d.call.tool} ${JSON.stringify(d.call.args).slice(0, 200)}${d.call.intent ? ` — ${d.call.intent}` : ''}`,
          );
        break;
      case 'tool_result':
        {
          // the firewall reports plain AUTO allows only in the audit log, not as events
          const auto = d.request_id && !judged.has(d.request_id) && !d.error ? ' (AUTO)' : '';
          line(`  ← ${d.class}${auto}${d.error ? ` ${d.error.code}: ${d.error.message}` : ''}`);
          break;
        }
        break;
      case 'usage':
        if (d.step_usage && d.total) line(out.c.dim(`  tokens: step ${tally(d.step_usage)} · task ${tally(d.total)}`));
        break;
      case 'conflict':
        line(out.c.yellow(`  conflict: ${JSON.stringify(d.conflicts)}`));
        break;
      case 'state':
        void client.get<TaskView>(`/v1/tasks/${seg(id)}`).then((t) => {
          ask(t);
          finishIfDone(t, control, resolveExit);
        }, control.fail);
        break;
      default:
        break;
    }
  };

  const streamed = streamEvents(ctx, client, signal, {
    subscribe: {
      op: 'subscribe',
      types: ['TASK_STATE', 'FIREWALL_VERDICT', 'APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'],
    },
    onMessage(msg, control) {
      if (msg.type === 'subscribed') {
        void (async () => {
          const t0 = await start();
          first = t0;
          id = t0.id;
          if (!out.json) out.errLine(out.ce.dim(`task ${id} in ${t0.workspace} — Ctrl-C stops following`));
          for (const e of early.splice(0)) if (e.session_id === t0.session_id) onEvent(e, control);
          // a resumed task may already wait for a person
          const approvals = await client.get<{ approvals: ApprovalView[] }>(
            `/v1/approvals?session_id=${seg(t0.session_id)}`,
          );
          for (const a of approvals.approvals.reverse())
            onEvent({ type: 'APPROVAL_REQUESTED', data: { approval: a } }, control);
          const t = await client.get<TaskView>(`/v1/tasks/${seg(id)}`);
          ask(t);
          finishIfDone(t, control, resolveExit);
        })().catch(control.fail);
      } else if (msg.type === 'event') {
        if (!first) {
          if (early.length < 5000) early.push(msg.event);
        } else if (msg.event.session_id === first.session_id) onEvent(msg.event, control);
      } else if (msg.type === 'dropped') out.warn(`${msg.count} event(s) dropped; see myfinger tasks show ${id}`);
    },
  });
  const code = await Promise.race([streamed, exit]);
  ended.abort();
  await streamed;
  await busy.catch(() => undefined);
  return code;
}

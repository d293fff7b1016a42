import type { Command } from 'commander';

import type { FingerEvent } from '@finger/protocol';

import { seg } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { streamEvents } from '../event-stream.js';
import { EXIT } from '../exit-codes.js';
import { type Colors, summarizeData } from '../output.js';

interface TailOptions {
  type?: string;
  request?: string;
  session?: string;
  correlation?: string;
}

/** Width of the TYPE column: the longest event type name. */
const TYPE_WIDTH = 19;

/**
 * One event as a line for people: `ts TYPE target request_id data-summary`, then `@<node>` for an
 * event another node of the cluster emitted.
 */
export function formatEventLine(e: FingerEvent, c: Colors): string {
  const from = e.origin !== undefined ? c.dim(`@${e.origin}`) : '';
  return [
    c.dim(e.ts),
    c.cyan(e.type.padEnd(TYPE_WIDTH)),
    e.target || '-',
    e.request_id || '-',
    summarizeData(e.data),
    from,
  ]
    .join(' ')
    .trimEnd();
}

/** The subscribe message for the tail options (absent filters are left out). */
export function subscribeMessage(opts: TailOptions): Record<string, unknown> {
  const msg: Record<string, unknown> = { op: 'subscribe' };
  if (opts.type) {
    msg.types = opts.type
      .split(',')
      .map((t) => t.trim().toUpperCase())
      .filter(Boolean);
  }
  if (opts.request) msg.request_id = opts.request;
  if (opts.session) msg.session_id = opts.session;
  if (opts.correlation) msg.correlation_id = opts.correlation;
  return msg;
}

/**
 * Streams events from the daemon's WebSocket until interrupted. Resolves with the exit code: 0
 * on interrupt, the error's class when the daemon refuses, 3 when it cannot be reached or goes
 * away.
 */
async function tail(ctx: CommandContext, opts: TailOptions): Promise<number> {
  const client = await ctx.client();
  const out = ctx.out;
  return streamEvents(ctx, client, ctx.interrupt(), {
    subscribe: subscribeMessage(opts),
    onGarbage: (raw) => out.warn(`ignoring a message that is not JSON: ${raw.slice(0, 80)}`),
    onMessage(msg) {
      switch (msg.type) {
        case 'subscribed':
          if (!out.json) out.errLine(out.ce.dim(`subscribed ${JSON.stringify(msg.filter)} — Ctrl-C to stop`));
          break;
        case 'event':
          if (out.json) out.printJsonLine(msg.event);
          else out.line(formatEventLine(msg.event, out.c));
          break;
        case 'dropped':
          out.warn(`${msg.count} event(s) dropped: this client read too slowly`);
          break;
        default:
          break;
      }
    },
  });
}

/**
 * Prints a request's recorded path: correlation id on top, then each event numbered, with
 * `@<node>` for an event another node of the cluster emitted (as `events tail` shows it).
 */
function printReplay(ctx: CommandContext, id: string, events: FingerEvent[]): void {
  const { out } = ctx;
  const c = out.c;
  const correlations = [...new Set(events.map((e) => e.correlation_id).filter(Boolean))];
  out.line(`${c.bold('correlation_id:')} ${correlations.join(', ') || '-'}`);
  out.line(`${c.bold('request_id:')} ${id}`);
  const w = String(events.length).length;
  events.forEach((e, i) => {
    const parts = [`${String(i + 1).padStart(w)}.`, c.dim(e.ts), c.cyan(e.type.padEnd(TYPE_WIDTH)), e.target || '-'];
    if (e.request_id && e.request_id !== id) parts.push(`request=${e.request_id}`);
    parts.push(summarizeData(e.data));
    if (e.origin !== undefined) parts.push(c.dim(`@${e.origin}`));
    out.line(parts.join(' ').trimEnd());
  });
}

/** `events tail [--type A,B] [--request ID] [--session ID]` and `events replay <request_id>`. */
export function registerEvents(program: Command, state: RunState): void {
  const events = program.command('events').description("follow live events, or replay a request's path");

  events
    .command('tail')
    .description('stream events as they happen (until Ctrl-C)')
    .option('--type <types>', 'only these event types, comma-separated (e.g. DISPATCH_SENT,DISPATCH_RESULT)')
    .option('--request <id>', 'only events of this request id')
    .option('--session <id>', 'only events of this session id')
    .option('--correlation <id>', 'only events of this correlation id')
    .action(action<TailOptions>(state, (ctx, _args, opts) => tail(ctx, opts)));

  events
    .command('replay')
    .description('print the recorded path of one request, in order')
    .argument('<request_id>', 'request id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const { events: list } = await client.get<{ events: FingerEvent[] }>(`/v1/requests/${seg(id)}/events`);
        if (!list.length) throw new CliError('E_NOT_FOUND', `no events recorded for request ${id}`);
        if (ctx.out.json) ctx.out.printJson({ events: list });
        else printReplay(ctx, id, list);
        return EXIT.OK;
      }),
    );
}

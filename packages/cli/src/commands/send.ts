import type { Command } from 'commander';

import type { DispatchResult, RequestRecord } from '../api-types.js';
import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { formatResult, type Output } from '../output.js';
import { reportError } from '../render-error.js';
import { EXIT_INTERRUPTED, pause } from '../wait.js';

interface SendOptions {
  session?: string;
}

interface RequestOptions {
  wait?: boolean;
  timeout?: string;
}

/** Prints a request record and returns the exit code its status implies. */
function printRecord(out: Output, rec: RequestRecord): number {
  if (out.json) {
    out.printJson(rec);
    return rec.status === 'failed' ? exitCodeFor(rec.error?.code ?? 'E_INTERNAL') : EXIT.OK;
  }
  if (rec.status === 'running') {
    out.line(`request_id: ${rec.request_id} (running, target ${rec.target}, since ${rec.created_at})`);
    return EXIT.OK;
  }
  if (rec.status === 'failed') {
    const e = rec.error ?? { code: 'E_INTERNAL', message: 'the request failed without an error' };
    return reportError(out, new CliError(e.code, e.message, e.details !== undefined ? { details: e.details } : {}));
  }
  out.block(formatResult(rec.result));
  return EXIT.OK;
}

/**
 * `send "<text>" [--session ID]` — POST /v1/input; and `request <id> [--wait] [--timeout S]` —
 * GET /v1/requests/:id, polling until the request is done with `--wait`.
 */
export function registerSend(program: Command, state: RunState): void {
  program
    .command('send')
    .description('send text or a direct "/hub target=<id> {json}" command to the daemon')
    .argument('<text>', 'the input text, e.g. \'/hub target=echo.say {"text":"hi"}\'')
    .option('--session <id>', 'session id to send with the input')
    .action(
      action<SendOptions>(state, async (ctx, [text = ''], opts) => {
        ctx.errorContext.input = text;
        const client = await ctx.client();
        const body: { text: string; session_id?: string } = { text };
        if (opts.session) body.session_id = opts.session;
        const { status, body: res } = await client.post<DispatchResult>('/v1/input', body);
        if (ctx.out.json) {
          ctx.out.printJson(res);
        } else if (status === 202 || res.status === 'running') {
          const c = ctx.out.c;
          ctx.out.line(
            `request_id: ${c.bold(res.request_id)} (running) — fetch with: myfinger request ${res.request_id}`,
          );
        } else {
          ctx.out.block(formatResult(res.result));
        }
        return EXIT.OK;
      }),
    );

  program
    .command('request')
    .description('show a request (its result once done)')
    .argument('<id>', 'request id')
    .option('--wait', 'poll until the request is no longer running')
    .option('--timeout <seconds>', 'with --wait: give up after this many seconds (exit 6)')
    .action(
      action<RequestOptions>(state, async (ctx, [id = ''], opts) => {
        const client = await ctx.client();
        const get = (): Promise<RequestRecord> => client.get<RequestRecord>(`/v1/requests/${seg(id)}`);
        let rec = await get();
        if (opts.wait) {
          const limit = opts.timeout !== undefined ? Number(opts.timeout) : undefined;
          if (limit !== undefined && !(limit > 0))
            throw new CliError('E_USAGE', `--timeout must be a positive number of seconds, got ${opts.timeout}`);
          const deadline = limit !== undefined ? Date.now() + limit * 1000 : Infinity;
          const signal = ctx.interrupt();
          while (rec.status === 'running') {
            if (Date.now() >= deadline) {
              throw new CliError('E_TIMEOUT', `request ${id} is still running after ${limit}s`, {
                notes: [`fetch it later with: myfinger request ${id}`],
              });
            }
            if (!(await pause(ctx.io.pollIntervalMs, signal))) {
              ctx.out.errLine(`interrupted; request ${id} is still running (myfinger request ${id})`);
              return EXIT_INTERRUPTED;
            }
            rec = await get();
          }
        }
        return printRecord(ctx.out, rec);
      }),
    );
}

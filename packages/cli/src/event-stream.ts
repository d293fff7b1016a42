import type { EventStreamMessage } from './api-types.js';
import type { DaemonClient } from './client.js';
import type { CommandContext } from './context.js';
import { ApiError, CliError, DaemonNotRunningError, type ErrorBody } from './errors.js';
import { EXIT } from './exit-codes.js';
import { reportError } from './render-error.js';

/** What a message handler may do to the stream. */
export interface StreamControl {
  /** Ends the stream with the error's exit class (printed). */
  fail(err: unknown): void;
  /** True once the stream has ended. */
  readonly done: boolean;
}

/** What a command following `/v1/events` supplies. */
export interface EventStreamHandlers {
  /** The subscribe message, sent once the daemon says `ready`. */
  subscribe: Record<string, unknown>;
  /** Every other message (`subscribed`, `event`, `dropped`, …); `error` messages end the stream. */
  onMessage(msg: EventStreamMessage, control: StreamControl): void;
  /** A message that is not JSON (default: ignored). */
  onGarbage?(raw: string): void;
}

/** The error of a refused WebSocket upgrade: the daemon's JSON error, else one from the status. */
export function upgradeError(status: number | undefined, text: string): ApiError {
  let body: ErrorBody = {
    code: status === 401 ? 'E_UNAUTHENTICATED' : status === 403 ? 'E_FORBIDDEN' : 'E_INTERNAL',
    message: `WebSocket upgrade refused: HTTP ${status}`,
  };
  try {
    const parsed = JSON.parse(text) as { error?: ErrorBody };
    if (parsed.error && typeof parsed.error.code === 'string') body = parsed.error;
  } catch {
    /* not JSON: keep the status-derived error */
  }
  return new ApiError(status ?? 500, body);
}

/**
 * Follows the daemon's `/v1/events` WebSocket until interrupted (`signal`). Resolves with the exit
 * code: 0 on interrupt, the error's class when the daemon refuses (upgrade refused, 4401, an
 * `error` message), 3 when it cannot be reached or goes away (1001/1006), 1 on other closes.
 */
export function streamEvents(
  ctx: CommandContext,
  client: DaemonClient,
  signal: AbortSignal,
  h: EventStreamHandlers,
): Promise<number> {
  const out = ctx.out;
  const headers: Record<string, string> = client.token ? { authorization: `Bearer ${client.token}` } : {};
  const subscribe = JSON.stringify(h.subscribe);
  // ws is imported here, not at the top: commands that never stream do not load it (start-up time)
  return import('ws').then(
    ({ default: WebSocket }) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(client.wsUrl('/v1/events'), { headers });
        let done = false;
        let opened = false;
        const finish = (code: number): void => {
          if (done) return;
          done = true;
          signal.removeEventListener('abort', onAbort);
          if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
          resolve(code);
        };
        const fail = (err: unknown): void => {
          if (!done) finish(reportError(out, err, ctx.errorContext));
        };
        const control: StreamControl = {
          fail,
          get done() {
            return done;
          },
        };
        const onAbort = (): void => finish(EXIT.OK);
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) return finish(EXIT.OK);

        ws.on('open', () => {
          opened = true;
        });
        ws.on('unexpected-response', (_req, res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => fail(upgradeError(res.statusCode, text)));
        });
        ws.on('message', (raw) => {
          let msg: EventStreamMessage;
          try {
            msg = JSON.parse(String(raw)) as EventStreamMessage;
          } catch {
            h.onGarbage?.(String(raw));
            return;
          }
          if (msg.type === 'ready') ws.send(subscribe);
          else if (msg.type === 'error') fail(new ApiError(0, msg.error));
          else h.onMessage(msg, control);
        });
        ws.on('error', (err) => {
          if (!opened) fail(new DaemonNotRunningError(client.url));
          else fail(new CliError('E_INTERNAL', `event stream failed: ${err.message}`));
        });
        ws.on('close', (code) => {
          if (done) return;
          if (code === 4401)
            return fail(new ApiError(401, { code: 'E_UNAUTHENTICATED', message: 'the daemon refused the token' }));
          out.errLine(`the daemon closed the event stream (code ${code})`);
          finish(code === 1001 || code === 1006 ? EXIT.NOT_RUNNING : EXIT.GENERIC);
        });
      }),
  );
}

import type { DispatchParams, EventCorrelation, Logger, MessageHub } from '@finger/hub';
import {
  type ErrorInfo,
  FingerError,
  type HubCommand,
  isHubCommand,
  parseHubCommand,
  type Principal,
  toErrorInfo,
  ulid,
} from '@finger/protocol';

/** Body of `POST /v1/input`. */
export interface InputParams {
  text: string;
  session_id?: string;
}

/** Body of `POST /v1/messages`. Only these fields are read: a `source` in the body is not (the principal is the source). */
export interface MessageParams {
  target: string;
  payload?: unknown;
  blocking?: boolean;
  timeout_ms?: number;
  request_id?: string;
  session_id?: string;
  correlation_id?: string;
  workflow_id?: string;
}

/** What `POST /v1/tools/:id/run` (and the backups/undo routes) hand the gateway. */
export interface ToolRunParams {
  /** Canonical tool id `<module>.<tool>`. */
  tool: string;
  args: Record<string, unknown>;
  timeout_ms?: number;
  request_id?: string;
}

/** What a dispatch answers: 200 with the result (blocking) or 202 while it runs. */
export interface DispatchResult {
  status: 200 | 202;
  body: {
    request_id: string;
    correlation_id: string;
    status: 'succeeded' | 'running';
    target: string;
    result?: unknown;
    /** Text routed by the supervisor: its decision (without the reply, which is `result`). */
    route?: Record<string, unknown>;
  };
}

/** Called as soon as a request's ids are known (the HTTP layer puts them in response headers). */
export type IdsListener = (ids: { request_id: string; correlation_id: string }) => void;

/** Options of {@link InputGateway}. */
export interface InputGatewayOptions {
  hub: MessageHub;
  logger?: Logger;
  /** Hub target ordinary (non-`/hub`) text goes to: the ingress supervisor. Without it such text is refused. */
  supervisor?: string;
  /** Timeout of one routed input (model answers, re-asks and the dispatch); default the hub's. */
  route_timeout_ms?: number;
}

/** What the supervisor answers (IngressSupervisorAgent's RouteReply, as far as the gateway reads it). */
interface RoutedReply {
  decision: string;
  target: string | null;
  reply: unknown;
}

const MAX_EVENT_TEXT = 1000;

/**
 * The entry gateway (§3.5) behind `POST /v1/input` and `POST /v1/messages`. It parses `/hub`
 * commands, dispatches through the hub with the principal from the token (never from the body)
 * and emits INPUT_RECEIVED, MODE_PARSED, DISPATCH_SENT and DISPATCH_RESULT, all with one
 * correlation id. Request and correlation ids are made up front so every event carries them
 * and `GET /v1/requests/:id` finds blocking calls too (the hub tracks calls given a request id).
 * An id made here is marked `generated_id`: it cannot be a duplicate, so a blocking call with it
 * runs while Redis is unreachable; a caller's id and every non-blocking dispatch then fail with
 * E_STORE_UNAVAILABLE.
 */
export class InputGateway {
  private readonly hub: MessageHub;
  private readonly supervisor: string | undefined;
  private readonly routeTimeout: number | undefined;
  private closed: FingerError | undefined;
  private readonly waiting = new Set<(e: FingerError) => void>();

  constructor(options: InputGatewayOptions) {
    this.hub = options.hub;
    this.supervisor = options.supervisor;
    this.routeTimeout = options.route_timeout_ms;
  }

  /**
   * Stops waiting: every blocking call still awaited rejects with E_PROVIDER_CLOSED (so its HTTP
   * request is answered), and new input is refused. Called by the daemon after the hub's drain.
   */
  close(message = 'the daemon is shutting down'): void {
    if (this.closed) return;
    this.closed = new FingerError('E_PROVIDER_CLOSED', message);
    for (const reject of this.waiting) reject(this.closed);
    this.waiting.clear();
  }

  /**
   * The answer `onValue` or `onError` make of `p`'s outcome — or `onError(E_PROVIDER_CLOSED)` when
   * the gateway closes first (`p`'s later outcome is then ignored, and handled). One promise per
   * call, the outcome's handler run in it: no race, no stop promise, no finally, no second promise
   * to map the outcome. A handler that throws rejects it.
   */
  private wait<T, R>(p: Promise<T>, onValue: (v: T) => R, onError: (e: unknown) => R): Promise<R> {
    if (this.closed) return Promise.reject(this.closed);
    const waiting = this.waiting;
    return new Promise<R>((resolve, reject) => {
      const stop = (e: unknown): void => {
        try {
          resolve(onError(e));
        } catch (x) {
          reject(x);
        }
      };
      waiting.add(stop);
      p.then(
        (v) => {
          // false once close() answered it
          if (!waiting.delete(stop)) return;
          try {
            resolve(onValue(v));
          } catch (x) {
            reject(x);
          }
        },
        (e: unknown) => {
          if (waiting.delete(stop)) stop(e);
        },
      );
    });
  }

  /**
   * Handles text input. `/hub …` is a direct dispatch (`direct: true` for human principals);
   * bad syntax rejects with E_BAD_HUB_SYNTAX (details `{position, expected, found}`); any other
   * text goes to the supervisor (see {@link InputGateway.route}), or rejects with E_ROUTE_FAILED
   * when none is configured.
   */
  input(principal: Principal, params: InputParams, onIds?: IdsListener): Promise<DispatchResult> {
    // not an async function: one returning run()'s promise would add a promise and two
    // microtask hops per call to adopt it; a throw still becomes the rejection
    try {
      return this.inputNow(principal, params, onIds);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** {@link input}'s work: throws what the call is refused with before it is dispatched. */
  private inputNow(principal: Principal, params: InputParams, onIds?: IdsListener): Promise<DispatchResult> {
    const correlation_id = ulid();
    const request_id = ulid();
    onIds?.({ request_id, correlation_id });
    const corr: EventCorrelation = { request_id, correlation_id };
    if (params.session_id !== undefined) corr.session_id = params.session_id;
    const events = this.hub.events;
    const text = params.text;
    events.emit('INPUT_RECEIVED', corr, { text: text.length > MAX_EVENT_TEXT ? text.slice(0, MAX_EVENT_TEXT) : text });
    if (!isHubCommand(text)) {
      events.emit('MODE_PARSED', corr, { mode: 'text' });
      if (this.supervisor !== undefined) return this.route(principal, text, corr);
      const err = new FingerError('E_ROUTE_FAILED', 'no router configured: only /hub commands can be dispatched', {
        mode: 'text',
      });
      events.emit('ROUTE_FAILED', corr, { error: err.toJSON() });
      throw err;
    }
    let command: HubCommand;
    try {
      command = parseHubCommand(text);
    } catch (e) {
      events.emit('MODE_PARSED', corr, { mode: 'hub', error: toErrorInfo(e) });
      throw e;
    }
    events.emit('MODE_PARSED', corr, { mode: 'hub' });
    const dispatch: DispatchParams = {
      target: command.target,
      payload: command.payload,
      source: principal,
      request_id,
      generated_id: true,
      correlation_id,
      direct: principal.kind === 'human',
    };
    if (params.session_id !== undefined) dispatch.session_id = params.session_id;
    if (command.timeout_ms !== undefined) dispatch.timeout_ms = command.timeout_ms;
    return this.run(dispatch, command.blocking);
  }

  /** Handles a programmatic dispatch (`POST /v1/messages`); never `direct`. */
  message(principal: Principal, params: MessageParams, onIds?: IdsListener): Promise<DispatchResult> {
    try {
      return this.messageNow(principal, params, onIds);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** {@link message}'s work (see {@link input} for why it is apart). */
  private messageNow(principal: Principal, params: MessageParams, onIds?: IdsListener): Promise<DispatchResult> {
    const correlation_id = params.correlation_id ?? ulid();
    const request_id = params.request_id ?? ulid();
    onIds?.({ request_id, correlation_id });
    const dispatch: DispatchParams = {
      target: params.target,
      payload: params.payload ?? {},
      source: principal,
      request_id,
      correlation_id,
    };
    if (params.request_id === undefined) dispatch.generated_id = true;
    if (params.session_id !== undefined) dispatch.session_id = params.session_id;
    if (params.workflow_id !== undefined) dispatch.workflow_id = params.workflow_id;
    if (params.timeout_ms !== undefined) dispatch.timeout_ms = params.timeout_ms;
    return this.run(dispatch, params.blocking ?? true);
  }

  /**
   * Runs one tool, blocking (`POST /v1/tools/:id/run`). Like a `/hub` command it is `direct` for
   * human principals (the firewall skips CONFIRM/APPROVE for them, never deny or grants); agents
   * go through their role grants. A caller `request_id` makes the call idempotent.
   */
  tool(principal: Principal, params: ToolRunParams, onIds?: IdsListener): Promise<DispatchResult> {
    try {
      return this.toolNow(principal, params, onIds);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** {@link tool}'s work (see {@link input} for why it is apart). */
  private toolNow(principal: Principal, params: ToolRunParams, onIds?: IdsListener): Promise<DispatchResult> {
    const correlation_id = ulid();
    const request_id = params.request_id ?? ulid();
    onIds?.({ request_id, correlation_id });
    const dispatch: DispatchParams = {
      target: params.tool,
      payload: params.args,
      source: principal,
      request_id,
      correlation_id,
      direct: principal.kind === 'human',
    };
    if (params.request_id === undefined) dispatch.generated_id = true;
    if (params.timeout_ms !== undefined) dispatch.timeout_ms = params.timeout_ms;
    return this.run(dispatch, true);
  }

  /**
   * Routes text through the supervisor: a blocking hub call as the caller (`direct` for humans:
   * handing text to the router is the person's own act; what the router then dispatches is an
   * agent call the firewall judges in full). The result is the routed target's reply, with the
   * decision under `route`. Rejects with the supervisor's error (E_ROUTE_FAILED on reject, the
   * dispatched target's code when it failed, E_LLM_UNAVAILABLE when the model is down).
   */
  private async route(principal: Principal, text: string, corr: EventCorrelation): Promise<DispatchResult> {
    if (this.closed) throw this.closed;
    const p: DispatchParams = {
      target: this.supervisor!,
      payload: { text },
      source: principal,
      request_id: corr.request_id!,
      generated_id: true,
      correlation_id: corr.correlation_id!,
      direct: principal.kind === 'human',
    };
    if (corr.session_id !== undefined) p.session_id = corr.session_id;
    if (this.routeTimeout !== undefined) p.timeout_ms = this.routeTimeout;
    const out = await this.wait(
      this.hub.request(p),
      (v) => v as RoutedReply,
      (e: unknown): never => {
        throw e;
      },
    );
    const { reply, ...route } = out;
    return {
      status: 200,
      body: {
        request_id: p.request_id!,
        correlation_id: p.correlation_id!,
        status: 'succeeded',
        target: out.target ?? this.hub.resolveTarget(this.supervisor!).tool_id,
        result: reply,
        route,
      },
    };
  }

  /**
   * Emits DISPATCH_SENT, runs the call and emits DISPATCH_RESULT when it ends. Not an async
   * function (no frame and no extra promise per call): called only as `return this.run(…)` from
   * the entry points, whose try/catch turns anything thrown here into their rejection.
   */
  private run(p: DispatchParams, blocking: boolean): Promise<DispatchResult> {
    if (this.closed) throw this.closed;
    const events = this.hub.events;
    const request_id = p.request_id!;
    const correlation_id = p.correlation_id!;
    let target = p.target;
    let resolveError: unknown;
    try {
      target = this.hub.resolveTarget(p.target).tool_id;
    } catch (e) {
      resolveError = e;
    }
    const corr: EventCorrelation = { request_id, correlation_id, target };
    if (p.session_id !== undefined) corr.session_id = p.session_id;
    if (p.workflow_id !== undefined) corr.workflow_id = p.workflow_id;
    events.emit('DISPATCH_SENT', corr, { target, blocking });
    const done = (error?: ErrorInfo) =>
      events.emit('DISPATCH_RESULT', corr, error ? { ok: false, error } : { ok: true });
    const failed = (e: unknown): never => {
      done(toErrorInfo(e));
      throw e;
    };
    if (resolveError !== undefined) failed(resolveError);
    // the hub's request() may refuse at once (a throw, not a rejection): DISPATCH_RESULT all the same
    let call: Promise<unknown>;
    try {
      call = blocking ? this.hub.request(p) : this.hub.dispatch(p);
    } catch (e) {
      return failed(e);
    }
    if (blocking)
      return this.wait(
        call,
        (result): DispatchResult => {
          done();
          return { status: 200, body: { request_id, correlation_id, status: 'succeeded', target, result } };
        },
        failed,
      );
    return (call as ReturnType<MessageHub['dispatch']>).then((ids): DispatchResult => {
      // The hub's dispatch keeps the outcome for getRequest; joining the same request id gives us
      // the completion to emit DISPATCH_RESULT (a hub `done` promise is used when it offers one).
      const completion = ids.done ?? this.hub.request(p);
      completion.then(
        () => done(),
        (e: unknown) => done(toErrorInfo(e)),
      );
      return {
        status: 202,
        body: { request_id: ids.request_id, correlation_id: ids.correlation_id, status: 'running', target },
      };
    }, failed);
  }
}

import type { Envelope, ErrorInfo, Principal } from '@finger/protocol';
import { FingerError, rfc3339, toErrorInfo, ulid } from '@finger/protocol';

import type { ModuleRuntime } from '../runtime/runtime.js';
import type { DirectSink } from '../transport/reply-sink.js';
import type { DirectHandler, ServerChannel } from '../transport/transport.js';
import { CallContext, type NestedCaller } from './call-context.js';

function reply(req: Envelope, source: Principal, payload: unknown, error?: ErrorInfo): Envelope {
  const now = Date.now();
  const env: Envelope = {
    id: ulid(now),
    kind: 'reply',
    request_id: req.request_id,
    correlation_id: req.correlation_id,
    session_id: req.session_id,
    workflow_id: req.workflow_id,
    source,
    target: req.target,
    blocking: req.blocking,
    timestamp: rfc3339(now),
    deadline: req.deadline,
    execution_chain: req.execution_chain,
    nesting_depth: req.nesting_depth,
    payload,
  };
  if (error !== undefined) env.error = error;
  return env;
}

/** Answers of tools that answered at once, waiting for {@link giveAnswers}: `[sink, payload, error]` per answer. */
const answers: unknown[] = [];
const SETTLED = Promise.resolve();
let answersQueued = 0;

/** Gives `sink` its answer from a microtask (never from inside the call that sent the request), one microtask for every answer of a turn. */
function answerSoon(sink: DirectSink, payload: unknown, error: ErrorInfo | undefined): void {
  // a reaction of a settled promise (node's queueMicrotask makes an AsyncResource and a bound function per task)
  if (answersQueued === 0) void SETTLED.then(giveAnswers);
  const at = answersQueued++ * 3;
  answers[at] = sink;
  answers[at + 1] = payload;
  answers[at + 2] = error;
}

function giveAnswers(): void {
  // answers queued meanwhile (a queued call that an ended one let start) are given in this pass too
  for (let i = 0; i < answersQueued; i++) {
    const at = i * 3;
    const sink = answers[at] as DirectSink;
    const payload = answers[at + 1];
    const error = answers[at + 2] as ErrorInfo | undefined;
    answers[at] = answers[at + 1] = answers[at + 2] = undefined;
    try {
      sink.onAnswer(payload, error);
    } catch (e) {
      // the others still get theirs; the throw surfaces on its own, as an uncaught error
      queueMicrotask(() => {
        throw e;
      });
    }
  }
  answersQueued = 0;
}

/**
 * The serving side of a module: turns request envelopes into runtime calls and results into
 * reply envelopes (never rejects). Used by the in-process registry and by `module serve`.
 */
export function createModuleHandler(module_id: string, runtime: ModuleRuntime, nested: NestedCaller): DirectHandler {
  const prefix = module_id.length + 1;
  const source: Principal = Object.freeze({
    kind: 'module',
    id: module_id,
    roles: Object.freeze([]) as unknown as string[],
  });
  // target → tool name: one string per target instead of a slice per call (and its hash, for the
  // runtime's tool map, computed once); bounded, since a served module's targets come from callers
  const tools = new Map<string, string>();
  const toolOf = (target: string): string => {
    let tool = tools.get(target);
    if (tool === undefined) {
      tool = target.slice(prefix);
      if (tools.size < 1024) tools.set(target, tool);
    }
    return tool;
  };
  const handler: DirectHandler = (req: Envelope, channel: ServerChannel): Promise<Envelope> => {
    const ctx = new CallContext(req, channel, module_id, nested, runtime);
    channel.onCancel(ctx);
    let pending: Promise<unknown>;
    try {
      pending = runtime.invoke(toolOf(req.target), req.payload, ctx);
    } catch (e) {
      return Promise.resolve(reply(req, source, null, toErrorInfo(e)));
    }
    return pending.then(
      (result) => reply(req, source, result === undefined ? null : result),
      (e: unknown) => reply(req, source, null, toErrorInfo(e)),
    );
  };
  // the same outcomes as the reply envelope's payload and error, handed over without one (in-process callers)
  handler.direct = (req: Envelope, channel: ServerChannel, sink: DirectSink): void => {
    const ctx = new CallContext(req, channel, module_id, nested, runtime);
    channel.onCancel(ctx);
    const tool = toolOf(req.target);
    let pending: unknown;
    try {
      pending =
        runtime.invokeNow !== undefined
          ? runtime.invokeNow(tool, req.payload, ctx)
          : runtime.invoke(tool, req.payload, ctx);
    } catch (e) {
      return answerSoon(sink, null, toErrorInfo(e));
    }
    // a tool that answered at once: given with the others of this turn, from one microtask
    if (!(pending instanceof Promise)) return answerSoon(sink, pending === undefined ? null : pending, undefined);
    pending.then(
      (result) => sink.onAnswer(result === undefined ? null : result, undefined),
      (e: unknown) => sink.onAnswer(null, toErrorInfo(e)),
    );
  };
  return handler;
}

/** Fails fast for a tool the module does not have. */
export function unknownTool(module_id: string, tool: string): FingerError {
  return new FingerError('E_NO_TARGET', `module "${module_id}" has no tool "${tool}"`, { module: module_id, tool });
}

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
  const handler: DirectHandler = (req: Envelope, channel: ServerChannel): Promise<Envelope> => {
    const ctx = new CallContext(req, channel, module_id, nested, runtime);
    channel.onCancel(ctx);
    let pending: Promise<unknown>;
    try {
      pending = runtime.invoke(req.target.slice(prefix), req.payload, ctx);
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
    let pending: Promise<unknown>;
    try {
      pending = runtime.invoke(req.target.slice(prefix), req.payload, ctx);
    } catch (e) {
      pending = Promise.reject(e); // answered from a microtask, as the envelope path answers
    }
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

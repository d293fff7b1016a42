import type { Envelope, ErrorInfo } from '@finger/protocol';
import { FingerError, rfc3339, toErrorInfo, ulid } from '@finger/protocol';

import type { ModuleRuntime } from '../runtime/runtime.js';
import type { ServerChannel, TransportHandler } from '../transport/transport.js';
import { CallContext, type NestedCaller } from './call-context.js';

function reply(req: Envelope, module_id: string, payload: unknown, error?: ErrorInfo): Envelope {
  const env: Envelope = {
    id: ulid(),
    kind: 'reply',
    request_id: req.request_id,
    correlation_id: req.correlation_id,
    session_id: req.session_id,
    workflow_id: req.workflow_id,
    source: { kind: 'module', id: module_id, roles: [] },
    target: req.target,
    blocking: req.blocking,
    timestamp: rfc3339(),
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
export function createModuleHandler(module_id: string, runtime: ModuleRuntime, nested: NestedCaller): TransportHandler {
  const prefix = module_id.length + 1;
  return async (req: Envelope, channel: ServerChannel): Promise<Envelope> => {
    const tool = req.target.slice(prefix);
    const ctx = new CallContext(req, channel, module_id, nested);
    channel.onCancel((reason) => {
      ctx.abort(reason);
      runtime.cancel(req.id, reason);
    });
    try {
      const result = await runtime.invoke(tool, req.payload, ctx);
      return reply(req, module_id, result === undefined ? null : result);
    } catch (e) {
      return reply(req, module_id, null, toErrorInfo(e));
    }
  };
}

/** Fails fast for a tool the module does not have. */
export function unknownTool(module_id: string, tool: string): FingerError {
  return new FingerError('E_NO_TARGET', `module "${module_id}" has no tool "${tool}"`, { module: module_id, tool });
}

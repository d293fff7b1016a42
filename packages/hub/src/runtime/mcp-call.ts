import { FingerError, toErrorInfo } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { McpConnection } from './mcp-connect.js';
import { mapMcpError, textOf } from './mcp-errors.js';
import type { ToolCallContext } from './runtime.js';

/** One MCP call in flight: aborting its controller cancels it at the server too. */
export interface McpInflight {
  controller: AbortController;
  /** Why cancel() was called, once it was. */
  cancelled?: string;
}

/** What one `tools/call` needs from the MCP runtime. */
export interface McpCallOptions {
  /** Module id (the server name). */
  id: string;
  conn: McpConnection;
  /** The runtime's calls in flight by call id; the call is in it while it runs. */
  inflight: Map<string, McpInflight>;
  clock: Clock;
  /** Lease extension granted per progress notification. */
  leaseMs: number;
  log: Logger;
  /** A streamable-HTTP server (its transport errors read differently). */
  http: boolean;
  /** True once the runtime was closed. */
  closed(): boolean;
}

/**
 * One `tools/call` over an open connection. Resolves `{content, structuredContent?}`; rejects
 * E_INVALID_ARGS (arguments not an object), E_TIMEOUT (deadline passed), E_MODULE_ERROR (an
 * `isError` result), E_INTERNAL (call id already in flight), or what mapMcpError makes of an
 * SDK error (cancelled, closed, crashed). Progress notifications extend the lease and reach the caller.
 */
export async function callMcpTool(
  o: McpCallOptions,
  tool: string,
  args: unknown,
  ctx: ToolCallContext,
): Promise<unknown> {
  const input = args === undefined || args === null ? {} : args;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new FingerError('E_INVALID_ARGS', `MCP tool arguments must be an object`, {
      issues: [{ path: '$', message: 'must be object' }],
    });
  }
  const remaining = ctx.deadline - o.clock.now();
  if (!(remaining > 0)) throw new FingerError('E_TIMEOUT', `call to "${o.id}.${tool}" passed its deadline`);
  if (o.inflight.has(ctx.call_id)) {
    throw new FingerError('E_INTERNAL', `call id ${ctx.call_id} is already in flight on "${o.id}"`);
  }
  const f: McpInflight = { controller: new AbortController() };
  o.inflight.set(ctx.call_id, f);
  try {
    const r = await o.conn.client.callTool(
      { name: tool, arguments: input as Record<string, unknown> },
      {
        signal: f.controller.signal,
        timeout: remaining,
        onprogress: (p) => {
          try {
            ctx.extendLease(o.leaseMs);
            const fraction = typeof p.total === 'number' && p.total > 0 ? Math.min(1, p.progress / p.total) : undefined;
            const message = p.message ?? (p.total !== undefined ? `${p.progress}/${p.total}` : String(p.progress));
            ctx.progress(message, fraction);
          } catch (e) {
            o.log.error({ err: toErrorInfo(e).message }, 'progress callback threw');
          }
        },
      },
    );
    if (r.isError === true) {
      const text = textOf(r.content);
      throw new FingerError('E_MODULE_ERROR', `MCP tool "${o.id}.${tool}" failed: ${text || 'no message'}`, {
        tool: `${o.id}.${tool}`,
        content: r.content,
      });
    }
    const out: Record<string, unknown> = { content: Array.isArray(r.content) ? r.content : [] };
    if (r.structuredContent !== undefined) out.structuredContent = r.structuredContent;
    return out;
  } catch (e) {
    if (e instanceof FingerError) throw e;
    throw mapMcpError(e, {
      tool: `${o.id}.${tool}`,
      cancelled: f.cancelled,
      closed: o.closed() || o.conn.closedByUs,
      crashed: o.conn.dead,
      http: o.http,
    });
  } finally {
    o.inflight.delete(ctx.call_id);
  }
}

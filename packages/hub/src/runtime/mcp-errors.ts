import { FingerError, isErrorCode } from '@finger/protocol';

/** What the runtime knew about a failed call when its error arrived. */
export interface McpCallState {
  /** Tool id `mcp.<server>.<tool>`. */
  tool: string;
  /** Reason given to cancel(), when the hub cancelled the call. */
  cancelled: string | undefined;
  /** close() was called (or the connection was replaced on purpose). */
  closed: boolean;
  /** The connection died without us closing it. */
  crashed: boolean;
  http: boolean;
}

/** Concatenated text blocks of an MCP content array (tool error messages). */
export function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const c of content) {
    const block = c as { type?: unknown; text?: unknown };
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text);
  }
  const text = parts.join('\n');
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

/**
 * Maps an MCP client failure to a FingerError. SDK errors carry string codes
 * (`REQUEST_TIMEOUT`, `CONNECTION_CLOSED`, `NOT_CONNECTED`, …), JSON-RPC errors from the server
 * numeric ones (-32602 invalid params → E_INVALID_ARGS); the call's state decides between a
 * cancel, a close and a crash, whatever the SDK says.
 */
export function mapMcpError(e: unknown, s: McpCallState): FingerError {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (s.cancelled !== undefined) {
    const c = isErrorCode(s.cancelled) ? s.cancelled : 'E_TIMEOUT';
    return new FingerError(c, `call to "${s.tool}" was cancelled (${s.cancelled}); cancellation sent to the server`, {
      tool: s.tool,
      cancelled: s.cancelled,
    });
  }
  if (s.closed) return new FingerError('E_PROVIDER_CLOSED', `MCP server of "${s.tool}" was closed`, { tool: s.tool });
  if (s.crashed || code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED' || message === 'Not connected') {
    return new FingerError('E_MODULE_CRASHED', `MCP server of "${s.tool}" went away during the call: ${message}`, {
      tool: s.tool,
    });
  }
  if (code === 'REQUEST_TIMEOUT') {
    return new FingerError('E_TIMEOUT', `call to "${s.tool}" timed out; cancellation sent to the server`, {
      tool: s.tool,
    });
  }
  if (typeof code === 'number') {
    const details = { tool: s.tool, mcp_code: code };
    if (code === -32602) {
      return new FingerError('E_INVALID_ARGS', `"${s.tool}" refused its arguments: ${message}`, {
        ...details,
        issues: [{ path: '$', message }],
      });
    }
    return new FingerError('E_MODULE_ERROR', `MCP server error from "${s.tool}": ${message}`, details);
  }
  if (s.http && typeof code !== 'string') {
    return new FingerError('E_MODULE_UNHEALTHY', `MCP server of "${s.tool}" is unreachable: ${message}`, {
      tool: s.tool,
    });
  }
  return new FingerError('E_MODULE_ERROR', `MCP call "${s.tool}" failed: ${message}`, {
    tool: s.tool,
    ...(typeof code === 'string' ? { sdk_code: code } : {}),
  });
}
